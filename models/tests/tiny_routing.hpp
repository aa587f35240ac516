// A routing plan small enough to check A2A traffic and dispatcher costs by hand. Shared by the traffic
// matrix and dispatcher model tests.
#pragma once

#include <cstddef>

#include "moetwin/models/routing_plan.hpp"

namespace moetwin::test {

// 4 ranks, 2 per node, 1 token per rank, experts = ranks. Rank 0's token goes to ranks 1, 2, 3
// (copies 1 each); ranks 1-3 send nothing.
inline LayerRouting tiny_plan() {
  LayerRouting p;
  p.ep_ranks = 4;
  p.ranks_per_node = 2;
  p.nodes = 2;
  p.experts = 4;
  p.top_k = 3;
  p.tokens_per_rank = 1;
  p.copies.assign(16, 0);
  p.rank_tokens.assign(16, 0);
  p.node_tokens.assign(8, 0);
  p.expert_tokens = {0, 1, 1, 1};
  for (const std::size_t dst : {1u, 2u, 3u}) p.copies[dst] = p.rank_tokens[dst] = 1;
  p.node_tokens[0] = 1;  // own node (rank 1)
  p.node_tokens[1] = 1;  // node 1 (ranks 2, 3): once
  return p;
}

}  // namespace moetwin::test
