// NIC rails: the path mix per dispatcher, its time factor and aws-ofi-nccl's striping by hand, and the
// catalog's cross-rail efficiency against the raw EFA rail measurements it was set from.
#include "moetwin/models/rails.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/ofi_multi_recv.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "tiny_routing.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

TEST(Rails, PathMixPerDispatcher) {
  const DispatcherSpec& nccl = catalog().dispatcher("nccl-alltoall");
  // 8 GPUs per node: 7 of 8 destinations have another local index.
  const RailMix pxn = rail_mix(nccl, false, true, 8);
  EXPECT_DOUBLE_EQ(pxn.pxn, 0.875);
  EXPECT_DOUBLE_EQ(pxn.same_rail, 0.125);
  EXPECT_DOUBLE_EQ(pxn.cross_rail, 0.0);
  const RailMix own_nic = rail_mix(nccl, false, false, 8);
  EXPECT_DOUBLE_EQ(own_nic.cross_rail, 0.875);
  for (const char* deepep : {"deepep-uccl", "deepep-nvshmem", "deepep-v2-gin"}) {
    // Normal kernels: RDMA to the same local index only; low-latency kernels: straight to the expert.
    EXPECT_DOUBLE_EQ(rail_mix(catalog().dispatcher(deepep), false, true, 8).same_rail, 1.0) << deepep;
    EXPECT_DOUBLE_EQ(rail_mix(catalog().dispatcher(deepep), true, true, 8).cross_rail, 0.875) << deepep;
  }
}

TEST(Rails, TimeFactorByHand) {
  const InstanceSpec& p5 = catalog().instance("p5.48xlarge");
  ASSERT_DOUBLE_EQ(p5.cross_rail_efficiency, 0.46);
  // NCCL without PXN on p5: 1/8 + (7/8) / 0.46 = 2.0272 x the rail-aligned time.
  EXPECT_NEAR(rail_time_factor(RailMix{0.125, 0.875, 0}, p5), 0.125 + 0.875 / 0.46, 1e-12);
  // With PXN the network time stays rail-aligned.
  EXPECT_DOUBLE_EQ(rail_time_factor(RailMix{0.125, 0, 0.875}, p5), 1.0);
  // InfiniBand systems (no key): no cross-rail loss.
  EXPECT_DOUBLE_EQ(catalog().instance("dgx-h100").cross_rail_efficiency, 1.0);
}

TEST(Rails, OfiStripes) {
  EXPECT_EQ(ofi_stripes(32, 4), 1);               // under 64 B: one rail
  EXPECT_EQ(ofi_stripes(8 * 1024, 4), 1);         // ceil(8 KiB / 128 KiB) = 1
  EXPECT_EQ(ofi_stripes(512 * 1024, 4), 4);       // NCCL's 512 KiB chunk on p5: 4 stripes of 128 KiB
  EXPECT_EQ(ofi_stripes(384 * 1024, 4), 2);       // ceil = 3, largest divisor of 4 not above 3
  EXPECT_EQ(ofi_stripes(4 * 1024 * 1024, 2), 2);  // p5en / p6-b300: 2 rails
  EXPECT_EQ(ofi_stripes(4 * 1024 * 1024, 1), 1);  // p6-b200: 1 NIC per GPU
}

TEST(Rails, NcclWithoutPxnCrossesRailsByHand) {
  auto m = make_dispatcher_model(catalog().dispatcher("nccl-alltoall"));
  ParamSet p = m->params();
  p.set("latency_rounds", 0);
  p.set("per_remote_peer_s", 0);
  p.set("network_efficiency", 1.0);
  m->set_params(p);
  DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  // tiny_plan: rank 0 sends 2 MB to node 1 over 4 x 100 Gb/s = 50 GB/s: 40 us rail-aligned (PXN).
  const A2aTraffic t = per_copy_traffic(test::tiny_plan(), 1e6);
  const A2aCost with_pxn = m->cost(t, A2aDirection::dispatch, hw);
  hw.nccl_pxn = false;
  const A2aCost without = m->cost(t, A2aDirection::dispatch, hw);
  // The network term: 2 GPUs per node in tiny_plan's routing, but p5's 8 local indices decide the mix:
  // 40 us x (1/8 + 7/8 / 0.46).
  double net_with = 0, net_without = 0;
  for (const auto& term : with_pxn.terms)
    if (term.name == "network") net_with = term.seconds;
  for (const auto& term : without.terms)
    if (term.name == "network") net_without = term.seconds;
  EXPECT_NEAR(net_with, 40e-6, 1e-12);
  EXPECT_NEAR(net_without, 40e-6 * (0.125 + 0.875 / 0.46), 1e-12);
}

TEST(Rails, CatalogValueMatchesTheRailRows) {
  // validate/data/efa-rdma-alltoall.csv, source a (two p5): rail-aligned vs cross-rail GB/s per GPU by size.
  const CsvTable t = read_csv_file(std::string(MOETWIN_SOURCE_DIR) + "/validate/data/efa-rdma-alltoall.csv");
  std::map<double, double> aligned, cross;
  for (const CsvRow& r : t.rows) {
    if (r.fields[t.column("source")] != "a") continue;
    const double kb = std::stod(r.fields[t.column("msg_kb")]);
    const double gbps = std::stod(r.fields[t.column("gbps_per_gpu")]);
    (r.fields[t.column("pattern")] == "rail-aligned" ? aligned : cross)[kb] = gbps;
  }
  ASSERT_EQ(aligned.size(), 10u);
  ASSERT_EQ(cross.size(), 10u);
  std::vector<double> ratios;
  for (const auto& [kb, a] : aligned) ratios.push_back(cross.at(kb) / a);
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  // 0.37 (256 KiB) to 0.46 (2-4 MiB); the catalog takes the large-message ratio, where both are
  // bandwidth-bound (EP transfers are MiB-sized per peer).
  EXPECT_NEAR(*lo, 0.365, 0.01);
  EXPECT_NEAR(*hi, 0.46, 0.01);
  EXPECT_NEAR(catalog().instance("p5.48xlarge").cross_rail_efficiency, cross.at(4096) / aligned.at(4096),
              0.005);
}

TEST(Rails, MultiReceiveBoundByHand) {
  const StackSpec& nemo2608 = catalog().stack("nemo-26.08");
  ASSERT_TRUE(nemo2608.ofi_multi_recv);
  // With PXN, the 8 local GPUs' sub-messages to one peer share one control message: 1/8 to 1 x net_chunk_s.
  const MultiRecvBound b = multi_recv_bound(nemo2608, catalog().instance("p6-b200.48xlarge"));
  EXPECT_EQ(b.grouped_receives, 8);
  EXPECT_DOUBLE_EQ(b.chunk_cost_lo, 0.125);
  EXPECT_DOUBLE_EQ(b.chunk_cost_hi, 1.0);
  EXPECT_NE(b.why.find("0.125-1 x net_chunk_s"), std::string::npos) << b.why;
  // Without PXN nothing is grouped; a stack without multi-receive has no bound to state.
  const MultiRecvBound own_nic = multi_recv_bound(nemo2608, catalog().instance("p6-b200.48xlarge"), false);
  EXPECT_EQ(own_nic.grouped_receives, 1);
  EXPECT_DOUBLE_EQ(own_nic.chunk_cost_lo, 1.0);
  EXPECT_NE(own_nic.why.find("no effect without PXN"), std::string::npos) << own_nic.why;
  EXPECT_TRUE(
      multi_recv_bound(catalog().stack("nemo-26.04.01"), catalog().instance("p5.48xlarge")).why.empty());
}

}  // namespace
}  // namespace moetwin
