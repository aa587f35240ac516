// `moetwin plan`: enumerate the layouts of a model on N nodes of one instance type (candidates.hpp),
// reject the invalid and the ones that do not fit, predict the rest (sim/prediction.hpp with the fitted
// profile), and rank them by time to train a token budget and by cost.
//
// Predicting every fitting layout with every dispatcher is too slow at scale (DeepSeek-V3 on 32 nodes:
// ~430 fitting layouts x 4 dispatchers, each prediction a replay of 256 ranks), so per node count:
//  1. layouts are grouped by (tp, pp, ep, dp, mb); each group's variants (vpp 1 and 2, MoE A2A overlap
//     off and on, the lightest recompute that fits) are predicted together with EVERY valid dispatcher,
//     since which dispatcher wins depends on the layout (DeepEP with overlap at mb 4 can beat NCCL's
//     best layout by a third);
//  2. the search starts from PlanRequest::seed_layouts groups in screening_proxy order, round-robin over
//     pp, then predicts every neighbour (tp, pp, ep or mb one step away) of any group within
//     PlanRequest::explore_window of the node count's fastest option within the HBM headroom (of all
//     options while none is within it; a faster group beyond it expands too), until no such neighbour is
//     left (or PlanRequest::max_layouts_per_node_count is reached, which the plan reports): a hill
//     climb over a landscape that is smooth in each of those axes. planning/tests/plan_test.cpp checks it
//     against an exhaustive run on a small grid;
//  3. the fastest and the runner-up dispatcher of each option are predicted again with each measured
//     relative's A2A terms when the profile has no runs of them (a2a_term_spread) for the band.
// Groups never predicted are listed as rejected ("not predicted: ...") so --explain shows them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/planning/candidates.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// One dispatcher predicted for one layout.
struct DispatcherOutcome {
  std::string dispatcher;
  double iteration_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;
  // Where the measured iteration time is expected, and the prediction's spread over the A2A terms it
  // might have: a dispatcher without live runs in the fit is also predicted with each
  // generic_a2a_sources() profile (its band spans them); otherwise both are iteration_s. Computed for
  // an option's fastest and runner-up dispatcher (the ones shown and compared); the others keep
  // iteration_s at every end and spread_known false.
  UncertaintyBand band;
  double fastest_s = 0, slowest_s = 0;
  bool spread_known = false;
  std::string a2a_terms;    // a2a_terms_label: "fitted", "generic" or "defaults"
  double memory_bytes = 0;  // most loaded stage with this dispatcher's buffers
  // Critical-rank-independent maxima over ranks, seconds (time breakdown).
  double compute_s = 0, exposed_tp_s = 0, exposed_ep_s = 0, exposed_pp_s = 0, exposed_dp_s = 0;
  double bubble_s = 0, host_wait_s = 0;
};

struct PlanOption {
  Candidate candidate;
  double memory_bytes =
      0;  // most loaded stage with the reference dispatcher (best().memory_bytes: the chosen)
  double hbm_bytes = 0;
  std::vector<DispatcherOutcome> outcomes;  // fastest first
  // Derived from outcomes.front() (the recommended dispatcher of this layout):
  double days = 0, days_lo = 0, days_hi = 0;  // time to train, central and band, days
  double node_hours = 0;                      // nodes x hours
  double cost_usd = -1;                       // node_hours x price; < 0 when no price is known
  double node_hours_per_gtoken = 0;           // node-hours per 1e9 tokens (training_cost.hpp)
  // Strong scaling against the fastest option at the plan's smallest node count (Plan::reference_*).
  double speedup = 1, scaling_efficiency = 1;
  bool meets_deadline = true;               // central estimate within the deadline (true if none)
  bool meets_deadline_pessimistic = true;   // slow end of the band within the deadline
  double margin_pct = 0;                    // runner-up over winner iteration time - 1, percent
  bool margin_exceeds_uncertainty = false;  // sim/fitted_profile.hpp margin_exceeds_uncertainty()
  // Where the option lies outside the profile's live runs (Novelty::level() and summary()); the band and
  // the margin rule are taken at it.
  std::string novelty_level = "covered", novelty;
  // For the fastest, cheapest and recommended option when its dispatcher margin is a tie: the cheapest run
  // that settles it (planning/settling_experiment.hpp describe(); "" otherwise) and its node-hours.
  std::string settle_with;
  double settle_node_hours = 0;
  bool pareto = false;
  // The chosen dispatcher's most loaded stage within PlanRequest::hbm_headroom; options beyond it rank
  // after every option within it (a user who books on the answer should not meet an out-of-memory error).
  bool within_headroom = true;
  const DispatcherOutcome& best() const { return outcomes.front(); }
};

