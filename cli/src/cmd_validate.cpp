// `moetwin validate --runs FILE.csv [--fit] [--cv leave-one-campaign-out]`: predicted vs measured
// iteration time of every live-run row, error statistics per campaign and overall, dispatcher ranking
// agreement per cell; with --fit the free parameters are fitted (validate/fit.hpp) and, with --cv, every
// row's out-of-sample prediction comes from the fit without its campaign. Wiring only.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "band_columns.hpp"
#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/version.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sweep/progress.hpp"
#include "moetwin/validate/accuracy.hpp"
#include "moetwin/validate/default_parameters.hpp"
#include "moetwin/validate/fit.hpp"
#include "moetwin/validate/row_predictions.hpp"
#include "prediction_columns.hpp"

namespace moetwin::cli {

namespace {

struct ValidateOptions : RowInput {
  std::string profile;
  bool fit = false;
  std::vector<std::string> params;
  // --exclude NAME: rows (by scenario name, e.g. "uccl-p5en-4n-20260430/mb1/deepep-uccl") left out of
  // the predictions, the fit and the statistics: runs outside the model, each named in the report.
  std::vector<std::string> exclude;
  std::string cv = "none";
  int cv_refine = 0;
  // --huber: the fit objective's Huber knee in |log ratio| (0: squared). 0.1 (10%): errors inside it are
  // fitted as squared; a row further out (qwen3-235b 2026-06-24's DeepEP rows, 20-28% slower than the same
  // layouts' neighbours imply) pulls only linearly. Out of sample on the published runs: 0.1 gives median
  // 7.1% / p90 20.9%, 0.05 gives 7.7% / 21.8%, squared 7.4% / 23.1% (README, "How right is it").
  double huber = 0.1;
  int outer = 4;
  int threads = 2;
  std::string write_profile;
};

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

ResidualSummary residuals(const std::vector<double>& errors) {
  const ErrorStats s = error_stats(errors);
  return {s.rows, s.median_abs, s.p90_abs, s.signed_p10, s.signed_p90};
}

// Errors of the predicted time ratios of every pair of dispatchers measured on one cell of `cells`
// (rank_cells of the same predictions).
MarginResidualSummary margin_residuals(const std::vector<CellRanking>& cells,
                                       const std::vector<LiveRun>& runs,
                                       const std::vector<double>& predicted) {
  const std::vector<double> e = pair_margin_errors(cells, runs, predicted);
  return {static_cast<int>(e.size()), percentile(e, 0.5), percentile(e, 0.9)};
}

// Relative errors of the rows with a prediction, and the per-campaign split.
struct Errors {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_campaign;
};
Errors errors_of(const std::vector<LiveRun>& runs, const std::vector<double>& predicted) {
  Errors e;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!(predicted[i] > 0)) continue;
    const double err = predicted[i] / runs[i].iter_s - 1;
    e.all.push_back(err);
    e.by_campaign[runs[i].campaign].push_back(err);
  }
  return e;
}

