// Unit-test support: a routing spec by its sizes, for the routing, traffic and dispatcher tests (needs
// models/).
#pragma once

#include <cstdint>

#include "moetwin/models/routing_plan.hpp"

namespace moetwin::test_support {

// `tokens_per_rank` tokens on each of `ep_ranks` EP ranks (`ranks_per_node` to a node), each routed to
// `top_k` of `experts` experts, by `kind`; the other fields (seed 1, counts sampling, ...) RoutingSpec's
// defaults.
inline RoutingSpec routing_spec(RoutingKind kind, int experts, int top_k, int ep_ranks, int ranks_per_node,
                                std::int64_t tokens_per_rank) {
  RoutingSpec s{.kind = kind, .experts = experts, .top_k = top_k, .histogram = ExpertHistogram()};
  s.ep_ranks = ep_ranks;
  s.ranks_per_node = ranks_per_node;
  s.tokens_per_rank = tokens_per_rank;
  return s;
}

}  // namespace moetwin::test_support
