#include "moetwin/topology/collectives.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "moetwin/common/numbers.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_cluster.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

using test_support::sealed_cluster;

std::vector<int> iota(int first, int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

CollectiveRequest request(CollectiveKind kind, double bytes, std::vector<int> ranks) {
  return CollectiveRequest{kind, default_algorithm(kind), bytes, std::move(ranks)};
}

// A stand-in network model for the plumbing tests (the real ones are tested in their own suite):
// every link's busy time is its bytes / bandwidth; the makespan is the slowest link plus the largest
// route latency. Exact for flow sets whose flows all cross their bottleneck at the same rate.
class BottleneckModel final : public NetworkModel {
 public:
  std::string name() const override { return "bottleneck"; }
  std::string description() const override { return "test: busiest link"; }
  std::string reference() const override { return "none"; }
  NetworkRun run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const override {
    NetworkRun r;
    std::vector<double> bytes(platform.links().size(), 0.0);
    double latency = 0;
    for (const FlowSpec& f : flows) {
      double lat = 0;
      for (int l : f.route) {
        bytes[static_cast<std::size_t>(l)] += f.bytes;
        lat += platform.links()[static_cast<std::size_t>(l)].latency;
      }
      latency = std::max(latency, lat);
    }
    double slowest = 0;
    r.links.resize(bytes.size());
    for (std::size_t l = 0; l < bytes.size(); ++l) {
      const double t = bytes[l] / platform.links()[l].bandwidth;
      r.links[l] = LinkUsage{bytes[l], static_cast<TimeNs>(std::llround(t * 1e9))};
      slowest = std::max(slowest, t);
    }
    r.makespan = static_cast<TimeNs>(std::llround((slowest + latency) * 1e9));
    r.flows.assign(flows.size(), FlowResult{r.makespan});
    return r;
  }
};

TEST(EfficiencyCurve, ValidatesAndLooksUpBands) {
  const EfficiencyCurve c = EfficiencyCurve::parse("0:0.5;65536:0.7;1048576:0.9", {"x.toml", 3});
  EXPECT_DOUBLE_EQ(c.factor(0), 0.5);
  EXPECT_DOUBLE_EQ(c.factor(65535), 0.5);
  EXPECT_DOUBLE_EQ(c.factor(65536), 0.7);
  EXPECT_DOUBLE_EQ(c.factor(1e12), 0.9);
  EXPECT_EQ(c.to_string(), "0:0.5;65536:0.7;1048576:0.9");
  EXPECT_EQ(EfficiencyCurve::parse(c.to_string(), {}), c);
  EXPECT_EQ(c, default_efa_efficiency());
  EXPECT_THROW(EfficiencyCurve({}), InputError);
  EXPECT_THROW(EfficiencyCurve::parse("10:0.5", {}), InputError);  // first band must start at 0
  EXPECT_THROW(EfficiencyCurve::parse("0:0.5;100:0.6;100:0.7", {}), InputError);  // not increasing
  EXPECT_THROW(EfficiencyCurve::parse("0:1.5", {}), InputError);
  EXPECT_THROW(EfficiencyCurve::parse("0:0", {}), InputError);
  EXPECT_THROW(EfficiencyCurve::parse("0;0.5", {}), InputError);
  try {
    EfficiencyCurve::parse("0:0.5;x:0.6", {"profile.toml", 7});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "profile.toml:7: band 1 min_bytes: x: expected a number");
  }
}

TEST(Collectives, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_to_all, 32), 31.0 / 32.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::send_recv, 2), 1.0);
}