Cell pct(double fraction) {
  return Cell::fixed(fraction * 100, 2);
}

}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predicted vs measured live runs: errors per row and campaign, dispatcher ranking; --fit, --cv");
  auto o = std::make_shared<ValidateOptions>();
  cmd->add_option("--runs", o->runs, "Live-run CSV (shared/data/live-runs.csv schema); repeatable")
      ->required();
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  add_profile_option(cmd, o->profile);
  cmd->add_flag("--fit", o->fit, "Fit the free parameters on every row (start: --profile)");
  cmd->add_option(
         "--params", o->params,
         "Free parameters to fit (default: the ones the rows can pin down, README \"How right is it\")")
      ->delimiter(',');
  cmd->add_option("--cv", o->cv, "Cross-validation with --fit: none | leave-one-campaign-out")
      ->check(CLI::IsMember({"none", "leave-one-campaign-out"}));
  cmd->add_option("--cv-refine", o->cv_refine, "Replay rounds per fold from its first estimate (default 0)")
      ->check(CLI::Range(0, 10));
  CLI::Option* huber_option =
      cmd->add_option("--huber", o->huber,
                      "With --fit: Huber objective, squared up to this |log(predicted/measured)| and linear "
                      "beyond (default 0.1; 0: squared log ratio)")
          ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--outer", o->outer, "Linearise-minimise-replay rounds of the fit (default 4)")
      ->check(CLI::Range(1, 20));
  cmd->add_option(
      "--exclude", o->exclude,
      "Leave out the row(s) with this scenario name (campaign/mb<mb>/<dispatcher>[/overlap][/nch<n>]): "
      "runs outside the model; repeatable");
  cmd->add_option("--threads", o->threads, "Rows replayed in parallel (results identical for any count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--write-profile", o->write_profile, "With --fit: write the fitted profile (TOML) here");
  cmd->callback([o, &global, huber_option] {
    if (!o->fit && huber_option->count() > 0)
      throw InputError({"", 0}, "--huber", format_exact(o->huber), "--fit (it is the fit's objective)");
    if (!o->fit && o->cv != "none")
      throw InputError({"", 0}, "--cv", o->cv, "--fit (cross-validation refits)");
    if (!o->fit && !o->write_profile.empty())
      throw InputError({"", 0}, "--write-profile", o->write_profile, "--fit");
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    LiveRunTable table = read_live_runs(o->runs, catalog);
    print_row_warnings(table);
    for (const std::string& name : o->exclude) {
      const auto before = table.runs.size();
      std::erase_if(table.runs, [&](const LiveRun& r) { return r.scenario.name == name; });
      if (table.runs.size() == before) {
        throw InputError({"", 0}, "--exclude", name,
                         "the scenario name of a row of --runs (campaign/mb<mb>/...)");
      }
      std::cerr << "excluded: " << name << " (" << before - table.runs.size() << " row)\n";
    }
    const std::vector<LiveRun>& runs = table.runs;
    if (runs.empty()) throw InputError({runs_label(o->runs), 0}, "rows", "0", "at least one live-run row");
    if (o->cv == "leave-one-campaign-out") {
      std::set<std::string> campaigns;
      for (const LiveRun& r : runs) campaigns.insert(r.campaign);
      if (campaigns.size() < 2) {
        throw InputError({runs_label(o->runs), 0}, "--cv", o->cv,
                         "rows of at least two campaigns (leaving the only one out leaves nothing to fit): " +
                             std::to_string(campaigns.size()) + " campaign");
      }
    }
    FittedProfile profile = resolve_fitted_profile(o->profile);

    std::vector<double> measured;
    std::vector<std::string> campaign_of;
    for (const LiveRun& r : runs) {
      measured.push_back(r.iter_s);
      campaign_of.push_back(r.campaign);
    }
    const std::vector<std::size_t> every = all_rows(runs.size());
    const RowTimes times = [&](const SimProfile& sim, const std::vector<std::size_t>& which) {
      FittedProfile p = profile;
      p.sim = sim;
      std::vector<double> t;
      for (const RowPrediction& r : predict_rows(runs, which, p, o->threads))
        t.push_back(r.ok ? r.iteration_s : 0);
      return t;
    };
    // On a terminal: one bar per stage (fit, wider fit, cross-validation), advanced per replay of the row
    // set, its stage text the round or fold; without a terminal only the round and fold lines, as before.
    std::unique_ptr<SweepProgress> bar;
    const auto start_bar = [&bar](const std::string& label, std::size_t replays, const std::string& stage) {
      bar.reset();
      if (!stderr_is_terminal()) return;
      ProgressOptions po;
      po.out = &std::cerr;
      po.tty = true;
      po.label = label;
      po.unit = "replays";
      po.journal_line = false;
      bar = std::make_unique<SweepProgress>(po, replays, 0, replays);
      bar->set_stage(stage);
    };
    const auto end_bar = [&bar]() {
      if (bar) bar->finish();
      bar.reset();
    };
    const RowTimes timed = [&](const SimProfile& sim, const std::vector<std::size_t>& which) {
      std::vector<double> t = times(sim, which);
      if (bar) bar->advance();
      return t;
    };

    std::vector<double> oos;  // out-of-sample predictions (with --cv)
    std::vector<std::pair<std::string, std::string>> fit_lines;
    if (o->fit) {
      FitOptions fo;
      fo.outer_iterations = o->outer;
      fo.refine_outer = o->cv_refine;
      fo.huber_delta = o->huber;
      // Default: the parameters the rows can pin down (default_parameters.hpp). The compute and
      // collective time scales are judged by their times' shares of the rows at the fit without them:
      // at the starting profile (the unfitted defaults, with host and A2A times far below the runs') the
      // shares say little about the fitted world.
      const bool default_keys = o->params.empty();
      std::vector<std::string> keys = default_keys ? default_fit_parameters(runs, TimeShares{}) : o->params;
      for (const std::string& k : keys) {
        if (find_free_parameter(k) == nullptr) {
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
      int round = 1;
      int fold = 0;
      std::size_t folds = 0;  // campaigns among the rows: one fold each
      {
        std::vector<std::string> c = campaign_of;
        std::sort(c.begin(), c.end());
        folds = static_cast<std::size_t>(std::unique(c.begin(), c.end()) - c.begin());
      }
      fo.progress = [&](const std::string& line) {
        if (bar) {
          bar->note("fit: " + line);
          if (line.rfind("round ", 0) == 0 && round < fo.outer_iterations) {
            ++round;
            bar->set_stage(
                concat({"round ", std::to_string(round), "/", std::to_string(fo.outer_iterations)}));
          } else if (line.rfind("fold ", 0) == 0 && static_cast<std::size_t>(fold + 1) < folds) {
            ++fold;
            bar->set_stage(concat({"fold ", std::to_string(fold + 1), "/", std::to_string(folds)}));
          }
        } else {
          std::cerr << "fit: " << line << '\n';
        }
      };
      SimProfile start = profile.sim;
      if (!profile.fitted) {
        for (const std::string& k : keys) {
          const FreeParameter* fp = find_free_parameter(k);
          if (fp->fit_start > 0) set_free_parameter(start, k, fp->fit_start);
        }
      }
      const auto run_fit = [&](const SimProfile& from) {
        fo.parameters = keys;
        std::cerr << "fitting " << keys.size() << " parameters on " << runs.size() << " rows\n";
        // Replays: the start and one per parameter (the linear model), then per round up to three
        // candidates and the model again; the estimate counts one candidate per round.
        const std::size_t per_model = keys.size() + 1;
        round = 1;
        start_bar("validate --fit", per_model * static_cast<std::size_t>(fo.outer_iterations + 1),
                  concat({"round 1/", std::to_string(fo.outer_iterations)}));
        FitResult r = fit_parameters(measured, every, from, fo, timed);
        end_bar();
        return r;
      };
      FitResult fit = run_fit(start);
      int replays = fit.replays;
      if (default_keys) {
        FittedProfile at_fit = profile;
        at_fit.sim = fit.profile;
        const TimeShares shares = median_time_shares(predict_rows(runs, every, at_fit, o->threads));
        std::cerr << "time shares at the fit: compute " << format_fixed(100 * shares.compute, 1)
                  << "%, exposed TP/PP/DP collectives " << format_fixed(100 * shares.collectives, 1)
                  << "% of the median row's iteration (a scale is fitted from "
                  << format_fixed(100 * kMinIdentifiableShare, 0) << "%)\n";
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
      profile.fitted_at = today_utc();
      profile.fitted_on = runs_label(o->runs);
      for (const std::string& name : o->exclude) profile.fitted_on += " without " + name;
      profile.coverage = FitCoverage{};
      for (const LiveRun& r : runs) profile.coverage.add(r.scenario);
      profile.git_revision = kGitRevision;
      profile.path = o->write_profile.empty() ? "(not written)" : o->write_profile;
      profile.in_sample = residuals(errors_of(runs, fit.predicted_s).all);
      profile.in_sample_margin = margin_residuals(rank_cells(runs, fit.predicted_s), runs, fit.predicted_s);
      profile.cross_validated = {};
      profile.cv_scheme = "none";
      const bool huber = o->huber > 0;
      profile.fit_objective = huber ? "huber " + format_exact(o->huber) : "squared log ratio";
      if (o->cv == "leave-one-campaign-out") {
        std::cerr << "cross-validating: leave one campaign out\n";
        const std::size_t per_fold =
            1 + (fo.refine_outer > 0 ? (keys.size() + 1) * static_cast<std::size_t>(fo.refine_outer + 1) : 0);
        fold = 0;
        start_bar("validate --cv", per_fold * folds, concat({"fold 1/", std::to_string(folds)}));
        const CrossValidation cv = cross_validate(measured, every, campaign_of, fit, fo, timed);
        end_bar();
        replays += cv.replays;
        oos = cv.predicted_s;
        profile.cross_validated = residuals(errors_of(runs, oos).all);
        profile.novelty_bands = novelty_bands(runs, oos, held_out_novelty(runs));
        profile.cross_validated_margin = margin_residuals(rank_cells(runs, oos), runs, oos);
        profile.cv_scheme = o->cv;
      }
      const std::string objective =
          huber ? "mean Huber (knee " + format_exact(o->huber) + ") log ratio " : "mean squared log ratio ";
      fit_lines.push_back({"objective", objective + format_fixed(fit.start_loss, 4) + " -> " +
                                            format_fixed(fit.loss, 4) + " (" + std::to_string(replays) +
                                            " replays of the row set)"});
      if (!o->write_profile.empty()) write_file_atomically(o->write_profile, fitted_profile_toml(profile));
    }

    // The rows at the (fitted) profile, with their breakdowns.
    const std::vector<RowPrediction> preds = predict_rows(runs, every, profile, o->threads);
    std::vector<double> in_sample;
    for (const RowPrediction& r : preds) in_sample.push_back(r.ok ? r.iteration_s : 0);
    const bool has_cv = !oos.empty();
    const std::vector<double>& headline = has_cv ? oos : in_sample;

    ResultTable rows;
    rows.columns = table.header;
    for (const char* c : {"predicted_iter_s", "predicted_tflops_gpu", "error_pct"}) rows.columns.push_back(c);
    if (has_cv) {
      for (const char* c : {"in_sample_iter_s", "in_sample_error_pct"}) rows.columns.push_back(c);
    }
    // The 80% interval: out of sample (the band held out with the row's campaign) with --cv, else the
    // profile's band at the row's novelty against the profile's coverage.
    const std::vector<RowInterval> in_intervals = in_sample_intervals(runs, in_sample, profile);
    const std::vector<RowInterval> oos_intervals =
        has_cv ? out_of_sample_intervals(runs, oos, profile) : std::vector<RowInterval>{};
    const std::vector<RowInterval>& intervals = has_cv ? oos_intervals : in_intervals;
    for (const std::string& c : band_columns()) rows.columns.push_back(c);
    rows.columns.push_back("status");
    for (const std::string& c : predict_columns()) {
      if (c != "predicted_iter_s" && c != "predicted_tflops_gpu") rows.columns.push_back(c);
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<Cell> row;
      for (const std::string& f : runs[i].row.fields) row.emplace_back(f);
      const RowPrediction& p = preds[i];
      const double t = headline[i];
      const double tflops = t > 0 ? p.detail.model_flops / (t * p.detail.gpus) / 1e12 : 0;
      row.push_back(Cell::fixed(t, 6));
      row.push_back(Cell::fixed(tflops, 2));
      row.push_back(t > 0 ? pct(t / runs[i].iter_s - 1) : Cell(""));
      if (has_cv) {
        row.push_back(Cell::fixed(in_sample[i], 6));
        row.push_back(in_sample[i] > 0 ? pct(in_sample[i] / runs[i].iter_s - 1) : Cell(""));
      }
      if (intervals[i].level.empty()) {
        for (std::size_t k = 0; k < band_columns().size(); ++k) row.emplace_back("");
      } else {
        row.push_back(Cell::fixed(intervals[i].lo_s, 6));
        row.push_back(Cell::fixed(intervals[i].hi_s, 6));
        row.emplace_back(intervals[i].level);
        row.emplace_back(intervals[i].novelty);
      }
      row.push_back(p.ok ? Cell("ok") : Cell("error: " + p.error));
      const std::vector<Cell> detail = predict_cells(p.detail);
      const std::vector<std::string> names = predict_columns();
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (names[k] != "predicted_iter_s" && names[k] != "predicted_tflops_gpu") row.push_back(detail[k]);
      }
      rows.add_row(std::move(row));
    }

    // Per campaign and overall.
    const Errors head = errors_of(runs, headline);
    const Errors ins = errors_of(runs, in_sample);
    ResultTable summary;
    summary.columns = {"campaign", "rows", "median_abs_error_pct", "p90_abs_error_pct",
                       "mean_signed_error_pct"};
    if (has_cv) {
      for (const char* c : {"in_sample_median_abs_error_pct", "in_sample_p90_abs_error_pct"})
        summary.columns.push_back(c);
    }
    auto add_summary = [&](const std::string& name, const std::vector<double>& e,
                           const std::vector<double>& e_in) {
      const ErrorStats s = error_stats(e);
      std::vector<Cell> row = {name, Cell::integer(s.rows), pct(s.median_abs), pct(s.p90_abs),
                               pct(s.mean_signed)};
      if (has_cv) {
        const ErrorStats si = error_stats(e_in);
        row.push_back(pct(si.median_abs));
        row.push_back(pct(si.p90_abs));
      }
      summary.add_row(std::move(row));
    };
    for (const auto& [campaign, e] : head.by_campaign) add_summary(campaign, e, ins.by_campaign.at(campaign));
    add_summary("all", head.all, ins.all);

    // Dispatcher ranking per cell.
    const std::vector<CellRanking> cells = rank_cells(runs, headline);
    ResultTable ranking;
    ranking.columns = {"cell",  "measured_winner", "predicted_winner", "winner_right", "measured_lead_pct",
                       "pairs", "pairs_agree"};
    int right = 0, decisive = 0, decisive_right = 0, pairs = 0, agree = 0;
    std::vector<std::string> misses;
    for (const CellRanking& c : cells) {
      ranking.add_row({c.key, c.measured_winner, c.predicted_winner, Cell::boolean(c.winner_right()),
                       pct(c.measured_lead), Cell::integer(c.pairs), Cell::integer(c.pairs_agree)});
      right += c.winner_right() ? 1 : 0;
      pairs += c.pairs;
      agree += c.pairs_agree;
      if (c.measured_lead >= 0.05) {
        ++decisive;
        decisive_right += c.winner_right() ? 1 : 0;
        if (!c.winner_right())
          misses.push_back(c.key + ": measured " + c.measured_winner + " (+" +
                           format_fixed(c.measured_lead * 100, 1) + "%), predicted " + c.predicted_winner);
      }
    }

    // Margin errors: the uncertainty of a recommendation (recommend, plan).
    ResultTable margins;
    margins.columns = {"scope", "pairs", "median_abs_error_pct", "p90_abs_error_pct"};
    auto add_margins = [&](const std::string& scope, const MarginResidualSummary& m) {
      margins.add_row({scope, Cell::integer(m.pairs), pct(m.median_abs), pct(m.p90_abs)});
    };
    const MarginResidualSummary head_margin = margin_residuals(cells, runs, headline);
    add_margins(has_cv ? "out_of_sample" : "in_sample", head_margin);
    MarginResidualSummary in_margin;  // with --cv: the in-sample margins beside the out-of-sample ones
    if (has_cv) {
      in_margin = margin_residuals(rank_cells(runs, in_sample), runs, in_sample);
      add_margins("in_sample", in_margin);
    }

    // How often the 80% intervals hold the measured time, per novelty level.
    std::vector<std::pair<std::string, std::vector<IntervalCoverage>>> coverage_scopes = {
        {"in_sample", interval_coverage(in_intervals)}};
    if (has_cv)
      coverage_scopes.insert(coverage_scopes.begin(), {"out_of_sample", interval_coverage(oos_intervals)});
    const ResultTable interval_table = interval_coverage_table(coverage_scopes);

    ResultTable params;
    params.columns = {"parameter", "value", "unit", "lo", "hi", "fitted", "meaning"};
    std::vector<std::string> shown;
    for (const FreeParameter& fp : free_parameters()) shown.push_back(fp.key);
    for (const auto& entry : profile.sim.a2a_by_dispatcher) {
      for (const std::string& leaf : a2a_parameter_leaves()) shown.push_back(entry.first + "." + leaf);
    }
    for (const std::string& key : shown) {
      const FreeParameter& fp = *find_free_parameter(key);
      const bool moved =
          std::find(profile.fitted_keys.begin(), profile.fitted_keys.end(), key) != profile.fitted_keys.end();
      params.add_row({key, Cell::exact(get_free_parameter(profile.sim, key)), fp.unit, Cell::exact(fp.lo),
                      Cell::exact(fp.hi), Cell::boolean(moved), fp.meaning});
    }

    OutputContext context{"validate", catalog_dir, o->runs};
    std::string content;
    if (o->format == "csv") {
      content = render_csv(rows);
    } else if (o->format == "json") {
      content = render_json(context, {{"rows", &rows},
                                      {"summary", &summary},
                                      {"cells", &ranking},
                                      {"margins", &margins},
                                      {"parameters", &params},
                                      {"intervals", &interval_table}});
    } else {
      const ErrorStats all = error_stats(head.all);
      std::vector<std::pair<std::string, std::string>> kv = {
          {"runs", runs_label(o->runs) + " (" + std::to_string(runs.size()) + " rows, " +
                       std::to_string(head.all.size()) + " predicted)"},
          {"profile", profile_label(profile)},
          {"errors", std::string(has_cv ? "out of sample (" + o->cv + ")" : "in sample") +
                         ": median |error| " + format_fixed(all.median_abs * 100, 1) + "%, p90 " +
                         format_fixed(all.p90_abs * 100, 1) + "%, mean signed " +
                         format_fixed(all.mean_signed * 100, 1) + "%"},
      };
      if (has_cv) {
        const ErrorStats si = error_stats(ins.all);
        kv.push_back({"in sample", "median |error| " + format_fixed(si.median_abs * 100, 1) + "%, p90 " +
                                       format_fixed(si.p90_abs * 100, 1) + "%"});
      }
      kv.push_back({"dispatcher winner", std::to_string(right) + " of " + std::to_string(cells.size()) +
                                             " cells right; " + std::to_string(decisive_right) + " of " +
                                             std::to_string(decisive) + " where the measured lead is >= 5%"});
      kv.push_back(
          {"pairwise order", std::to_string(agree) + " of " + std::to_string(pairs) + " pairs agree"});
      {
        std::string m = std::string(has_cv ? "out of sample" : "in sample") +
                        ": predicted time ratio of two dispatchers on one cell off by median " +
                        format_fixed(head_margin.median_abs * 100, 1) + "%, p90 " +
                        format_fixed(head_margin.p90_abs * 100, 1) + "% (" +
                        std::to_string(head_margin.pairs) + " pairs)";
        if (has_cv) {
          m += "; in sample " + format_fixed(in_margin.median_abs * 100, 1) + "% / " +
               format_fixed(in_margin.p90_abs * 100, 1) + "%";
        }
        kv.push_back({"margin error", m});
      }
      for (const auto& [scope, coverage] : coverage_scopes) {
        kv.push_back({scope == "in_sample" ? "80% interval, in sample" : "80% interval, out of sample",
                      interval_coverage_line(coverage)});
      }
      for (const auto& l : fit_lines) kv.push_back(l);
      ResultTable brief;
      brief.columns = {"campaign",         "mb",       "vpp", "overlap", "dispatcher", "iter_s",
                       "predicted_iter_s", "error_pct"};
      if (has_cv) brief.columns.push_back("in_sample_error_pct");
      for (const auto& r : rows.rows) {
        std::vector<Cell> b;
        for (const std::string& c : brief.columns) b.push_back(r[rows.column(c)]);
        brief.add_row(std::move(b));
      }
      content = render_key_values(kv) + "\nparameters:\n" + render_text(params) + "\nper campaign:\n" +
                render_text(summary) + "\nper row:\n" + render_text(brief) +
                "\ndispatcher ranking per cell:\n" + render_text(ranking);
      if (!misses.empty()) {
        content += "\nwrong winner where the measured lead is >= 5%:\n";
        for (const std::string& m : misses) content += "  " + m + "\n";
      }
    }
    emit_output(content, o->out);
  });
}

}  // namespace moetwin::cli
