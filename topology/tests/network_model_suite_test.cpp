// One suite, every network model (STYLE.md #13, after ns-3's simulator-test-suite): the same collective
// flow sets run against "analytical" and "simgrid", and each case asserts, per flow, that the duration
// (finish - start) agrees with the analytical model within 3%, plus a hand-computed anchor per case.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "moetwin/common/numbers.hpp"
#include "moetwin/topology/network_models.hpp"
#include "net_test_platforms.hpp"

namespace moetwin {
namespace {

using nettest::TestCluster;

constexpr double kTolerance = 0.03;  // relative, on flow durations: how closely every model must agree

class NetworkModelSuite : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<NetworkModel> model_ = make_network_model(GetParam());
  std::unique_ptr<NetworkModel> reference_ = make_network_model("analytical");

  // Runs the flows on the model under test and on the analytical model and compares every flow.
  NetworkRun run_and_compare(const NetPlatform& platform, const std::vector<FlowSpec>& flows) {
    const NetworkRun got = model_->run(platform, flows);
    const NetworkRun want = reference_->run(platform, flows);
    EXPECT_EQ(got.flows.size(), flows.size());
    double worst = 0;
    for (std::size_t i = 0; i < flows.size() && i < got.flows.size(); ++i) {
      const double d_got = static_cast<double>(got.flows[i].finish - flows[i].start);
      const double d_want = static_cast<double>(want.flows[i].finish - flows[i].start);
      const double error = std::abs(d_got - d_want) / std::max(1.0, d_want);
      worst = std::max(worst, error);
      EXPECT_LE(error, kTolerance) << "flow " << i << ": " << d_got << " ns vs analytical " << d_want
                                   << " ns";
    }
    const double makespan_error =
        std::abs(static_cast<double>(got.makespan - want.makespan)) / static_cast<double>(want.makespan);
    EXPECT_LE(makespan_error, kTolerance);
    // Per-link accounting follows from the flow times: same bytes, busy time within the tolerance.
    EXPECT_EQ(got.links.size(), want.links.size());
    for (std::size_t l = 0; l < got.links.size() && l < want.links.size(); ++l) {
      EXPECT_DOUBLE_EQ(got.links[l].bytes, want.links[l].bytes) << "link " << l;
      const double busy_error = std::abs(static_cast<double>(got.links[l].busy - want.links[l].busy)) /
                                std::max(1.0, static_cast<double>(want.links[l].busy));
      EXPECT_LE(busy_error, kTolerance) << "link " << l;
    }
    worst_ = std::max(worst_, worst);
    flows_ += flows.size();
    return got;
  }

  // The agreement numbers, for the log and the XML report.
  void TearDown() override {
    RecordProperty("worst_relative_error", format_significant(worst_, 3));
    std::printf("[ %s ] %zu flows compared, worst duration error vs analytical %s\n", GetParam().c_str(),
                flows_, format_significant(worst_, 3).c_str());
  }

  double worst_ = 0;
  std::size_t flows_ = 0;

