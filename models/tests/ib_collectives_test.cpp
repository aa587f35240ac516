// NCCL collectives on InfiniBand (issue 42 item 1): the DGX systems' IB rails enter the collective models
// through the same terms as EFA (per-GPU injection = nics_per_gpu x NIC rate; the alpha-beta model's base
// latency per network step; the topology closed form's per-step latency is the fabric's), checked against
// hand values.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/catalog/fabric_latency.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

Scenario two_nodes(const std::string& instance) {
  Scenario s;
  s.instance = catalog().instance(instance);
  s.gpu = catalog().gpu(s.instance.gpu);
  s.nodes = 2;
  return s;
}

std::vector<int> ranks(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

// Alpha-beta: a 1 GB all-reduce over 16 GPUs of two DGX H100 nodes is 2 x 15 steps of the IB latency
// (14 us, the catalog's assumption) plus 2 x 15/16 GB over one 400 Gb/s ConnectX-7 per GPU at 0.9.
TEST(IbCollectives, AlphaBetaAllReduceOnDgxH100ByHand) {
  const InstanceSpec& dgx = catalog().instance("dgx-h100");
  const AlphaBetaComm comm(dgx, catalog().gpu(dgx.gpu));
  const double expected = 2 * 15 * 14e-6 + 2.0 * 15 / 16 * 1e9 / (50e9 * 0.9);
  EXPECT_NEAR(comm.seconds(CollectiveOp::all_reduce, 1e9, ranks(16)), expected, 1e-12);
  // DGX B300: XDR, twice the injection: the bandwidth term halves, the latency stays.
  const InstanceSpec& b300 = catalog().instance("dgx-b300");
  const AlphaBetaComm xdr(b300, catalog().gpu(b300.gpu));
  EXPECT_NEAR(xdr.seconds(CollectiveOp::all_reduce, 1e9, ranks(16)),
              2 * 15 * 14e-6 + 2.0 * 15 / 16 * 1e9 / (100e9 * 0.9), 1e-12);
  // Inside one node NVLink carries it: no IB term.
  EXPECT_NEAR(comm.seconds(CollectiveOp::all_reduce, 1e9, ranks(8)),
              2 * 7 * 3e-6 + 2.0 * 7 / 8 * 1e9 / (450e9 * 0.8), 1e-12);
}

// The topology closed form the replay uses: a ring all-gather of 1 GiB over two nodes sends v / 8 per GPU
// over its rail (v = 15/16 GiB), at the rail's 0.9 for >= 1 MiB steps. One NDR port per GPU on DGX H100 is
// p5's four 100 Gb/s EFA rails per GPU in bandwidth: equal network terms; DGX B300's XDR halves it.
TEST(IbCollectives, TopologyRingAllGatherUsesThePerGpuInjection) {
  const double v = 15.0 / 16 * (1 << 30);
  CollectiveRequest r;
  r.kind = CollectiveKind::all_gather;
  r.algorithm = CollectiveAlgorithm::ring;
  r.bytes = 1 << 30;
  r.ranks = ranks(16);
  const Scenario dgx = two_nodes("dgx-h100");
  Cluster h100(dgx.instance, dgx.gpu, 2);
  h100.seal();
  const CollectiveEstimate ib = estimate_collective(h100, r);
  EXPECT_NEAR(ib.network_s, v / 8 / (50e9 * 0.9), 1e-12);
  EXPECT_EQ(ib.nodes, 2);
  EXPECT_EQ(ib.ranks_per_node, 8);
  // One step crosses the node boundary at InfiniBand's one-way latency (5 us, catalog/fabric_latency.hpp),
  // 14 stay on NVLink (1 us each): 19 us.
  EXPECT_NEAR(ib.latency_s, 5e-6 + 14 * 1e-6, 1e-12);
  const Scenario p5s = two_nodes("p5.48xlarge");
  Cluster p5(p5s.instance, p5s.gpu, 2);
  p5.seal();
  const CollectiveEstimate efa = estimate_collective(p5, r);
  EXPECT_NEAR(efa.network_s, ib.network_s, 1e-12);
  // The same ring on EFA pays EFA's 10 us on its network step: 24 us.
  EXPECT_NEAR(efa.latency_s, 10e-6 + 14 * 1e-6, 1e-12);
  const Scenario b300s = two_nodes("dgx-b300");
  Cluster b300(b300s.instance, b300s.gpu, 2);
  b300.seal();
  EXPECT_NEAR(estimate_collective(b300, r).network_s, ib.network_s / 2, 1e-12);
  // And the workload's seam on a DGX H100 scenario gives the same time.
  EXPECT_NEAR(TopologyComm(dgx).seconds(CollectiveOp::all_gather, 1 << 30, ranks(16)), ib.time_s, 1e-12);
}

// The per-step network latency of every closed-form algorithm is the fabric's, by hand on four DGX H100 nodes
// (32 GPUs, 8 per node) and four p5 nodes, 8 KiB (latency-bound): ring all-reduce 2 x 3 network steps + 2 x
// 28 NVLink steps; tree all-reduce 2 x (ceil(log2 4) network + 7 NVLink); an explicit step latency (a
// calibration profile's [efa]) wins over the fabric's.
TEST(IbCollectives, NetworkStepLatencyIsTheFabricsByHand) {
  const Scenario dgx = two_nodes("dgx-h100");
  Cluster ib(dgx.instance, dgx.gpu, 4);
  ib.seal();
  const Scenario p5s = two_nodes("p5.48xlarge");
  Cluster efa(p5s.instance, p5s.gpu, 4);
  efa.seal();
  CollectiveRequest r;
  r.kind = CollectiveKind::all_reduce;
  r.algorithm = CollectiveAlgorithm::ring;
  r.bytes = 8192;
  r.ranks = ranks(32);
  EXPECT_NEAR(estimate_collective(ib, r).latency_s, 6 * 5e-6 + 56 * 1e-6, 1e-12);    // 86 us
  EXPECT_NEAR(estimate_collective(efa, r).latency_s, 6 * 10e-6 + 56 * 1e-6, 1e-12);  // 116 us
  r.algorithm = CollectiveAlgorithm::tree;
  EXPECT_NEAR(estimate_collective(ib, r).latency_s, 2 * (2 * 5e-6 + 7 * 1e-6), 1e-12);    // 34 us
  EXPECT_NEAR(estimate_collective(efa, r).latency_s, 2 * (2 * 10e-6 + 7 * 1e-6), 1e-12);  // 54 us
  CollectiveParams fitted;
  fitted.network_step_latency_s = 20e-6;
  EXPECT_NEAR(estimate_collective(ib, r, fitted).latency_s, 2 * (2 * 20e-6 + 7 * 1e-6), 1e-12);
  EXPECT_DOUBLE_EQ(fitted.network_step_latency(ib.instance()), 20e-6);
  EXPECT_DOUBLE_EQ(CollectiveParams{}.network_step_latency(ib.instance()), 5e-6);
  EXPECT_DOUBLE_EQ(CollectiveParams{}.network_step_latency(efa.instance()), 10e-6);
  // EFA's is the 10 us the cluster graph's NIC links carry: the same double since topology's first version.
  EXPECT_EQ(fabric_latency(Fabric::efa).one_way_s, 10.0e-6);
}

}  // namespace
}  // namespace moetwin
