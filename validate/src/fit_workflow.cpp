#include "moetwin/validate/fit_workflow.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/version.hpp"
#include "moetwin/validate/default_parameters.hpp"
#include "moetwin/validate/fit.hpp"
#include "moetwin/validate/novelty_bands.hpp"

namespace moetwin {

namespace {

template <typename F, typename... Args>
void notify(const F& f, Args&&... args) {
  if (f) f(std::forward<Args>(args)...);
}

// "round 2/4", "fold 3/9": a stage's step.
std::string step_text(const char* what, int k, std::size_t n) {
  return concat({what, " ", std::to_string(k), "/", std::to_string(n)});
}

std::size_t campaign_count(const std::vector<LiveRun>& runs) {
  std::vector<std::string> c;
  for (const LiveRun& r : runs) c.push_back(r.campaign);
  std::sort(c.begin(), c.end());
  return static_cast<std::size_t>(std::unique(c.begin(), c.end()) - c.begin());
}

}  // namespace

void check_fit_parameters(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    if (find_free_parameter(k) != nullptr) continue;
    std::string allowed;
    for (const FreeParameter& fp : free_parameters()) allowed += (allowed.empty() ? "" : ", ") + fp.key;
    throw InputError({"", 0}, "--params", k,
                     "one of " + allowed +
                         " or <dispatcher>.a2a_time_scale / "
                         "<dispatcher>.a2a_latency_s / <dispatcher>.a2a_per_copy_s / "
                         "<dispatcher>.a2a_fill_tokens / <dispatcher>.a2a_node_latency_s / "
                         "<dispatcher>.a2a_remote_token_s");
  }
}

