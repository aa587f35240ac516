#include "moetwin/planning/settling_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/rng.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/rescale.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

namespace {

// p90 of |X| for X ~ N(0, sd^2) is 1.645 sd (the two-sided 90% point of the standard normal).
constexpr double kP90OverSd = 1.6448536269514722;
// The relative step of the A2A time scale for the finite-difference sensitivities: large enough to move a
// replayed iteration by many nanoseconds, small enough to stay in the linear range.
constexpr double kSensitivityStep = 1.1;
// sd of the median of n normal draws over the sd of one draw, for large n: sqrt(pi / 2).
constexpr double kMedianEfficiency = 1.2533141373155001;

double sq(double x) {
  return x * x;
}

}  // namespace

MarginPosterior margin_posterior(const MarginEvidence& e) {
  const double var_terms = sq(e.sigma_terms);
  const double prior = var_terms * (sq(e.j_a_target) + sq(e.j_b_target)) + sq(e.sigma_structural);
  const double var_run =
      var_terms * (sq(e.j_a_run) + sq(e.j_b_run)) + sq(e.sigma_structural) + sq(e.sigma_noise);
  double cov = var_terms * (e.j_a_target * e.j_a_run + e.j_b_target * e.j_b_run);
  if (e.same_scale) cov += sq(e.sigma_structural);
  const double posterior = var_run > 0 ? prior - sq(cov) / var_run : prior;
  return {std::sqrt(prior), std::sqrt(std::max(0.0, posterior))};
}

double margin_posterior_sd_by_refit(const MarginEvidence& e, int draws, std::uint64_t seed) {
  Rng rng(seed);
  const double var_terms = sq(e.sigma_terms);
  const double var_run =
      var_terms * (sq(e.j_a_run) + sq(e.j_b_run)) + sq(e.sigma_structural) + sq(e.sigma_noise);
  double sum_sq = 0;
  for (int k = 0; k < draws; ++k) {
    // A world drawn from the prior...
    const double d_a = e.sigma_terms * rng.normal();
    const double d_b = e.sigma_terms * rng.normal();
    const double s_target = e.sigma_structural * rng.normal();
    const double s_run = e.same_scale ? s_target : e.sigma_structural * rng.normal();
    const double noise = e.sigma_noise * rng.normal();
    // ...its run measured...
    const double y = e.j_a_run * d_a + e.j_b_run * d_b + s_run + noise;
    // ...the terms (and, at the target scale, the structural error) refitted on it: the posterior mean.
    const double gain = var_run > 0 ? y / var_run : 0;
    const double d_a_fit = var_terms * e.j_a_run * gain;
    const double d_b_fit = var_terms * e.j_b_run * gain;
    const double s_fit = e.same_scale ? sq(e.sigma_structural) * gain : 0;
    // ...and the target margin re-predicted.
    const double truth = e.j_a_target * d_a + e.j_b_target * d_b + s_target;
    const double refit = e.j_a_target * d_a_fit + e.j_b_target * d_b_fit + s_fit;
    sum_sq += sq(truth - refit);
  }
  return draws > 0 ? std::sqrt(sum_sq / draws) : 0;
}

