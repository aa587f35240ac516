#include "moetwin/planning/training_cost.hpp"

namespace moetwin {

TrainingCost training_cost(double iteration_s, double lo_s, double hi_s, int nodes, double tokens,
                           double tokens_per_iteration, double price_usd_per_hour) {
  TrainingCost c;
  const double iterations = tokens / tokens_per_iteration;
  c.days = iterations * iteration_s / kSecondsPerDay;
  c.days_lo = iterations * lo_s / kSecondsPerDay;
  c.days_hi = iterations * hi_s / kSecondsPerDay;
  c.node_hours = nodes * c.days * 24.0;
  c.cost_usd = price_usd_per_hour > 0 ? c.node_hours * price_usd_per_hour : -1;
  return c;
}

double node_hours_per_gtoken(double iteration_s, int nodes, double tokens_per_iteration) {
  return nodes * iteration_s / 3600.0 / tokens_per_iteration * 1e9;
}

Scaling scaling_against(double reference_s, int reference_nodes, double iteration_s, int nodes) {
  Scaling s;
  s.speedup = reference_s / iteration_s;
  s.efficiency = s.speedup * static_cast<double>(reference_nodes) / static_cast<double>(nodes);
  return s;
}

}  // namespace moetwin