FitWorkflowResult fit_profile(const std::vector<LiveRun>& runs, const FittedProfile& start,
                              const FitWorkflowOptions& options, const RowPredictor& predict,
                              const FitObserver& observer) {
  FitWorkflowResult result;
  FittedProfile& profile = result.profile;
  profile = start;
  std::vector<double> measured;
  std::vector<std::string> campaign_of;
  for (const LiveRun& r : runs) {
    measured.push_back(r.iter_s);
    campaign_of.push_back(r.campaign);
  }
  const std::vector<std::size_t> every = all_rows(runs.size());
  const RowTimes timed = [&](const SimProfile& sim, const std::vector<std::size_t>& which) {
    FittedProfile p = profile;
    p.sim = sim;
    std::vector<double> t;
    for (const RowPrediction& r : predict(which, p)) t.push_back(r.ok ? r.iteration_s : 0);
    notify(observer.replayed);
    return t;
  };

  FitOptions fo;
  fo.outer_iterations = options.outer_iterations;
  fo.refine_outer = options.cv_refine;
  fo.huber_delta = options.huber;
  const bool default_keys = options.parameters.empty();
  std::vector<std::string> keys =
      default_keys ? default_fit_parameters(runs, TimeShares{}) : options.parameters;
  check_fit_parameters(keys);
  int round = 1;
  int fold = 0;
  const std::size_t folds = campaign_count(runs);  // one per campaign
  const std::size_t rounds = static_cast<std::size_t>(fo.outer_iterations);
  fo.progress = [&](const std::string& line) {
    notify(observer.fit_line, line);
    if (line.rfind("round ", 0) == 0 && round < fo.outer_iterations) {
      notify(observer.step, step_text("round", ++round, rounds));
    } else if (line.rfind("fold ", 0) == 0 && static_cast<std::size_t>(fold + 1) < folds) {
      ++fold;
      notify(observer.step, step_text("fold", fold + 1, folds));
    }
  };
  SimProfile from = profile.sim;
  if (!profile.fitted) {
    for (const std::string& k : keys) {
      const FreeParameter* fp = find_free_parameter(k);
      if (fp->fit_start > 0) set_free_parameter(from, k, fp->fit_start);
    }
  }
  const auto run_fit = [&](const SimProfile& at) {
    fo.parameters = keys;
    notify(observer.message, concat({"fitting ", std::to_string(keys.size()), " parameters on ",
                                     std::to_string(runs.size()), " rows"}));
    // Replays: the start and one per parameter (the linear model), then per round up to three candidates
    // and the model again; the estimate counts one candidate per round.
    const std::size_t per_model = keys.size() + 1;
    round = 1;
    notify(observer.stage_begin, std::string("validate --fit"), per_model * (rounds + 1),
           step_text("round", 1, rounds));
    FitResult r = fit_parameters(measured, every, at, fo, timed);
    notify(observer.stage_end);
    return r;
  };
  FitResult fit = run_fit(from);
  int replays = fit.replays;
  if (default_keys) {
    FittedProfile at_fit = profile;
    at_fit.sim = fit.profile;
    const TimeShares shares = median_time_shares(predict(every, at_fit));
    notify(observer.message,
           concat({"time shares at the fit: compute ", format_fixed(100 * shares.compute, 1),
                   "%, exposed TP/PP/DP collectives ", format_fixed(100 * shares.collectives, 1),
                   "% of the median row's iteration (a scale is fitted from ",
                   format_fixed(100 * kMinIdentifiableShare, 0), "%)"}));
    const std::vector<std::string> wider = default_fit_parameters(runs, shares);
    if (wider != keys) {
      keys = wider;
      const double start_loss = fit.start_loss;
      fit = run_fit(fit.profile);
      fit.start_loss = start_loss;
      replays += fit.replays;
    }
  }
  profile.sim = fit.profile;
  set_generic_a2a_from_dispatchers(profile.sim);
  profile.fitted = true;
  profile.fitted_keys = keys;
  profile.fitted_at = options.fitted_at;
  profile.fitted_on = options.fitted_on;
  profile.coverage = FitCoverage{};
  for (const LiveRun& r : runs) profile.coverage.add(r.scenario, r.campaign);
  profile.git_revision = kGitRevision;
  profile.path = options.path;
  profile.in_sample = residual_summary(row_errors(runs, fit.predicted_s).all);
  profile.in_sample_margin =
      margin_residual_summary(rank_cells(runs, fit.predicted_s), runs, fit.predicted_s);
  profile.cross_validated = {};
  profile.campaign_band = {};
  profile.novelty_bands = {};
  profile.cv_scheme = "none";
  const bool huber = options.huber > 0;
  profile.fit_objective =
      huber ? concat({"huber ", format_exact(options.huber)}) : std::string("squared log ratio");
  if (options.cv == "leave-one-campaign-out") {
    notify(observer.message, std::string("cross-validating: leave one campaign out"));
    const std::size_t per_fold =
        1 + (fo.refine_outer > 0 ? (keys.size() + 1) * static_cast<std::size_t>(fo.refine_outer + 1) : 0);
    fold = 0;
    notify(observer.stage_begin, std::string("validate --cv"), per_fold * folds, step_text("fold", 1, folds));
    const CrossValidation cv = cross_validate(measured, every, campaign_of, fit, fo, timed);
    notify(observer.stage_end);
    replays += cv.replays;
    result.out_of_sample = cv.predicted_s;
    const std::vector<double>& oos = result.out_of_sample;
    profile.cross_validated = residual_summary(row_errors(runs, oos).all);
    // Fold-consistent: each fold's held-out rows against that fold's own in-sample spread; the profile's
    // band widens the whole fit's in-sample spread by what they measured.
    result.folds = cv.fold_predicted_s;
    if (options.never_fitted) result.never_fitted = options.never_fitted(profile);
    MeasuredBands bands =
        measure_bands(runs, result.folds, held_out_novelty(runs), profile.in_sample, "", result.never_fitted);
    profile.campaign_band = std::move(bands.campaign);
    profile.novelty_bands = std::move(bands.growth);
    profile.cross_validated_margin = margin_residual_summary(rank_cells(runs, oos), runs, oos);
    profile.cv_scheme = options.cv;
  }
  const std::string objective =
      huber ? concat({"mean Huber (knee ", format_exact(options.huber), ") log ratio "})
            : std::string("mean squared log ratio ");
  result.objective = concat({objective, format_fixed(fit.start_loss, 4), " -> ", format_fixed(fit.loss, 4),
                             " (", std::to_string(replays), " replays of the row set)"});
  return result;
}

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

RowErrors row_errors(const std::vector<LiveRun>& runs, const std::vector<double>& predicted) {
  RowErrors e;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!(predicted[i] > 0)) continue;
    const double err = predicted[i] / runs[i].iter_s - 1;
    e.all.push_back(err);
    e.by_campaign[runs[i].campaign].push_back(err);
  }
  return e;
}

ResidualSummary residual_summary(const std::vector<double>& errors) {
  const ErrorStats s = error_stats(errors);
  return {s.rows, s.median_abs, s.p90_abs, s.signed_p10, s.signed_p90};
}

MarginResidualSummary margin_residual_summary(const std::vector<CellRanking>& cells,
                                              const std::vector<LiveRun>& runs,
                                              const std::vector<double>& predicted) {
  const std::vector<double> e = pair_margin_errors(cells, runs, predicted);
  return {static_cast<int>(e.size()), percentile(e, 0.5), percentile(e, 0.9)};
}

}  // namespace moetwin