  // Runs ring steps back to back: step k starts when step k - 1 has finished on this model.
  TimeNs run_ring(const TestCluster& c, const std::vector<int>& ranks, double chunk, int steps) {
    TimeNs start = 0;
    for (int s = 0; s < steps; ++s) {
      std::vector<FlowSpec> flows;
      nettest::add_ring_step(c, ranks, chunk, start, flows);
      start = run_and_compare(c.platform, flows).makespan;
    }
    return start;
  }
};

// Seconds -> ns, for the hand-computed anchors.
double ns(double seconds) {
  return seconds * 1e9;
}

TEST_P(NetworkModelSuite, AllToAllWithinEpGroupOf2_4_8Nodes) {
  for (const int nodes : {2, 4, 8}) {
    const TestCluster c = nettest::make_cluster(nodes);
    std::vector<int> members;
    for (int n = 0; n < nodes; ++n) {
      members.push_back(n);
    }
    // 64 MiB per GPU spread evenly over the group's GPUs.
    const double pair_bytes = 64 * kMiB / (8.0 * nodes);
    std::vector<FlowSpec> flows;
    nettest::add_all_to_all(c, members, pair_bytes, 0, flows);
    ASSERT_EQ(flows.size(), static_cast<std::size_t>(nodes * (nodes - 1) * 16 + nodes * 56));
    const NetworkRun run = run_and_compare(c.platform, flows);
    // Anchor: each NIC tx carries nodes - 1 equal rail flows of 4 * pair_bytes: the last finishes at
    // 4 us (route latency) + (nodes - 1) * 4 * pair_bytes / 50 GB/s.
    const double expect = ns(4e-6 + (nodes - 1) * 4 * pair_bytes / nettest::kNicBandwidth);
    EXPECT_NEAR(static_cast<double>(run.makespan), expect, kTolerance * expect) << nodes << " nodes";
  }
}

TEST_P(NetworkModelSuite, RingReduceScatterAllGatherAllReduce) {
  // 16 ranks over 2 nodes in ring order: 14 NVLink hops, 2 cross-node hops on rail 14 -> rail 0.
  const TestCluster c = nettest::make_cluster(2);
  std::vector<int> ranks;
  for (int g = 0; g < 16; ++g) {
    ranks.push_back(g);
  }
  const double buffer = 256 * kMiB;
  const double chunk = buffer / 16;
  // Each step is bounded by the cross-node hop: 4 us + 16 MiB / 50 GB/s = 339.5 us.
  const double step = ns(4e-6 + chunk / nettest::kNicBandwidth);
  const TimeNs reduce_scatter = run_ring(c, ranks, chunk, 15);
  EXPECT_NEAR(static_cast<double>(reduce_scatter), 15 * step, kTolerance * 15 * step);
  const TimeNs all_gather = run_ring(c, ranks, chunk, 15);
  EXPECT_NEAR(static_cast<double>(all_gather), 15 * step, kTolerance * 15 * step);
  const TimeNs all_reduce = run_ring(c, ranks, chunk, 30);
  EXPECT_NEAR(static_cast<double>(all_reduce), 30 * step, kTolerance * 30 * step);
}

TEST_P(NetworkModelSuite, PipelineSendRecvWithOverlappingDirections) {
  // 4 stages on 4 nodes; every GPU sends 32 MiB activations to the same GPU of the next stage (split over
  // its two rails), staggered, and a backward gradient send 3 -> 2 overlaps the forward 1 -> 2 on node 2's
  // receive NICs.
  const TestCluster c = nettest::make_cluster(4);
  std::vector<FlowSpec> flows;
  const double bytes = 32 * kMiB;
  nettest::add_pp_send(c, 0, 1, bytes, 0, flows);
  nettest::add_pp_send(c, 1, 2, bytes, 200'000, flows);
  nettest::add_pp_send(c, 3, 2, bytes, 300'000, flows);
  nettest::add_pp_send(c, 2, 3, bytes, 900'000, flows);
  const NetworkRun run = run_and_compare(c.platform, flows);
  // Stage 0 -> 1 alone: 4 us + 16 MiB / 50 GB/s = 339.5 us per rail flow.
  const double alone = ns(4e-6 + bytes / 2 / nettest::kNicBandwidth);
  EXPECT_NEAR(static_cast<double>(run.flows[0].finish), alone, kTolerance * alone);
  // 1 -> 2 and 3 -> 2 overlap on node 2's rx NICs for part of their transfer: the later one is slowed.
  EXPECT_GT(static_cast<double>(run.flows[32].finish - flows[32].start), 1.2 * alone);
}

TEST_P(NetworkModelSuite, TwoCollectivesOverlapOnSharedNics) {
  // An all-to-all among nodes 0-1 and, 50 us later, a ring all-gather step among all GPUs of nodes
  // 0-2 whose cross-node hops use the same NICs of nodes 0 and 1.
  const TestCluster c = nettest::make_cluster(3);
  std::vector<FlowSpec> flows;
  nettest::add_all_to_all(c, {0, 1}, 4 * kMiB, 0, flows);
  const std::size_t ring_first = flows.size();
  std::vector<int> ranks;
  for (int g = 0; g < 24; ++g) {
    ranks.push_back(g);
  }
  nettest::add_ring_step(c, ranks, 24 * kMiB, 50'000, flows);
  const NetworkRun run = run_and_compare(c.platform, flows);
  // Without overlap the ring's cross-node hop 0 -> 1 (rail 14 of node 0) would take 4 us + 24 MiB / 50 GB/s;
  // it shares node 0's nic14.tx with the all-to-all's rail-14 flow, so it takes longer.
  const std::size_t hop = ring_first + 7;  // GPU 7 (node 0) -> GPU 8 (node 1)
  ASSERT_EQ(flows[hop].src, 7);
  ASSERT_EQ(flows[hop].dst, 8);
  const double alone = ns(4e-6 + 24 * kMiB / nettest::kNicBandwidth);
  EXPECT_GT(static_cast<double>(run.flows[hop].finish - flows[hop].start), 1.05 * alone);
}

TEST_P(NetworkModelSuite, SkewedAllToAllWhereOneNodeReceives3x) {
  const TestCluster c = nettest::make_cluster(4);
  std::vector<FlowSpec> flows;
  const double pair_bytes = 2 * kMiB;
  nettest::add_all_to_all(c, {0, 1, 2, 3}, pair_bytes, 0, flows,
                          [](int node) { return node == 0 ? 3.0 : 1.0; });
  const NetworkRun run = run_and_compare(c.platform, flows);
  // Node 0's rx NICs each receive 3 flows of 3 * 4 * pair_bytes; tx NICs send 1 of those plus 2 normal
  // flows. Max-min: every NIC rx of node 0 splits 50 GB/s three ways, so the 3x flows finish at
  // 4 us + 3 * 12 * pair_bytes / 50 GB/s (the tx side never binds: each tx NIC carries at most 3 flows
  // and its other two finish first).
  const double expect = ns(4e-6 + 3 * 12 * pair_bytes / nettest::kNicBandwidth);
  EXPECT_NEAR(static_cast<double>(run.makespan), expect, kTolerance * expect);
}

TEST_P(NetworkModelSuite, FlowsWithDifferentLatenciesShareFairly) {
  // SimGrid's CM02 would weight shares by route latency (RTT unfairness); both models must be plain
  // max-min. Flow a: 10 ms route latency; flow b: none; both 1e9 B through a shared 1e9 B/s link.
  // [0, 10 ms): b alone moves 1e7 B. Then 5e8 B/s each: b's 9.9e8 B take 1.98 s -> b done at 1.99 s;
  // a has 1e7 B left, alone at 1e9 B/s: done at 2.00 s.
  NetPlatform p;
  const int slow = p.add_link({"slow", 1e12, 10e-3});
  const int fast = p.add_link({"fast", 1e12, 0});
  const int shared = p.add_link({"shared", 1e9, 0});
  p.seal();
  const NetworkRun run = run_and_compare(p, {{0, 2, 1e9, 0, {slow, shared}}, {1, 2, 1e9, 0, {fast, shared}}});
  EXPECT_EQ(run.flows[0].finish, 2'000'000'000);
  EXPECT_EQ(run.flows[1].finish, 1'990'000'000);
}

TEST_P(NetworkModelSuite, RepeatedRunsAreIdentical) {
  const TestCluster c = nettest::make_cluster(4);
  std::vector<FlowSpec> flows;
  nettest::add_all_to_all(c, {0, 1, 2, 3}, 1 * kMiB, 0, flows, [](int node) { return 1.0 + 0.5 * node; });
  nettest::add_ring_step(c, {0, 9, 18, 27}, 8 * kMiB, 20'000, flows);
  const NetworkRun a = model_->run(c.platform, flows);
  const NetworkRun b = model_->run(c.platform, flows);
  ASSERT_EQ(a.flows.size(), b.flows.size());
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.flows[i].finish, b.flows[i].finish) << "flow " << i;
  }
  for (std::size_t l = 0; l < a.links.size(); ++l) {
    EXPECT_EQ(a.links[l].busy, b.links[l].busy) << "link " << l;
  }
  EXPECT_EQ(a.makespan, b.makespan);
}

INSTANTIATE_TEST_SUITE_P(Models, NetworkModelSuite, ::testing::ValuesIn(network_model_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
}  // namespace moetwin
