// `moetwin plan`: enumerate the layouts of a model on N nodes of one instance type (candidates.hpp),
// reject the invalid and the ones that do not fit, predict the rest (sim/prediction.hpp with the fitted
// profile), and rank them by time to train a token budget and by cost.
//
// Two passes bound the run time (every prediction replays one iteration rank by rank):
//  1. screening: per node count, the fitting candidates are ordered by a cheap analytic proxy
//     (screening_proxy), taken round-robin over the pipeline sizes (so every pp gets predictions), and
//     the first PlanRequest::predictions_per_node_count are predicted with the
//     reference dispatcher (NCCL all-to-all: valid at every EP size); the others are listed as rejected
//     "not predicted (screening budget)" so --explain shows what was left out;
//  2. dispatchers: per node count the PlanRequest::dispatcher_finalists fastest layouts are predicted
//     with every other catalog dispatcher valid there; each option keeps its fastest dispatcher and the
//     margin to the runner-up.
// For a fixed node count, cost is proportional to time, so the Pareto front (time vs cost) only ever
// holds the fastest layout of a node count: the finalists cover it.
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
  UncertaintyBand band;  // where the measured iteration time is expected
  // The prediction's spread over the A2A terms it might have: a dispatcher without live runs in the fit
  // is also predicted with each generic_a2a_sources() profile (its band spans them); otherwise both are
  // iteration_s.
  double fastest_s = 0, slowest_s = 0;
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
  bool meets_deadline = true;                 // central estimate within the deadline (true if none)
  bool meets_deadline_pessimistic = true;     // slow end of the band within the deadline
  double margin_pct = 0;                      // runner-up over winner iteration time - 1, percent
  bool margin_exceeds_uncertainty = false;    // sim/fitted_profile.hpp margin_exceeds_uncertainty()
  bool pareto = false;
  const DispatcherOutcome& best() const { return outcomes.front(); }
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
  std::string profile;              // profile path or "built-in defaults (unfitted)"
  std::vector<PlanOption> options;  // ranked: time to train, then cost, then label
  std::vector<Rejection> rejected;  // in enumeration order
  int recommended = -1;             // index into options; -1 when there is none
  bool recommended_meets_deadline = false;
  int enumerated = 0;   // candidates enumerated over all node counts
  int predictions = 0;  // predict() calls
};

// The screening order of a fitting candidate, lower first: recompute cost (full recompute repeats the
// forward: 4/3 of the FLOPs; selective ~5%) x (1 + pipeline bubble (pp - 1) / (vpp x microbatches),
// Narayanan et al. SC'21), then fewer EP ranks, larger tp, overlap on, label.
double screening_proxy(const Candidate& candidate, int global_batch);

// Throws InputError for a bad request: unknown model/instance (the catalog's message), tokens <= 0,
// deadline < 0, max_nodes < 1, price < 0 when given, gbs/seq < 1. `progress` (may be empty) receives
// one line per node count.
Plan make_plan(const Catalog& catalog, const PlanRequest& request, const FittedProfile& profile,
               const std::function<void(const std::string&)>& progress = {});

// The request's checks alone (make_plan calls it first).
void check_plan_request(const Catalog& catalog, const PlanRequest& request);

}  // namespace moetwin