// EP32 all-to-all of 64 MiB per GPU over 4 p6-b300 nodes: 2 MiB per peer; 7 peers on NVLink, 24 over the
// GPU's 2 x 400 Gb/s rails. Rails: 24 x 2 MiB / (100 GB/s x 0.9) = 559.24 us; NVLink: 7 x 2 MiB /
// (900 GB/s x 0.8) = 20.4 us; + one EFA latency 10 us.
TEST(Collectives, AllToAllClosedFormB300) {
  const Cluster c = sealed_cluster("p6-b300.48xlarge", 4);
  const double s = 64 * kMiB;
  const CollectiveEstimate e = estimate_collective(c, request(CollectiveKind::all_to_all, s, iota(0, 32)));
  EXPECT_EQ(e.ranks, 32);
  EXPECT_EQ(e.nodes, 4);
  EXPECT_EQ(e.ranks_per_node, 8);
  EXPECT_DOUBLE_EQ(e.message_bytes, 2 * kMiB);
  EXPECT_DOUBLE_EQ(e.network_bytes_per_rank, 24 * 2 * kMiB);
  EXPECT_DOUBLE_EQ(e.nvlink_bytes_per_rank, 7 * 2 * kMiB);
  EXPECT_EQ(e.bottleneck, "efa");
  EXPECT_DOUBLE_EQ(e.bandwidth_s, 24 * 2 * kMiB / 90e9);
  EXPECT_DOUBLE_EQ(e.latency_s, 10e-6);
  EXPECT_NEAR(e.time_s, 569.24e-6, 0.01e-6);
  EXPECT_NEAR(e.busbw / 1e9, s / 569.2404e-6 * 31 / 32 / 1e9, 0.01);
}

// The same on p5: 4 x 100 Gb/s rails per GPU = 50 GB/s: 24 x 2 MiB / 45 GB/s = 1118.48 us.
TEST(Collectives, AllToAllClosedFormP5) {
  const Cluster c = sealed_cluster("p5.48xlarge", 4);
  const CollectiveEstimate e =
      estimate_collective(c, request(CollectiveKind::all_to_all, 64 * kMiB, iota(0, 32)));
  EXPECT_DOUBLE_EQ(e.bandwidth_s, 24 * 2 * kMiB / 45e9);
  EXPECT_NEAR(e.time_s, 1128.48e-6, 0.01e-6);
}

// Inside one node: NVLink only, one NVLink latency.
TEST(Collectives, AllToAllInsideANode) {
  const Cluster c = sealed_cluster("p5en.48xlarge", 1);
  const CollectiveEstimate e =
      estimate_collective(c, request(CollectiveKind::all_to_all, 8 * kMiB, iota(0, 8)));
  EXPECT_EQ(e.bottleneck, "nvlink");
  EXPECT_DOUBLE_EQ(e.network_bytes_per_rank, 0);
  EXPECT_DOUBLE_EQ(e.bandwidth_s, 7 * kMiB / (450e9 * 0.8));
  EXPECT_DOUBLE_EQ(e.latency_s, 1e-6);
}

// Ring all-reduce of 1 GiB over 2 p5 nodes (16 ranks): each rank sends v = 2 x 15/16 GiB; a node's
// exit traffic v leaves over its 8 GPUs' rails (v/8 each at 45 GB/s), NVLink carries 7v/8 at 360 GB/s.
// Latency: 30 steps of which 2 cross nodes: 2 x 10 us + 28 x 1 us.
TEST(Collectives, RingAllReduceTwoNodes) {
  const Cluster c = sealed_cluster("p5.48xlarge", 2);
  const double s = kGiB, v = 2.0 * 15 / 16 * s;
  const CollectiveEstimate e = estimate_collective(c, request(CollectiveKind::all_reduce, s, iota(0, 16)));
  EXPECT_DOUBLE_EQ(e.network_bytes_per_rank, v / 8);
  EXPECT_DOUBLE_EQ(e.nvlink_bytes_per_rank, v * 7 / 8);
  EXPECT_EQ(e.bottleneck, "efa");
  EXPECT_DOUBLE_EQ(e.bandwidth_s, v / 8 / 45e9);
  EXPECT_NEAR(e.latency_s, 48e-6, 1e-12);
  // Bus bandwidth approaches the node's 400 GB/s of NICs x 0.9.
  EXPECT_NEAR(e.busbw / 1e9, s / (v / 8 / 45e9 + 48e-6) * 1.875 / 1e9, 1e-6);
}

// Reduce-scatter of 8 MiB inside one H100 node: 7/8 x 8 MiB over NVLink at 1 MiB steps (0.8 x 450 GB/s).
TEST(Collectives, RingReduceScatterOneNode) {
  const Cluster c = sealed_cluster("p5.48xlarge", 1);
  const CollectiveEstimate e =
      estimate_collective(c, request(CollectiveKind::reduce_scatter, 8 * kMiB, iota(0, 8)));
  EXPECT_DOUBLE_EQ(e.bandwidth_s, 7 * kMiB / 360e9);
  EXPECT_NEAR(e.latency_s, 7e-6, 1e-12);
  EXPECT_DOUBLE_EQ(e.algbw, 8 * kMiB / e.time_s);
}