namespace {

// The scenario's iteration time with its dispatcher's A2A time scale multiplied by `factor`.
double predicted_s(const Scenario& s, const FittedProfile& profile, double factor) {
  FittedProfile p = profile;
  if (factor != 1) {
    const std::string key = concat({s.dispatcher.name, ".a2a_time_scale"});
    set_free_parameter(p.sim, key, get_free_parameter(p.sim, key) * factor);
  }
  return predict(s, predict_options_for(s, p)).iteration_s;
}

// Times of one (a, b) pair at one scale: plain and with each A2A scale stepped.
struct PairTimes {
  double a = 0, b = 0, a_step = 0, b_step = 0;
  double j_a() const { return -std::log(a_step / a) / std::log(kSensitivityStep); }
  double j_b() const { return std::log(b_step / b) / std::log(kSensitivityStep); }
};

// The four predictions of each pair, in parallel (each is independent; results do not depend on order).
std::vector<PairTimes> pair_times(const std::vector<std::pair<Scenario, Scenario>>& pairs,
                                  const FittedProfile& profile) {
  std::vector<std::pair<const Scenario*, double>> jobs;
  for (const auto& [a, b] : pairs) {
    jobs.emplace_back(&a, 1.0);
    jobs.emplace_back(&b, 1.0);
    jobs.emplace_back(&a, kSensitivityStep);
    jobs.emplace_back(&b, kSensitivityStep);
  }
  std::vector<double> t(jobs.size());
  const unsigned workers = std::max(1u, std::min(2u, static_cast<unsigned>(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (std::size_t k = w; k < jobs.size(); k += workers)
        t[k] = predicted_s(*jobs[k].first, profile, jobs[k].second);
    });
  }
  for (std::thread& th : pool) th.join();
  std::vector<PairTimes> out;
  for (std::size_t k = 0; k < t.size(); k += 4) out.push_back({t[k], t[k + 1], t[k + 2], t[k + 3]});
  return out;
}

// Whether `s` is a valid scenario that fits in HBM.
bool runnable(const Scenario& s) {
  try {
    validate_scenario(s, {s.source, 0});
    const MemoryEstimate mem = estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {s.source, 0}));
    return mem.fits;
  } catch (const InputError&) {
    return false;
  }
}

// `s` at `nodes`: the same layout and global batch with dp shrunk; where that is not valid (EP needs the
// data-parallel ranks), a truncated-model proxy: the same tp, ep and dp with fewer pipeline stages, each
// holding as many layers as at the target (layers x pp' / pp). False when neither runs.
bool at_nodes(Scenario& s, int nodes) {
  const Scenario target = s;
  const int gpus = nodes * s.instance.gpus;
  s = rescale(target, nodes, target.parallel.pp, target.training.micro_batch);
  if (s.parallel.dp > 0 && runnable(s)) return true;
  s = target;
  // The proxy's pipeline size keeps the target's dp (rescale derives it back from pp).
  const int replicas = target.parallel.tp * target.parallel.cp * target.parallel.dp;
  if (gpus % replicas != 0 || gpus / replicas < 1 || gpus / replicas >= target.parallel.pp) return false;
  s = rescale(target, nodes, gpus / replicas, target.training.micro_batch);
  s.parallel.vpp = 1;
  s.model.layers = std::max(1, static_cast<int>(std::lround(static_cast<double>(target.model.layers) *
                                                            s.parallel.pp / target.parallel.pp)));
  return runnable(s);
}

double p90_margin(double sd) {
  return std::exp(kP90OverSd * sd) - 1;
}

}  // namespace

