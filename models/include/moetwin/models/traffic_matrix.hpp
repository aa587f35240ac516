// A2A traffic of one dispatch (or combine) call, per EP rank and link class, derived from a routing plan:
//  - per_copy_traffic: one copy per (token, expert) to the expert's rank (Megatron alltoall over NCCL);
//    same-node pairs over NVLink, other nodes over the GPU's EFA rails.
//  - node_dedup_traffic: DeepEP normal kernels. A token goes once to each destination node over RDMA, to
//    the GPU with the sender's local index there (same rail), which forwards it over NVLink once to each
//    destination GPU of that node (rank-level dedup). Tokens for the sender's own node skip RDMA.
//  - uniform_alltoall_traffic: nccl-tests alltoall_perf (bytes/ranks to every rank).
// Combine moves the same tokens the other way: the traffic of the reverse call is the transpose, which for
// these per-rank summaries swaps out and in; dispatcher models account for that.
#pragma once

#include <cstdint>
#include <vector>

#include "moetwin/models/routing_plan.hpp"

namespace moetwin {

// Bytes one rank moves in one call, by link class. Sends to itself move no bytes over any link.
struct RankLegs {
  double nvlink_out = 0;                // bytes sent over NVLink
  double nvlink_in = 0;                 // bytes received over NVLink
  double network_out = 0;               // bytes sent over the GPU's EFA rails
  double network_in = 0;                // bytes received over the GPU's EFA rails
  std::int64_t network_tokens_out = 0;  // tokens (per-copy: copies) sent to other nodes
  std::int64_t network_tokens_in = 0;   // tokens (per-copy: copies) received from other nodes
  std::int64_t tokens = 0;              // tokens this rank routes (input of a permute kernel)
  std::int64_t copies_out = 0;          // (token, expert) copies it sends, itself included
  std::int64_t copies_in = 0;           // copies it receives, itself included (expert GEMM rows)
  int network_peers_out = 0;            // remote endpoints it sends to (ranks per-copy; nodes for dedup)
  int network_peers_in = 0;             // remote endpoints it receives from
  int nvlink_peers_out = 0;             // same-node GPUs it sends to
  // Bytes the DeepEP tests count as the "RDMA" leg: distinct (token, node) pairs incl. the own node.
  double counted_rdma = 0;
  // Bytes the intranode test counts ("NVL" leg): distinct tokens this rank receives, own included.
  double counted_nvlink = 0;
};

struct A2aTraffic {
  int ranks = 0;
  int ranks_per_node = 0;
  int nodes = 0;
  double bytes_per_token = 0;  // bytes per token copy (hidden x dtype bytes + scales)
  std::vector<RankLegs> legs;  // one per EP rank

  double total_network_bytes() const;  // sum of network_out over ranks
  double total_nvlink_bytes() const;   // sum of nvlink_out over ranks
  double max_network_bytes() const;    // max over ranks of max(out, in)
};

A2aTraffic per_copy_traffic(const LayerRouting& routing, double bytes_per_token);
A2aTraffic node_dedup_traffic(const LayerRouting& routing, double bytes_per_token);
// bytes_per_rank: what each rank sends in total (nccl-tests "size"); bytes_per_rank/ranks to each rank.
A2aTraffic uniform_alltoall_traffic(int ranks, int ranks_per_node, double bytes_per_rank);

// Bytes per token copy: hidden elements x dtype bytes, plus FP8 scales (one float per 128 elements, as
// DeepEP's FP8 dispatch and test_internode.py's byte count: hidden * (1 + 4/128)).
double token_bytes(int hidden, bool fp8);

}  // namespace moetwin