// Calibrated NVLink parameters: a per-op curve replaces the shared one for that op only, and the call
// latency is paid once per call inside one node, never across nodes.
TEST(Collectives, CalibratedNvlinkCurvePerOpAndCallLatency) {
  const Cluster one = sealed_cluster("p5.48xlarge", 1);
  CollectiveParams p;
  p.nvlink_call_latency_s = 15e-6;
  p.nvlink_efficiency_by_kind.emplace(CollectiveKind::reduce_scatter, EfficiencyCurve::constant(0.5));
  // Reduce-scatter of 8 MiB on 8 GPUs: 7/8 x 8 MiB at 0.5 x 450 GB/s; 7 steps x 1 us + 15 us.
  const CollectiveEstimate rs =
      estimate_collective(one, request(CollectiveKind::reduce_scatter, 8 * kMiB, iota(0, 8)), p);
  EXPECT_DOUBLE_EQ(rs.bandwidth_s, 7 * kMiB / 225e9);
  EXPECT_NEAR(rs.latency_s, 22e-6, 1e-12);
  // All-gather has no curve of its own: the default 0.8 at 1 MiB steps.
  const CollectiveEstimate ag =
      estimate_collective(one, request(CollectiveKind::all_gather, 8 * kMiB, iota(0, 8)), p);
  EXPECT_DOUBLE_EQ(ag.bandwidth_s, 7 * kMiB / 360e9);
  // Across two nodes the call latency is not added (it was measured inside one node).
  const Cluster two = sealed_cluster("p5.48xlarge", 2);
  const CollectiveEstimate cross =
      estimate_collective(two, request(CollectiveKind::reduce_scatter, 8 * kMiB, iota(0, 16)), p);
  const CollectiveEstimate plain =
      estimate_collective(two, request(CollectiveKind::reduce_scatter, 8 * kMiB, iota(0, 16)));
  EXPECT_DOUBLE_EQ(cross.latency_s, plain.latency_s);
}