// What the search did at one node count (the text output's "node counts" table).
struct NodeCountSearch {
  int nodes = 0;
  int layouts = 0;  // enumerated
  int fitting = 0;  // valid and fit in HBM with the lightest recompute
  int groups = 0;   // (tp, pp, ep, dp, mb) groups of the fitting layouts
  int groups_predicted = 0;
  int predictions = 0;
  bool capped = false;  // the search stopped at max_layouts_per_node_count
  // Fastest predicted iteration among the plan's options within the HBM headroom (of all options when no
  // option of the plan is within it: the set the objectives come from); 0 when there is none.
  double fastest_s = 0;
  // The fastest beyond the headroom when it is faster than fastest_s (or the only one here); else 0.
  double fastest_beyond_s = 0;
  // The fastest's scaling against Plan::reference_* and its node-hours per 1e9 tokens (0 when none).
  double speedup = 0, scaling_efficiency = 0, node_hours_per_gtoken = 0;
  std::string none_reason;  // why nothing fits here ("" when something does): the lightest layout's check
};

// A candidate (with a dispatcher, or "*" for all) that is not among the options, and why.
struct Rejection {
  std::string label;
  std::string dispatcher;
  std::string reason;
};

struct Plan {
  PlanRequest request;
  double price_usd_per_hour = 0;  // 0 = unknown (cost ranked by node-hours)
  std::string price_source;
  std::string profile;                    // profile path or "built-in defaults (unfitted)"
  std::vector<PlanOption> options;        // ranked: within the HBM headroom first, then time, cost, label
  std::vector<Rejection> rejected;        // in enumeration order
  std::vector<NodeCountSearch> searched;  // one per node count, ascending
  // Objectives, indices into options (-1 when there are no options):
  //  - fastest: the least time to train (options[0]: within the headroom when any option is);
  //  - cheapest: the fewest node-hours (faster on ties; within the headroom when any option is);
  //  - recommended: with a deadline, the cheapest meeting it (central estimate), else the fastest;
  //    without a deadline, the fastest (both are shown: the user weighs time against cost).
  int fastest = -1;
  int cheapest = -1;
  int recommended = -1;
  bool recommended_meets_deadline = false;
  // The scaling reference: the smallest node count with an option, and its fastest iteration (0 when
  // there are no options).
  int reference_nodes = 0;
  double reference_s = 0;
  int enumerated = 0;   // candidates enumerated over all node counts
  int predictions = 0;  // predict() calls
};

// The screening order of a fitting candidate, lower first: recompute cost (full recompute repeats the
// forward: 4/3 of the FLOPs; selective ~5%) x (1 + pipeline bubble (pp - 1) / (vpp x microbatches),
// Narayanan et al. SC'21), then fewer EP ranks, larger tp, overlap on, label.
double screening_proxy(const Candidate& candidate, int global_batch);

// Throws InputError for a bad request: unknown model/instance (the catalog's message), tokens outside
// [kMinPlanTokens, kMaxPlanTokens], deadline < 0, node range outside [1, 4096] or min > max, price < 0 when
// given, gbs/seq < 1. `progress` (may be empty) receives one line per node count.
Plan make_plan(const Catalog& catalog, const PlanRequest& request, const FittedProfile& profile,
               const std::function<void(const std::string&)>& progress = {});

// The request's checks alone (make_plan calls it first).
void check_plan_request(const Catalog& catalog, const PlanRequest& request);

}  // namespace moetwin
