// The plan request plan's and --write-scenarios' tests share: Qwen3-30B on one p5en node, 1e9 tokens, a
// narrow screen (one seed layout, two per node count) on two threads, so a whole plan runs in seconds.
#pragma once

#include "moetwin/planning/plan.hpp"

namespace moetwin::planning_test {

inline PlanRequest small_request() {
  PlanRequest r;
  r.model = "qwen3-30b-a3b";
  r.instance = "p5en.48xlarge";
  r.tokens = 1e9;
  r.min_nodes = 1;
  r.max_nodes = 1;
  r.global_batch = 16;
  r.seq_length = 4096;
  r.seed_layouts = 1;
  r.max_layouts_per_node_count = 2;
  r.threads = 2;
  return r;
}

}  // namespace moetwin::planning_test
