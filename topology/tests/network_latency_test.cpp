// The cluster graph's network links carry the instance fabric's one-way latency (catalog/fabric_latency.hpp:
// EFA 10 us, InfiniBand 5 us), the same value the topology closed form charges per network step (issue 42,
// session 41). Before, every NIC tx carried EFA's 10 us, so a flow-level InfiniBand send was held at 10 us
// where the closed form says 5 us (build_collective_flows clips the closed form's latency minus the route's
// at 0). Hand values: DGX H100 (one 400 Gb/s ConnectX-7 per GPU) against p5 (four 100 Gb/s EFA rails per
// GPU): the same 50 GB/s per GPU, so the two differ by the latency alone.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "moetwin/catalog/fabric_latency.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_cluster.hpp"
#include "moetwin/topology/analytical_network.hpp"
#include "moetwin/topology/cluster.hpp"
#include "moetwin/topology/cluster_graph.hpp"
#include "moetwin/topology/collectives.hpp"

namespace moetwin {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

using test_support::catalog;

using test_support::sealed_cluster;

double route_latency(const Cluster& c, const std::vector<int>& route) {
  double s = 0;
  for (const int l : route) s += c.platform().links()[static_cast<std::size_t>(l)].latency;
  return s;
}

// DGX H100, 2 nodes: per node 8 GPUs x (nvl tx, rx) = links 0..15, then 8 NICs x (tx, rx) = 16..31. GPU 0 ->
// GPU 8 leaves on node 0's NIC 0 tx (16) and arrives on node 1's NIC 0 rx (32 + 17 = 49): 5 us, all of it on
// the tx. The same route on p5 (32 NICs per node, rail 0 of GPU 8 = NIC 0) pays 10 us.
TEST(NetworkLatency, InfinibandRouteCarriesFiveMicroseconds) {
  const Cluster ib = sealed_cluster("dgx-h100", 2);
  EXPECT_DOUBLE_EQ(ib.network_latency_s(), 5e-6);
  EXPECT_EQ(ib.route(0, 8), (std::vector<int>{16, 49}));
  EXPECT_EQ(ib.platform().links()[16].name, "n0.nic0.tx");
  EXPECT_DOUBLE_EQ(ib.platform().links()[16].latency, 5e-6);
  EXPECT_DOUBLE_EQ(ib.platform().links()[49].latency, 0.0);
  EXPECT_DOUBLE_EQ(route_latency(ib, ib.route(0, 8)), 5e-6);
  // Inside the node: one NVLink hop, 1 us, whatever the fabric.
  EXPECT_DOUBLE_EQ(route_latency(ib, ib.route(0, 1)), 1e-6);
  // The graph edge NIC -> fabric carries the same latency as its link.
  int nic_edges = 0;
  const ClusterGraph& g = ib.graph();
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    if (g[boost::source(*e, g)].kind != VertexKind::nic || g[*e].link < 0) continue;
    ++nic_edges;
    EXPECT_DOUBLE_EQ(g[*e].latency, 5e-6);
  }
  EXPECT_EQ(nic_edges, 16);

  const Cluster efa = sealed_cluster("p5.48xlarge", 2);
  EXPECT_EQ(efa.network_latency_s(), 10.0e-6);  // the same double EFA always charged: outputs unchanged
  EXPECT_DOUBLE_EQ(route_latency(efa, efa.route(0, 8)), 10e-6);

  // Every InfiniBand system, NVL72 trays included, takes the fabric's value; an AWS NVL72 tray EFA's.
  EXPECT_DOUBLE_EQ(sealed_cluster("dgx-gb200", 36).network_latency_s(), 5e-6);
  EXPECT_DOUBLE_EQ(sealed_cluster("dgx-b300", 2).network_latency_s(), 5e-6);
  EXPECT_DOUBLE_EQ(sealed_cluster("p6e-gb200.36xlarge", 36).network_latency_s(), 10e-6);
  EXPECT_DOUBLE_EQ(fabric_latency(Fabric::infiniband).one_way_s, 5e-6);
}

TEST(NetworkLatency, ExplicitValueWinsAndBadValuesAreRefused) {
  ClusterOptions o;
  o.network_latency_s = 7e-6;
  const Cluster ib = sealed_cluster("dgx-h100", 2, o);
  EXPECT_DOUBLE_EQ(ib.network_latency_s(), 7e-6);
  EXPECT_DOUBLE_EQ(route_latency(ib, ib.route(0, 8)), 7e-6);
  o.network_latency_s = 0.0;
  EXPECT_DOUBLE_EQ(sealed_cluster("p5.48xlarge", 2, o).network_latency_s(), 0.0);
  for (const double bad : {-1e-6, std::nan(""), std::numeric_limits<double>::infinity()}) {
    o.network_latency_s = bad;
    EXPECT_THROW(sealed_cluster("dgx-h100", 2, o), InputError) << bad;
  }
  ClusterOptions nvl;
  nvl.nvlink_latency_s = -1;
  EXPECT_THROW(sealed_cluster("dgx-h100", 2, nvl), InputError);
}