// Calibrated curves by GPU count (profile schema 4): each measured count's curve is read at the per-rank
// buffer; 3 GPUs interpolate linearly in log2(3) between the 2- and 4-GPU factors, 8 GPUs hold the
// 4-GPU factor, and ops without such curves keep the per-step-message curves.
TEST(Collectives, NvlinkEfficiencyByGpuCountAndBuffer) {
  const Cluster one = sealed_cluster("p5.48xlarge", 1);  // H100: 450 GB/s per direction
  CollectiveParams p;
  p.nvlink_efficiency_by_ranks[CollectiveKind::all_gather] = {{2, EfficiencyCurve({{0, 0.5}, {kMiB, 0.6}})},
                                                              {4, EfficiencyCurve({{0, 0.7}, {kMiB, 0.8}})}};
  p.nvlink_efficiency_by_ranks[CollectiveKind::all_to_all] = {{2, EfficiencyCurve::constant(0.4)}};
  // 2 and 4 GPUs read their own curve at the buffer (64 MiB: the second band; 512 KiB: the first).
  EXPECT_DOUBLE_EQ(p.nvlink_factor(CollectiveKind::all_gather, 2, 64 * kMiB, 0), 0.6);
  EXPECT_DOUBLE_EQ(p.nvlink_factor(CollectiveKind::all_gather, 4, 512 * kKiB, 0), 0.7);
  // 3 GPUs: 0.6 + (0.8 - 0.6) x (log2 3 - 1) = 0.6 + 0.2 x 0.5849625007211562 = 0.7169925001442312.
  EXPECT_NEAR(p.nvlink_factor(CollectiveKind::all_gather, 3, 64 * kMiB, 0), 0.7169925001442312, 1e-15);
  // All-gather of 64 MiB on 3 GPUs: 2/3 x 64 MiB over NVLink at that factor (the per-step message,
  // 21.3 MiB, plays no part), 2 steps x 1 us.
  const CollectiveEstimate three =
      estimate_collective(one, request(CollectiveKind::all_gather, 64 * kMiB, iota(0, 3)), p);
  EXPECT_NEAR(three.bandwidth_s, 2.0 / 3 * 64 * kMiB / (450e9 * 0.7169925001442312), 1e-15);
  // 8 GPUs: beyond the measured counts, the 4-GPU curve (0.8 at 64 MiB; 0.7 at 4 MiB, whose 512 KiB
  // per-step message would not matter either).
  const CollectiveEstimate eight =
      estimate_collective(one, request(CollectiveKind::all_gather, 64 * kMiB, iota(0, 8)), p);
  EXPECT_DOUBLE_EQ(eight.bandwidth_s, 7.0 / 8 * 64 * kMiB / (450e9 * 0.8));
  EXPECT_DOUBLE_EQ(p.nvlink_factor(CollectiveKind::all_gather, 8, 4 * kMiB, 512 * kKiB), 0.8);
  EXPECT_DOUBLE_EQ(p.nvlink_factor(CollectiveKind::all_gather, 8, 512 * kKiB, 64 * kKiB), 0.7);
  // One measured count: every group size reads it (all-to-all of 8 MiB on 8 GPUs at 0.4).
  const CollectiveEstimate a2a =
      estimate_collective(one, request(CollectiveKind::all_to_all, 8 * kMiB, iota(0, 8)), p);
  EXPECT_DOUBLE_EQ(a2a.bandwidth_s, 7.0 / 8 * 8 * kMiB / (450e9 * 0.4));
  // The flows (simulated path) carry the same efficiency: payload / 0.4 per pair, payload / factor on
  // the ring's NVLink hops.
  const CollectiveFlows flows =
      build_collective_flows(one, request(CollectiveKind::all_to_all, 8 * kMiB, iota(0, 8)), p);
  ASSERT_FALSE(flows.flows.empty());
  EXPECT_DOUBLE_EQ(flows.flows.front().bytes, kMiB / 0.4);
  const CollectiveFlows ring =
      build_collective_flows(one, request(CollectiveKind::all_gather, 64 * kMiB, iota(0, 3)), p);
  ASSERT_FALSE(ring.flows.empty());
  EXPECT_NEAR(ring.flows.front().bytes, ring.payload_bytes.front() / 0.7169925001442312, 1e-3);
  // Reduce-scatter has no curve by GPU count: the default per-step-message curve (0.8 from 1 MiB).
  const CollectiveEstimate rs =
      estimate_collective(one, request(CollectiveKind::reduce_scatter, 8 * kMiB, iota(0, 8)), p);
  EXPECT_DOUBLE_EQ(rs.bandwidth_s, 7 * kMiB / 360e9);
  // A skewed all-to-all reads the curve at n x its largest pair (here 8 x 1 MiB, still 0.4).
  std::vector<std::vector<double>> m(8, std::vector<double>(8, 0.5 * kMiB));
  m[0][1] = kMiB;
  const CollectiveFlows skewed = build_all_to_all_flows(one, iota(0, 8), m, p);
  EXPECT_DOUBLE_EQ(skewed.flows.front().bytes, kMiB / 0.4);
}

// Tree all-reduce over 4 nodes x 8: chain inside (2 s per rank over NVLink), trees between nodes (2 s per
// node over 8 GPUs' rails); latency 2 x (log2(4) x 10 us + 7 x 1 us) = 54 us.
TEST(Collectives, TreeAllReduce) {
  const Cluster c = sealed_cluster("p5.48xlarge", 4);
  CollectiveRequest r{CollectiveKind::all_reduce, CollectiveAlgorithm::tree, 256 * kMiB, iota(0, 32)};
  const CollectiveEstimate e = estimate_collective(c, r);
  EXPECT_DOUBLE_EQ(e.nvlink_bytes_per_rank, 512 * kMiB);
  EXPECT_DOUBLE_EQ(e.network_bytes_per_rank, 64 * kMiB);
  // NVLink chain (512 MiB at 0.8 x 450 GB/s) and rails (64 MiB at 0.9 x 50 GB/s) tie with the defaults.
  EXPECT_NEAR(e.bandwidth_s, 512 * kMiB / 360e9, 1e-15);
  EXPECT_NEAR(e.bandwidth_s, 64 * kMiB / 45e9, 1e-15);
  EXPECT_NEAR(e.latency_s, 54e-6, 1e-12);
  r.kind = CollectiveKind::all_gather;
  EXPECT_THROW(estimate_collective(c, r), InputError);
}

