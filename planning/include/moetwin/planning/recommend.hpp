// `moetwin recommend`: for every scale (a node count with its pipeline size) and micro-batch, every
// dispatcher valid there is predicted with its uncertainty band (the fitted profile's cross-validated
// residuals at the point's novelty); the winner, its margin over the runner-up and whether the margin
// exceeds the uncertainty (margin_exceeds_uncertainty: the cross-validated error of predicted margins);
// for every tie the cheapest run that settles it (settling_experiment.hpp); then the crossovers, where the
// winner changes, in node count and in micro-batch. A dispatcher the fit had no runs of is also predicted
// with each measured relative's A2A terms (generic_a2a_sources): its band and its margins cover them all.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/planning/settling_experiment.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/validate/row_predictions.hpp"

namespace moetwin {

// What the user asked (the flags of `moetwin recommend`).
struct RecommendRequest {
  std::vector<int> nodes;
  std::vector<int> micro_batches;        // empty: the scenario's
  std::vector<std::string> dispatchers;  // empty: every catalog dispatcher
  // Pipeline stages. Auto: per node count the power of two nearest the scenario's pp where every
  // micro-batch has a valid dispatcher that fits (auto_pp_order), said in Recommendation::pp_notes.
  // Otherwise `pp`: empty for the scenario's, one value for every node count, or one per node count.
  bool pp_auto = true;
  std::vector<int> pp;
  int global_batch = 0;  // sequences per iteration; 0: the scenario's
  int threads = 2;       // predictions in parallel (results identical for any count)
  // --tokens: time to train and cost per point (training_cost.hpp, as plan computes them); 0 = none.
  double tokens = 0;
  double price_usd_per_hour = -1;             // per node; < 0 = the catalog's price
  double hbm_headroom = kDefaultHbmHeadroom;  // HBM share kept free (accounting/hbm_headroom.hpp)
};

// One (node count, micro-batch, dispatcher).
struct RecommendPoint {
  int nodes = 0;
  int pp = 0;
  int mb = 0;
  std::string dispatcher;
  std::string status = "ok";  // ok | invalid: ... | does not fit: ...
  std::size_t row = 0;        // index into Recommendation::rows and predictions when status is ok
  bool own_terms = true;      // the profile has the dispatcher's own fitted A2A terms
  double fastest_s = 0;       // over the generic terms' sources and an inherited stack (a2a_term_spread's)
  double slowest_s = 0;
  bool beyond = false;  // behind its group's winner beyond the uncertainty (margin_exceeds_uncertainty)
  // "nodes 16 (pp 4), mb 1"
  std::string label() const;
};

// The dispatchers of one (micro-batch, node count), ranked.
struct RecommendGroup {
  std::size_t first = 0;            // its points are [first, first + the number of dispatchers)
  std::vector<std::size_t> ranked;  // its valid points, fastest first
  std::string winner;               // "" when no dispatcher is valid
  double margin = 0;                // runner-up / winner iteration time - 1
  bool exceeds = false;             // the runner-up is behind beyond the uncertainty
  // margin_uncertainty at the group's novelty (its dispatchers share everything else); < 0 when the
  // profile has no cross-validated margin errors (the band rule).
  double uncertainty = -1;
  SettlingExperiment settle;  // for a tie: the run that settles the winner against the runner-up
};

struct Recommendation {
  Scenario base;
  std::vector<int> nodes;
  std::vector<int> micro_batches;
  std::vector<std::string> dispatchers;
  std::vector<RecommendPoint> points;      // by micro-batch, then node count, then dispatcher
  std::vector<LiveRun> rows;               // the scenarios of the valid points
  std::vector<RowPrediction> predictions;  // of rows, with the profile's own (or generic) terms
  std::vector<RecommendGroup> groups;      // by micro-batch, then node count
  std::vector<std::string> pp_notes;       // with pp auto: per node count, the pp chosen and why
  // Without --dispatchers: the catalog dispatchers left out because they cannot run on the instance, and why.
  std::vector<std::string> excluded_dispatchers;
  // Per dispatcher predicted with its relatives' A2A terms: which terms, and what its band spans; for a
  // stack without rows, the fitted stack it inherits from, whose answer every band spans.
  std::vector<std::string> generic_notes;
  std::vector<std::string> winners;     // per group: the winner, the tied ones and the ones behind
  std::vector<std::string> ties;        // per tie: the margin and the run that settles it
  std::vector<std::string> crossovers;  // see crossovers()
  double uncertainty = -1;              // margin_uncertainty(profile): in family; < 0: the band rule
  double tokens = 0;                    // RecommendRequest::tokens
  double price_usd_per_hour = 0;        // the request's or the catalog's; 0 = unknown
  std::string price_source;
  double hbm_headroom = kDefaultHbmHeadroom;  // the request's: points beyond it are warned about
};

// Throws InputError for a dispatcher not in the catalog (--dispatchers).
Recommendation recommend(const Scenario& base, const Catalog& catalog, const FittedProfile& profile,
                         const RecommendRequest& request);

// The powers of two `pp auto` tries (the sizes `plan` searches) in the order it tries them: nearest the
// scenario's pp first (log distance, the smaller on ties: less bubble), at most half the layers (no stage
// of a single layer).
std::vector<int> auto_pp_order(int scenario_pp, int layers);

// Where the winner changes: between consecutive node counts at each micro-batch ("mb 4: a at 8 nodes -> b
// at 16 nodes"), then between consecutive micro-batches at each node count ("16 nodes: a at mb 1 -> b at
// mb 4"). `winner_at` maps (micro-batch, node count) to its winner; points without one break no chain.
std::vector<std::string> crossovers(const std::map<std::pair<int, int>, std::string>& winner_at,
                                    const std::vector<int>& nodes, const std::vector<int>& micro_batches);

// "" when some point has a valid dispatcher; else the message `recommend` exits with: every distinct
// reason and the pp auto notes.
std::string nothing_valid_message(const Recommendation& r);

}  // namespace moetwin
