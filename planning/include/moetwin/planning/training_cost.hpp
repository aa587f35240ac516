// Time to train a token budget, its cost, and scaling across node counts, from one predicted iteration:
// the one arithmetic plan, recommend and compare share, so their days, node-hours, cost and scaling
// columns agree for the same prediction.
#pragma once

#include <vector>

namespace moetwin {

inline constexpr double kSecondsPerDay = 86400.0;

struct TrainingCost {
  double days = 0, days_lo = 0, days_hi = 0;  // central and the band's ends, days
  double node_hours = 0;                      // nodes x hours (central)
  double cost_usd = -1;                       // node_hours x price; < 0 when the price is unknown (0)
};

// `tokens` trained in iterations of `tokens_per_iteration` (global batch x sequence length), each taking
// `iteration_s` (band lo_s..hi_s) on `nodes` nodes at `price_usd_per_hour` per node (0 = unknown).
TrainingCost training_cost(double iteration_s, double lo_s, double hi_s, int nodes, double tokens,
                           double tokens_per_iteration, double price_usd_per_hour);

// Node-hours per 1e9 tokens trained: nodes x iteration_s / 3600 / tokens_per_iteration x 1e9. Independent
// of the token budget: the cost-efficiency column of a scaling table.
double node_hours_per_gtoken(double iteration_s, int nodes, double tokens_per_iteration);

// Strong scaling at a fixed global batch against a reference point (the smallest node count): speed-up =
// reference_s / iteration_s, efficiency = speed-up / (nodes / reference_nodes); 1 at the reference, below
// 1 when the extra nodes buy less than their share (more bubble, communication, smaller per-GPU work).
struct Scaling {
  double speedup = 1;
  double efficiency = 1;
};
Scaling scaling_against(double reference_s, int reference_nodes, double iteration_s, int nodes);

}  // namespace moetwin