// PP send/recv of 1 MiB between nodes uses the sender's 4 rails: 1 MiB / 45 GB/s + 10 us.
TEST(Collectives, SendRecv) {
  const Cluster c = sealed_cluster("p5.48xlarge", 2);
  const CollectiveEstimate e = estimate_collective(c, request(CollectiveKind::send_recv, kMiB, {3, 11}));
  EXPECT_DOUBLE_EQ(e.time_s, kMiB / 45e9 + 10e-6);
  EXPECT_DOUBLE_EQ(e.busbw, e.algbw);
  EXPECT_THROW(estimate_collective(c, request(CollectiveKind::send_recv, kMiB, {1, 2, 3})), InputError);
  EXPECT_THROW(estimate_collective(c, request(CollectiveKind::all_to_all, kMiB, {1, 1})), InputError);
  EXPECT_THROW(estimate_collective(c, request(CollectiveKind::all_to_all, -1, {1, 2})), InputError);
  EXPECT_THROW(estimate_collective(c, request(CollectiveKind::all_to_all, 1, {1, 16})), InputError);
}

// An oversubscribed uplink (4:1) quarters the node's exit bandwidth for the ring: node egress v at
// 800/4 GB/s x 0.9 vs v/8 per GPU at 100 GB/s x 0.9 -> the uplink binds.
TEST(Collectives, OversubscribedUplinkBinds) {
  const Cluster c = sealed_cluster("p6-b300.48xlarge", 2, ClusterOptions{4.0});
  const CollectiveEstimate e = estimate_collective(c, request(CollectiveKind::all_gather, kGiB, iota(0, 16)));
  EXPECT_EQ(e.bottleneck, "uplink");
  EXPECT_DOUBLE_EQ(e.bandwidth_s, 15.0 / 16 * kGiB / (200e9 * 0.9));
}

// The aggregated flow set of the B300 EP32 all-to-all: 4 x 56 NVLink pairs + 12 node pairs x 16 rails.
TEST(CollectiveFlows, AllToAllAggregatesPerNodePairAndRail) {
  const Cluster c = sealed_cluster("p6-b300.48xlarge", 4);
  const CollectiveFlows f =
      build_collective_flows(c, request(CollectiveKind::all_to_all, 64 * kMiB, iota(0, 32)));
  ASSERT_EQ(f.flows.size(), 224u + 192u);
  EXPECT_DOUBLE_EQ(f.extra_latency_s, 0.0);
  // First flow: GPU 0 -> GPU 1 over NVLink, 2 MiB at efficiency 0.8.
  EXPECT_EQ(f.flows[0].src, 0);
  EXPECT_EQ(f.flows[0].dst, 1);
  EXPECT_EQ(f.flows[0].route, c.route(0, 1));
  EXPECT_DOUBLE_EQ(f.payload_bytes[0], 2 * kMiB);
  EXPECT_DOUBLE_EQ(f.flows[0].bytes, 2 * kMiB / 0.8);
  // Node 0 -> node 1: 64 GPU pairs x 2 MiB = 128 MiB over 16 rails = 8 MiB each; rail j pairs NIC j.
  const FlowSpec& r5 = f.flows[224 + 5];
  EXPECT_EQ(r5.src, 2);
  EXPECT_EQ(r5.dst, 10);
  EXPECT_EQ(r5.route, c.nic_route(0, 5, 1, 5));
  EXPECT_DOUBLE_EQ(f.payload_bytes[224 + 5], 8 * kMiB);
  double total = 0;
  for (double b : f.payload_bytes) total += b;
  EXPECT_DOUBLE_EQ(total, 32 * 31 * 2 * kMiB);
}