SettlingExperiment settling_experiment(const Scenario& a, const Scenario& b, const FittedProfile& profile,
                                       const std::vector<std::string>& others,
                                       const SettlingOptions& options) {
  SettlingExperiment best;
  best.dispatchers = {a.dispatcher.name, b.dispatcher.name};
  for (const std::string& d : others) best.dispatchers.push_back(d);
  const double u = margin_uncertainty(profile, novelty_of(a, profile));
  if (u < 0) {
    best.needed = true;
    best.note = "the profile has no cross-validated margin errors to compute a settling run from";
    return best;
  }
  // Candidate scales: the target's node count and its halvings that keep the layout valid and fitting.
  std::vector<std::pair<Scenario, Scenario>> pairs = {{a, b}};
  for (int n = a.nodes; n % 2 == 0;) {
    n /= 2;
    Scenario sa = a;
    Scenario sb = b;
    if (at_nodes(sa, n) && at_nodes(sb, n)) pairs.emplace_back(std::move(sa), std::move(sb));
  }
  const std::vector<PairTimes> times = pair_times(pairs, profile);
  const PairTimes& target = times[0];
  best.predicted_margin = std::abs(target.b / target.a - 1);
  const double margin_log = std::abs(std::log(target.b / target.a));
  const double sigma_total = std::log(1 + u) / kP90OverSd;
  best.margin_before = u;
  best.needed = !(margin_log > std::log(1 + u));
  if (!best.needed) return best;
  const double sigma_structural = profile.in_sample_margin.pairs > 0
                                      ? std::log(1 + profile.in_sample_margin.p90_abs) / kP90OverSd
                                      : sigma_total;
  const double j2 = sq(target.j_a()) + sq(target.j_b());
  const double sigma_terms =
      j2 > 0 ? std::sqrt(std::max(0.0, sq(sigma_total) - sq(std::min(sigma_structural, sigma_total))) / j2)
             : 0;
  const double sigma_noise =
      std::sqrt(2.0) * kMedianEfficiency * kIterationCv / std::sqrt(std::max(1, options.measured_iterations));
  const int iterations = options.warmup_iterations + options.measured_iterations;
  const double dispatchers = static_cast<double>(best.dispatchers.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const PairTimes& t = times[k];
    MarginEvidence e;
    e.j_a_target = target.j_a();
    e.j_b_target = target.j_b();
    e.j_a_run = t.j_a();
    e.j_b_run = t.j_b();
    e.sigma_terms = sigma_terms;
    e.sigma_structural = std::min(sigma_structural, sigma_total);
    e.sigma_noise = sigma_noise;
    e.same_scale = k == 0;
    // The prior's spread at the target is u by construction (sigma_terms above).
    const MarginPosterior post = margin_posterior(e);
    SettlingExperiment c = best;
    c.found = true;
    c.nodes = pairs[k].first.nodes;
    c.pp = pairs[k].first.parallel.pp;
    c.dp = pairs[k].first.parallel.dp;
    c.layers = pairs[k].first.model.layers == a.model.layers ? 0 : pairs[k].first.model.layers;
    c.iterations = iterations;
    // Other tied dispatchers are charged at the slower of the pair's times.
    const double slow = std::max(t.a, t.b);
    c.node_hours =
        c.nodes *
        (iterations * (t.a + t.b + (dispatchers - 2) * slow) + dispatchers * options.job_startup_s) / 3600;
    c.margin_after = p90_margin(post.posterior_sd);
    c.settles = c.margin_after < best.predicted_margin;
    const bool better = !best.found || (c.settles && (!best.settles || c.node_hours < best.node_hours)) ||
                        (!c.settles && !best.settles &&
                         (c.margin_after < best.margin_after ||
                          (c.margin_after == best.margin_after && c.node_hours < best.node_hours)));
    if (better) best = std::move(c);
  }
  if (best.found && !best.settles) {
    best.note = concat({"no run of this layout settles it: the margin error its terms do not carry (",
                        format_fixed(p90_margin(std::min(sigma_structural, sigma_total)) * 100, 1),
                        "% p90, the profile's in-sample margin error) exceeds the predicted ",
                        format_fixed(best.predicted_margin * 100, 1),
                        "% margin; measuring at the target settles it"});
  }
  return best;
}

std::string describe(const SettlingExperiment& e, const Scenario& target) {
  if (!e.needed) return "no run needed: the margin exceeds the uncertainty";
  if (!e.found) return e.note;
  std::string who;
  for (std::size_t i = 0; i < e.dispatchers.size(); ++i) {
    who += i == 0 ? "" : (i + 1 == e.dispatchers.size() ? " and " : ", ");
    who += e.dispatchers[i];
  }
  const std::string layers =
      e.layers > 0
          ? concat({", ", std::to_string(e.layers), " of ", std::to_string(target.model.layers), " layers"})
          : std::string();
  std::string s = concat({"measure tp",
                          std::to_string(target.parallel.tp),
                          " pp",
                          std::to_string(e.pp),
                          " ep",
                          std::to_string(target.parallel.ep),
                          " at ",
                          std::to_string(e.nodes),
                          e.nodes == 1 ? " node (dp " : " nodes (dp ",
                          std::to_string(e.dp),
                          layers,
                          "), ",
                          std::to_string(e.iterations),
                          " iterations each of ",
                          who,
                          ": ",
                          format_fixed(e.node_hours, 1),
                          " node-hours; margin uncertainty ",
                          format_fixed(e.margin_before * 100, 1),
                          "% -> ",
                          format_fixed(e.margin_after * 100, 1),
                          "% (a lower bound: job-to-job variation is unmeasured), ",
                          e.settles ? "below" : "still above",
                          " the predicted ",
                          format_fixed(e.predicted_margin * 100, 1),
                          "% margin"});
  if (!e.note.empty()) s += concat({" (", e.note, ")"});
  return s;
}

}  // namespace moetwin