// A 64 MiB send from GPU 0 to GPU 8 (the next node) through the flow path (build_collective_flows + the
// analytical max-min model, what `moetwin net` runs). Closed form: 5 us on IB, 10 us on EFA, plus
// 64 MiB / (50 GB/s x f) on both (one 50 GB/s port vs four 12.5 GB/s rails each carrying a quarter: the same
// double). The flow path now differs by exactly 5 us too; it had been 0 (IB's route held at 10 us).
TEST(NetworkLatency, FlowSendOnDgxH100IsFiveMicrosecondsBelowP5) {
  const CollectiveRequest r{
      CollectiveKind::send_recv, default_algorithm(CollectiveKind::send_recv), 64 * kMiB, {0, 8}};
  const Cluster ib = sealed_cluster("dgx-h100", 2);
  const Cluster efa = sealed_cluster("p5.48xlarge", 2);
  const CollectiveEstimate closed_ib = estimate_collective(ib, r);
  const CollectiveEstimate closed_efa = estimate_collective(efa, r);
  EXPECT_DOUBLE_EQ(closed_ib.latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(closed_efa.latency_s, 10e-6);
  EXPECT_DOUBLE_EQ(closed_ib.network_s, closed_efa.network_s);

  const AnalyticalNetwork model;
  const CollectiveSimulation flow_ib = simulate_collective(ib, r, model);
  const CollectiveSimulation flow_efa = simulate_collective(efa, r, model);
  // One step: the route carries all of it, nothing on top.
  EXPECT_DOUBLE_EQ(build_collective_flows(ib, r).extra_latency_s, 0.0);
  EXPECT_DOUBLE_EQ(build_collective_flows(efa, r).extra_latency_s, 0.0);
  // The makespans are whole nanoseconds: 5,000 ns of latency plus the same transfer on both.
  EXPECT_EQ(flow_efa.run.makespan - flow_ib.run.makespan, 5000);
  EXPECT_NEAR(flow_efa.estimate.time_s - flow_ib.estimate.time_s, 5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(flow_ib.estimate.latency_s, 5e-6);
  // And each equals its closed form to the nanosecond the flow model rounds up to.
  EXPECT_NEAR(flow_ib.estimate.time_s, closed_ib.time_s, 1e-9);
  EXPECT_NEAR(flow_efa.estimate.time_s, closed_efa.time_s, 1e-9);
}

// A ring all-gather over the 16 GPUs of two nodes: one network step and 14 NVLink steps, 19 us on IB and
// 24 us on EFA in closed form. The route carries the network step and build_collective_flows adds the
// other 14 us on top, on both fabrics: 5 us apart in the flow path as in the closed form.
TEST(NetworkLatency, FlowRingAllGatherKeepsTheClosedFormsLatencyGap) {
  std::vector<int> ranks(16);
  std::iota(ranks.begin(), ranks.end(), 0);
  const CollectiveRequest r{CollectiveKind::all_gather, CollectiveAlgorithm::ring, 64 * kMiB, ranks};
  const Cluster ib = sealed_cluster("dgx-h100", 2);
  const Cluster efa = sealed_cluster("p5.48xlarge", 2);
  EXPECT_NEAR(build_collective_flows(ib, r).extra_latency_s, 14e-6, 1e-15);
  EXPECT_NEAR(build_collective_flows(efa, r).extra_latency_s, 14e-6, 1e-15);
  const AnalyticalNetwork model;
  const CollectiveSimulation flow_ib = simulate_collective(ib, r, model);
  const CollectiveSimulation flow_efa = simulate_collective(efa, r, model);
  EXPECT_EQ(flow_efa.run.makespan - flow_ib.run.makespan, 5000);
  EXPECT_NEAR(flow_efa.estimate.time_s - flow_ib.estimate.time_s, 5e-6, 1e-15);
  EXPECT_NEAR(flow_ib.estimate.latency_s, 19e-6, 1e-15);
  EXPECT_NEAR(flow_efa.estimate.latency_s, 24e-6, 1e-15);
}

}  // namespace
}  // namespace moetwin