// Through a network model the flow path reproduces the closed form when nothing else shares the links:
// every NIC tx carries 3 node pairs x 8 MiB; link utilisation lists the NICs first.
TEST(CollectiveFlows, SimulatedAllToAllMatchesClosedForm) {
  const Cluster c = sealed_cluster("p6-b300.48xlarge", 4);
  const CollectiveRequest r = request(CollectiveKind::all_to_all, 64 * kMiB, iota(0, 32));
  const CollectiveSimulation sim = simulate_collective(c, r, BottleneckModel{});
  const CollectiveEstimate closed = estimate_collective(c, r);
  EXPECT_NEAR(sim.estimate.time_s, closed.time_s, 1e-9);
  ASSERT_FALSE(sim.links.empty());
  EXPECT_DOUBLE_EQ(sim.links.front().payload_bytes, 24 * kMiB);
  EXPECT_EQ(sim.links.front().link, c.nic_tx(0, 0));
  EXPECT_NEAR(sim.links.front().busy_fraction, 559.24 / 569.24, 1e-4);
  // 64 NIC tx + 64 NIC rx + 32 NVLink tx + 32 NVLink rx carried bytes.
  EXPECT_EQ(sim.links.size(), 192u);
}

// A node that receives 3x: node-pair totals follow the matrix exactly; rails split them evenly.
TEST(CollectiveFlows, SkewedAllToAllKeepsNodeTotals) {
  const Cluster c = sealed_cluster("p5en.48xlarge", 2);
  const std::vector<int> ranks = iota(0, 16);
  std::vector<std::vector<double>> m(16, std::vector<double>(16, kMiB));
  for (auto& row : m) {
    for (std::size_t j = 8; j < 16; ++j) row[j] = 3 * kMiB;
  }
  const CollectiveFlows f = build_all_to_all_flows(c, ranks, m);
  double to1 = 0, to0 = 0;
  std::size_t inter = 0;
  for (std::size_t i = 0; i < f.flows.size(); ++i) {
    if (c.node_of(f.flows[i].src) == c.node_of(f.flows[i].dst)) continue;
    ++inter;
    (c.node_of(f.flows[i].dst) == 1 ? to1 : to0) += f.payload_bytes[i];
  }
  EXPECT_EQ(inter, 32u);  // 2 directions x 16 rails
  EXPECT_DOUBLE_EQ(to1, 64 * 3 * kMiB);
  EXPECT_DOUBLE_EQ(to0, 64 * kMiB);
  // Efficiency read at the largest per-peer message (3 MiB: 0.9 on EFA).
  EXPECT_DOUBLE_EQ(f.flows.back().bytes, f.payload_bytes.back() / 0.9);
}

// Ring flows over 2 p5 nodes: 8 NVLink flows per node, each node's exit traffic over its 32 rails.
TEST(CollectiveFlows, RingFlowsAndLatency) {
  const Cluster c = sealed_cluster("p5.48xlarge", 2);
  const double s = kGiB, v = 2.0 * 15 / 16 * s;
  const CollectiveFlows f = build_collective_flows(c, request(CollectiveKind::all_reduce, s, iota(0, 16)));
  ASSERT_EQ(f.flows.size(), 16u + 64u);
  EXPECT_DOUBLE_EQ(f.payload_bytes[0], v * 7 / 8);
  EXPECT_EQ(f.flows[7].dst, 0);  // ring closes inside the node
  EXPECT_DOUBLE_EQ(f.payload_bytes[16], v / 32);
  EXPECT_NEAR(f.extra_latency_s, 38e-6, 1e-12);  // 48 us minus the 10 us the route carries
  const CollectiveSimulation sim =
      simulate_collective(c, request(CollectiveKind::all_reduce, s, iota(0, 16)), BottleneckModel{});
  EXPECT_NEAR(sim.estimate.time_s,
              estimate_collective(c, request(CollectiveKind::all_reduce, s, iota(0, 16))).time_s, 2e-9);
}

TEST(CollectiveFlows, SendRecvAndTreeShapes) {
  const Cluster c = sealed_cluster("p5.48xlarge", 4);
  const CollectiveFlows p2p =
      build_collective_flows(c, request(CollectiveKind::send_recv, 4 * kMiB, {3, 11}));
  ASSERT_EQ(p2p.flows.size(), 4u);  // one per rail
  EXPECT_EQ(p2p.flows[2].route, c.route(3, 11, 2));
  const CollectiveFlows tree = build_collective_flows(
      c, CollectiveRequest{CollectiveKind::all_reduce, CollectiveAlgorithm::tree, 8 * kMiB, iota(0, 32)});
  // 4 nodes x 7 chain links x 2 directions + 2 trees x 3 edges x 2 directions x 32 rails.
  EXPECT_EQ(tree.flows.size(), 56u + 384u);
}

}  // namespace
}  // namespace moetwin
