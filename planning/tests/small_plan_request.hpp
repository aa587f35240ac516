// The plan request plan's and --write-scenarios' tests share: Qwen3-30B on one p5en node, 1e9 tokens, a
// narrow screen (one seed layout, two per node count) on two threads, so a whole plan runs in seconds.
#pragma once

#include <string>

#include "moetwin/planning/plan.hpp"

namespace moetwin::planning_test {

// `model` on `min_nodes`..`max_nodes` nodes of `instance`, `tokens` tokens in global batches of
// `global_batch` sequences, searched on two threads (the test machines' cores); the rest at PlanRequest's
// defaults.
inline PlanRequest plan_request(const std::string& model, const std::string& instance, double tokens,
                                int min_nodes, int max_nodes, int global_batch) {
  return PlanRequest{.model = model,
                     .instance = instance,
                     .tokens = tokens,
                     .min_nodes = min_nodes,
                     .max_nodes = max_nodes,
                     .global_batch = global_batch,
                     .threads = 2,
                     .stack = StackChoice(),
                     .choices = ScenarioChoices()};
}

// Qwen3-30B on `max_nodes` p5en nodes (one by default), 4,096-token sequences, one seed layout and two per
// node count.
inline PlanRequest small_request(double tokens = 1e9, int max_nodes = 1, int global_batch = 16) {
  PlanRequest r = plan_request("qwen3-30b-a3b", "p5en.48xlarge", tokens, 1, max_nodes, global_batch);
  r.seq_length = 4096;
  r.seed_layouts = 1;
  r.max_layouts_per_node_count = 2;
  return r;
}

}  // namespace moetwin::planning_test
