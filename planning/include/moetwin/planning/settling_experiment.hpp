// The cheapest measurement that settles a tie: when two dispatchers' predicted times at a target scale are
// closer than the uncertainty of a predicted margin, which short run (same layout, fewer nodes, a few
// iterations of each dispatcher) would narrow that uncertainty below the margin, and what it costs.
//
// The value of information is computed from the twin's own uncertainty, not stated: the error of the
// predicted log margin ln(t_b / t_a) at a scale is modelled as
//     e = j_a * d_a + j_b * d_b + s
// where d_a, d_b ~ N(0, sigma_terms^2) are the log errors of each dispatcher's A2A time scale (the terms a
// measurement refits), j = d ln(t_b / t_a) / d ln(scale) are the margin's sensitivities to them (finite
// differences of the simulator at that scale), and s ~ N(0, sigma_structural^2) is what the terms cannot
// carry: the in-sample margin error of the fitted profile (what remains after each dispatcher's terms
// were fitted to its own rows). sigma_terms is set so that the prior spread of e at the target equals the
// profile's margin uncertainty at the target's novelty. A run at a smaller scale measures e there (plus
// measurement noise); refitting d_a, d_b on it narrows e at the target. Structural errors at two different
// scales are taken as independent (conservative: the run informs the target only through the refitted
// terms); at the target's own scale the run measures the target margin itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// The linear-Gaussian model of one pair's margin errors at the target and at the experiment's scale.
struct MarginEvidence {
  double j_a_target = 0;  // d ln(t_b / t_a) / d ln(a's A2A scale) at the target (negative: a slower)
  double j_b_target = 0;
  double j_a_run = 0;  // the same at the experiment's scale
  double j_b_run = 0;
  double sigma_terms = 0;       // prior sd of each dispatcher's log A2A-scale error
  double sigma_structural = 0;  // sd of the margin error the terms do not carry (per scale)
  double sigma_noise = 0;       // sd of the measured log margin (run-to-run noise of the medians)
  bool same_scale = false;      // the run is at the target scale: its structural error is the target's
};

struct MarginPosterior {
  double prior_sd = 0;      // sd of the target's log-margin error before the run
  double posterior_sd = 0;  // after refitting the terms on the run's measured margin
};
// Closed form (Gaussian conditioning).
MarginPosterior margin_posterior(const MarginEvidence& evidence);
// The same by simulation: `draws` worlds drawn from the prior (seeded, deterministic), each one's run
// measured with noise, the two terms refitted on it (the posterior-mean, i.e. ridge, refit), the target
// margin re-predicted; returns the sd of the target's remaining error. Agrees with margin_posterior up to
// Monte Carlo error (the tests check it): the closed form is what outputs use.
double margin_posterior_sd_by_refit(const MarginEvidence& evidence, int draws, std::uint64_t seed);

// Steady iteration-time coefficient of variation of a Megatron run: 0.5%, the spread of the 13 steady
// `Step Time` lines of shared/data/real-logs/megatron_bridge_2026-07_dsv3-16L_gb200_steptime_run5.log
// (2.22-2.26 s, periodic 3.45 s stalls excluded as the median does). Job-to-job variation (another node
// allocation) is not in the shared data and is not included: the narrowed band is a lower bound there.
inline constexpr double kIterationCv = 0.005;

struct SettlingOptions {
  int warmup_iterations = 10;    // dropped (Megatron warm-up, graph capture; the Bridge log's first 4-6)
  int measured_iterations = 20;  // whose median is the measurement
  // Per job: container start, NCCL/EFA init, model build and checkpoint-free start. An assumption (the
  // shared logs carry no timestamps of it), printed with the cost.
  double job_startup_s = 600;
};

// One pair's settling run.
struct SettlingExperiment {
  bool needed = false;  // false: the margin already exceeds the uncertainty
  bool found = false;   // a valid smaller-or-equal scale of the same layout exists
  int nodes = 0;
  int pp = 0;
  int dp = 0;
  int layers = 0;      // > 0: a truncated-model proxy with this many layers (fewer pipeline stages)
  int iterations = 0;  // per dispatcher, warm-up included
  std::vector<std::string> dispatchers;
  double node_hours = 0;        // nodes x dispatchers x (iterations x predicted time + job start-up)
  double margin_before = 0;     // p90 of |margin error| at the target before the run (exp(1.645 sd) - 1)
  double margin_after = 0;      // the same after refitting on the run
  double predicted_margin = 0;  // |t_b / t_a - 1| at the target
  bool settles = false;         // margin_after < predicted_margin
  std::string note;             // why none settles, when none does
};

// For dispatchers `a` (the predicted winner) and `b` at the target scenario (`a` and `b` differ only in
// their dispatcher): the run among the target's node count and its halvings that settles the tie at the
// fewest node-hours, or the one that narrows it most when none settles. At a halving the layout keeps tp,
// ep and the global batch with dp shrunk; where EP then lacks ranks, a truncated-model proxy keeps dp and
// drops pipeline stages with their layers (the common short experiment: a few layers per stage as at the
// target, on fewer nodes). `others`: further tied dispatchers measured in the same run (their cost is
// counted).
SettlingExperiment settling_experiment(const Scenario& a, const Scenario& b, const FittedProfile& profile,
                                       const std::vector<std::string>& others = {},
                                       const SettlingOptions& options = {});

// "measure tp8 pp8 ep32 at 8 nodes (dp 4), 30 iterations each of nccl-alltoall and deepep-uccl: 12.3
// node-hours; margin uncertainty 14% -> 5%, below the predicted 9% margin": one line for outputs.
std::string describe(const SettlingExperiment& e, const Scenario& target);

}  // namespace moetwin
