// A2A traffic: hand-computed legs for a 4-rank, 2-node plan; dedup never exceeds per-copy bytes.
#include "moetwin/models/traffic_matrix.hpp"

#include <gtest/gtest.h>

#include "moetwin/test_support/routing_spec.hpp"
#include "tiny_routing.hpp"

namespace moetwin {
namespace {

using test::tiny_plan;

TEST(TrafficMatrix, PerCopyLegs) {
  const A2aTraffic t = per_copy_traffic(tiny_plan(), 100.0);
  EXPECT_DOUBLE_EQ(t.legs[0].nvlink_out, 100.0);   // to rank 1
  EXPECT_DOUBLE_EQ(t.legs[0].network_out, 200.0);  // to ranks 2 and 3
  EXPECT_EQ(t.legs[0].network_peers_out, 2);
  EXPECT_DOUBLE_EQ(t.legs[2].network_in, 100.0);
  EXPECT_DOUBLE_EQ(t.legs[1].nvlink_in, 100.0);
  EXPECT_EQ(t.legs[0].copies_out, 3);
  EXPECT_EQ(t.legs[3].copies_in, 1);
  EXPECT_DOUBLE_EQ(t.total_network_bytes(), 200.0);
}

TEST(TrafficMatrix, NodeDedupLegs) {
  const A2aTraffic t = node_dedup_traffic(tiny_plan(), 100.0);
  // One RDMA send to node 1, to rank 2 (same local index 0), which forwards to rank 3 over NVLink.
  EXPECT_DOUBLE_EQ(t.legs[0].network_out, 100.0);
  EXPECT_DOUBLE_EQ(t.legs[2].network_in, 100.0);
  EXPECT_DOUBLE_EQ(t.legs[3].network_in, 0.0);
  EXPECT_DOUBLE_EQ(t.legs[2].nvlink_out, 100.0);
  EXPECT_DOUBLE_EQ(t.legs[3].nvlink_in, 100.0);
  EXPECT_DOUBLE_EQ(t.legs[0].nvlink_out, 100.0);    // own node: rank 0 forwards to rank 1
  EXPECT_DOUBLE_EQ(t.legs[0].counted_rdma, 200.0);  // two (token, node) pairs, own node included
  EXPECT_EQ(t.legs[0].network_tokens_out, 1);
  EXPECT_EQ(t.legs[2].network_tokens_in, 1);
}

TEST(TrafficMatrix, UniformAlltoall) {
  const A2aTraffic t = uniform_alltoall_traffic(16, 8, 16e6);
  EXPECT_DOUBLE_EQ(t.legs[0].network_out, 8e6);
  EXPECT_DOUBLE_EQ(t.legs[0].nvlink_out, 7e6);
  EXPECT_EQ(t.legs[5].network_peers_out, 8);
  EXPECT_EQ(t.nodes, 2);
}

TEST(TrafficMatrix, TokenBytes) {
  EXPECT_DOUBLE_EQ(token_bytes(7168, true), 7392.0);  // 7168 FP8 + 56 float scales
  EXPECT_DOUBLE_EQ(token_bytes(7168, false), 14336.0);
}

TEST(TrafficMatrix, DedupBytesNeverExceedPerCopyBytes) {
  for (const auto kind : {RoutingKind::balanced, RoutingKind::zipf, RoutingKind::group_limited}) {
    for (const auto sampling : {RoutingSampling::counts, RoutingSampling::per_token}) {
      for (const int ep : {8, 16, 64}) {
        RoutingSpec s = test_support::routing_spec(kind, 256, 8, ep, 8, 300);
        s.zipf_exponent = 1.1;
        s.groups = 8;
        s.topk_groups = 3;
        s.sampling = sampling;
        const LayerRouting p = RoutingPlanner(s).plan(2, 1);
        const A2aTraffic copy = per_copy_traffic(p, 7392.0);
        const A2aTraffic dedup = node_dedup_traffic(p, 7392.0);
        EXPECT_LE(dedup.total_network_bytes(), copy.total_network_bytes());
        for (int r = 0; r < ep; ++r)
          EXPECT_LE(dedup.legs[static_cast<std::size_t>(r)].network_out,
                    copy.legs[static_cast<std::size_t>(r)].network_out);
      }
    }
  }
}

}  // namespace
}  // namespace moetwin
