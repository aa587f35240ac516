#include "moetwin/scenario/rescale.hpp"

namespace moetwin {

int derived_dp(const Scenario& s) {
  // 64-bit: each parallel size may be up to 2^20 in a file, so their product overflows an int.
  const long long world = static_cast<long long>(s.nodes) * s.instance.gpus;
  const long long model_ranks = static_cast<long long>(s.parallel.tp) * s.parallel.cp * s.parallel.pp;
  if (model_ranks <= 0 || world % model_ranks != 0) return 0;
  return static_cast<int>(world / model_ranks);
}

Scenario rescale(Scenario scenario, int nodes, int pp, int micro_batch) {
  scenario.nodes = nodes;
  scenario.parallel.pp = pp;
  scenario.training.micro_batch = micro_batch;
  scenario.parallel.dp = derived_dp(scenario);
  return scenario;
}

}  // namespace moetwin
