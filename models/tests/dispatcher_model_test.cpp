// Dispatcher models: registry, hand-computed costs with round-number parameters, validity limits.
#include "moetwin/models/dispatcher_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>

#include "moetwin/common/input_error.hpp"
#include "moetwin/models/routing_plan.hpp"
#include "moetwin/test_support/routing_spec.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "tiny_routing.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

using test::tiny_plan;

TEST(DispatcherModel, EveryCatalogRecordMakesAModel) {
  for (const auto& [name, spec] : catalog().dispatchers()) {
    const auto m = make_dispatcher_model(spec);
    EXPECT_EQ(m->name(), name);
    EXPECT_FALSE(m->description().empty());
    EXPECT_FALSE(m->reference().empty());
    for (const auto& p : m->params().all()) {
      EXPECT_GE(p.value, p.min) << name << "." << p.name;
      EXPECT_LE(p.value, p.max) << name << "." << p.name;
      EXPECT_FALSE(p.source.empty()) << name << "." << p.name;
    }
  }
  DispatcherSpec unknown;
  unknown.name = "carrier-pigeon";
  EXPECT_THROW(make_dispatcher_model(unknown), InputError);
}

TEST(DispatcherModel, NcclAlltoallHandComputed) {
  auto m = make_dispatcher_model(catalog().dispatcher("nccl-alltoall"));
  ParamSet p = m->params();
  p.set("latency_rounds", 2);
  p.set("per_remote_peer_s", 1e-6);
  p.set("network_efficiency", 0.5);
  p.set("nvlink_efficiency", 0.8);
  m->set_params(p);
  const DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  EXPECT_DOUBLE_EQ(hw.rail_bandwidth(), 50e9);  // 4 x 100 Gb/s
  // 16 ranks, 16 MB per rank: 8 MB to the other node over 25 GB/s (320 us), 7 MB over NVLink at
  // 360 GB/s (19.4 us), 2 x 75 us base latency, 8 remote peers x 1 us: 478 us.
  const A2aCost c = m->cost(uniform_alltoall_traffic(16, 8, 16e6), A2aDirection::dispatch, hw);
  EXPECT_EQ(c.duration_ns, 478000);
  EXPECT_EQ(c.rank_ns.size(), 16u);
  EXPECT_DOUBLE_EQ(c.network_bytes, 16 * 8e6);
  EXPECT_THROW(p.set("network_efficiency", 1.5), InputError);
}

TEST(DispatcherModel, NcclPermuteKernelIsHbmBound) {
  const auto m = make_dispatcher_model(catalog().dispatcher("nccl-alltoall"));
  const DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  const A2aCost c = m->cost(per_copy_traffic(tiny_plan(), 1e6), A2aDirection::dispatch, hw);
  // Gating rank 0 permutes 1 token into 3 copies: 4 MB / (3.35 TB/s x 0.8) = 1.4925 us.
  EXPECT_EQ(c.gating_rank, 0);
  EXPECT_EQ(c.kernel_ns, 1493);
}

TEST(DispatcherModel, DeepEpTermsHandComputed) {
  auto m = make_dispatcher_model(catalog().dispatcher("deepep-nvshmem"));
  ParamSet p = m->params();
  p.set("latency_rounds", 1);
  p.set("rdma_efficiency", 1.0);
  p.set("combine_efficiency", 1.0);
  p.set("per_message_s", 0.0);
  p.set("per_message_s", "p5.48xlarge", 0.0);  // p5's own value (its low-latency rows) overrides
  p.set("inflight_writes", 3.75);              // 75 us round trip / 3.75 writes in flight = 20 us per write
  m->set_params(p);
  const DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  const A2aTraffic t = m->traffic(tiny_plan(), 1e6);
  // Rank 0: 75 us + max(1 MB / 50 GB/s = 20 us, 2 writes (1 chunk + 1 peer) x 20 us / 1 thread = 40 us).
  const A2aCost d = m->cost(t, A2aDirection::dispatch, hw);
  EXPECT_EQ(d.duration_ns, 115000);
  EXPECT_EQ(d.gating_rank, 0);
  EXPECT_EQ(d.sms, 24);
  EXPECT_EQ(d.kernel_ns, 0);
  // Combine: rank 2 sends the token back and pays the proxy cost.
  const A2aCost c = m->cost(t, A2aDirection::combine, hw);
  EXPECT_EQ(c.duration_ns, 115000);
  EXPECT_EQ(c.gating_rank, 2);
  // UCCL spreads the writes over 4 proxy threads: 10 us < 20 us of wire time.
  auto u = make_dispatcher_model(catalog().dispatcher("deepep-uccl"));
  ParamSet up = u->params();
  up.set("latency_rounds", 1);
  up.set("rdma_efficiency", 1.0);
  up.set("per_message_s", 0.0);
  up.set("per_message_s", "p5.48xlarge", 0.0);
  up.set("inflight_writes", 3.75);
  up.set("efa_gen2_efficiency", 1.0);
  u->set_params(up);
  EXPECT_EQ(u->cost(t, A2aDirection::dispatch, hw).duration_ns, 95000);
  // p5 has EFA gen 2: at efa_gen2_efficiency 0.5 the wire time doubles, 75 + max(40, 10) = 115 us.
  up.set("efa_gen2_efficiency", 0.5);
  u->set_params(up);
  EXPECT_EQ(u->cost(t, A2aDirection::dispatch, hw).duration_ns, 115000);
  // B300 (EFA gen 4) ignores it: 35 us + max(1 MB / 100 GB/s = 10 us, 2 writes x 35 us / 3.75 / 4
  // threads = 4.667 us) = 45 us.
  const DispatchHardware b300 = DispatchHardware::from_catalog(catalog(), "p6-b300.48xlarge", 2);
  EXPECT_EQ(u->cost(t, A2aDirection::dispatch, b300).duration_ns, 45000);
  // Combine uses combine_efficiency x the same factor: 1 MB / (50 GB/s x 0.5 x 0.5) = 80 us on p5.
  up.set("combine_efficiency", 0.5);
  u->set_params(up);
  EXPECT_EQ(u->cost(t, A2aDirection::combine, hw).duration_ns, 155000);
}

TEST(DispatcherModel, ValidityLimits) {
  const auto nvshmem = make_dispatcher_model(catalog().dispatcher("deepep-nvshmem"));
  const DispatchHardware b300 = DispatchHardware::from_catalog(catalog(), "p6-b300.48xlarge", 21);
  EXPECT_THROW(nvshmem->check(b300, 168), InputError);  // DeepEP v1 normal caps at 160 ranks
  EXPECT_EQ(nvshmem->check(b300, 128).size(), 1u);      // low-latency cap (64) warning only
  EXPECT_TRUE(nvshmem->check(b300, 64).empty());
  const auto uccl = make_dispatcher_model(catalog().dispatcher("deepep-uccl"));
  EXPECT_EQ(uccl->check(b300, 256).size(), 1u);
  const auto gin = make_dispatcher_model(catalog().dispatcher("deepep-v2-gin"));
  const DispatchHardware p5 = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 4);
  EXPECT_EQ(gin->check(p5, 32).size(), 1u);  // no EFA-GDA on p5: proxy fallback
  EXPECT_TRUE(gin->check(b300, 32).empty());
  // The fallback costs more per write than GPU-initiated posting.
  const A2aTraffic t = gin->traffic(tiny_plan(), 1e3);
  EXPECT_GT(gin->cost(t, A2aDirection::dispatch, p5).terms[3].seconds,
            gin->cost(t, A2aDirection::dispatch, b300).terms[3].seconds);
}

// DeepEP v1 over NVSHMEM IBGDA on a DGX H100 (InfiniBand, one 400 Gb/s NIC per GPU, 14 us base latency):
// the GPU posts its own writes (one posting "thread", no proxy), refused on EFA.
TEST(DispatcherModel, DeepEpIbgdaHandComputedAndOnlyOnInfiniband) {
  auto m = make_dispatcher_model(catalog().dispatcher("deepep-ibgda"));
  EXPECT_NE(m->reference().find("IBGDA"), std::string::npos) << m->reference();
  EXPECT_FALSE(m->params().has("efa_gen2_efficiency"));  // never on EFA: not a term it reads
  EXPECT_FALSE(m->params().has("fallback_per_message_s"));
  ParamSet p = m->params();
  p.set("latency_rounds", 1);
  p.set("rdma_efficiency", 1.0);
  p.set("per_message_s", 0.0);
  p.set("inflight_writes", 1);  // one write in flight: 14 us each
  m->set_params(p);
  const DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "dgx-h100", 2);
  EXPECT_DOUBLE_EQ(hw.rail_bandwidth(), 50e9);
  const A2aTraffic t = m->traffic(tiny_plan(), 1e6);
  // Rank 0: 14 us + max(1 MB / 50 GB/s = 20 us, 2 writes x 14 us = 28 us) = 42 us.
  const A2aCost d = m->cost(t, A2aDirection::dispatch, hw);
  EXPECT_EQ(d.duration_ns, 42000);
  EXPECT_EQ(d.sms, 24);
  const DispatchHardware p5 = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  EXPECT_THROW(m->cost(t, A2aDirection::dispatch, p5), InputError);
  EXPECT_THROW(m->check(p5, 16), InputError);
  // HybridEP: the same GPU-posted path, its own SMs, and its own reference.
  const auto h = make_dispatcher_model(catalog().dispatcher("hybridep"));
  EXPECT_NE(h->reference().find("HybridEP"), std::string::npos);
  EXPECT_EQ(h->cost(h->traffic(tiny_plan(), 1e6), A2aDirection::dispatch, hw).sms, 32);
}

TEST(DispatcherModel, PerMessageCostIsTheInstancesOwn) {
  auto u = make_dispatcher_model(catalog().dispatcher("deepep-uccl"));
  ParamSet p = u->params();
  p.set("per_message_s", 1e-6);
  p.set("per_message_s", "p5.48xlarge", 4e-6);
  p.set("inflight_writes", 3.75);
  u->set_params(p);
  EXPECT_DOUBLE_EQ(u->params().get("per_message_s", "p5.48xlarge"), 4e-6);
  EXPECT_DOUBLE_EQ(u->params().get("per_message_s", "p6-b300.48xlarge"), 1e-6);  // unscoped
  EXPECT_TRUE(u->params().scoped("per_message_s", "p5.48xlarge"));
  EXPECT_FALSE(u->params().scoped("per_message_s", "p6-b300.48xlarge"));
  // One write on p5: (4 us + 75 us / 3.75 in flight) / 4 proxy threads = 6 us; on p6-b300: (1 + 35 / 3.75)
  // / 4 = 2.5833 us.
  const DispatchHardware p5 = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  const DispatchHardware b300 = DispatchHardware::from_catalog(catalog(), "p6-b300.48xlarge", 2);
  EXPECT_NEAR(u->message_s(p5), 6e-6, 1e-15);
  EXPECT_NEAR(u->message_s(b300), (1e-6 + 35e-6 / 3.75) / 4, 1e-15);
  // NVSHMEM: one host proxy thread; NCCL's all-to-all has no posting path of its own.
  EXPECT_EQ(make_dispatcher_model(catalog().dispatcher("nccl-alltoall"))->message_s(p5), 0.0);
  EXPECT_THROW(p.set("per_message_s", "p9", 1e-6), InputError);
}

TEST(DispatcherModel, LowLatencyKernelsHandComputed) {
  // The per-copy model (without UCCL-EP's per-destination split: the next test).
  auto u = make_dispatcher_model(per_copy_view(catalog().dispatcher("deepep-uccl")));
  EXPECT_FALSE(u->params().has("ll_peer_s"));
  EXPECT_FALSE(u->params().has("ll_per_message_s"));
  ParamSet p = u->params();
  p.set("ll_latency_rounds", 1);
  p.set("rdma_efficiency", 1.0);
  p.set("efa_gen2_efficiency", 1.0);
  p.set("per_message_s", "p5.48xlarge", 4e-6);
  p.set("inflight_writes", 3.75);
  u->set_params(p);
  const DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  // Rank 0 sends 3 copies: one to its node's rank 1 over NVLink, two to node 1 over RDMA, one write each
  // (no node deduplication in the low-latency kernels). 75 us + max(2 MB / 50 GB/s = 40 us, 2 writes x 6 us
  // = 12 us) = 115 us.
  const A2aTraffic t = per_copy_traffic(tiny_plan(), 1e6);
  const std::optional<A2aCost> d = u->low_latency_cost(t, A2aDirection::dispatch, hw);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->duration_ns, 115000);
  EXPECT_EQ(d->gating_rank, 0);
  // With 100 kB copies the writes gate: 75 us + max(200 kB / 50 GB/s = 4 us, 2 x 6 us = 12 us) = 87 us.
  const A2aTraffic small = per_copy_traffic(tiny_plan(), 1e5);
  EXPECT_EQ(u->low_latency_cost(small, A2aDirection::dispatch, hw)->duration_ns, 87000);
  // NCCL's all-to-all has no low-latency kernels.
  const auto nccl = make_dispatcher_model(catalog().dispatcher("nccl-alltoall"));
  EXPECT_FALSE(nccl->low_latency_cost(t, A2aDirection::dispatch, hw).has_value());
}

// UCCL-EP's low-latency work per destination rank (ll_peer_s, per instance): serial with the writes on the
// posting path, counted per remote rank (not per node), and in combine per rank a copy goes back to; each
// write at ll_per_message_s, while the normal kernels and the in-training carry keep per_message_s.
TEST(DispatcherModel, LowLatencyPerPeerWorkHandComputed) {
  auto u = make_dispatcher_model(catalog().dispatcher("deepep-uccl"));
  ParamSet p = u->params();
  p.set("ll_latency_rounds", 1);
  p.set("rdma_efficiency", 1.0);
  p.set("combine_efficiency", 1.0);
  p.set("efa_gen2_efficiency", 1.0);
  p.set("ll_per_message_s", 1e-6);  // unscoped: p6-b300's
  p.set("ll_per_message_s", "p5.48xlarge", 4e-6);
  p.set("per_message_s", "p5.48xlarge", 16e-6);  // the per-copy model's: not read by the split
  p.set("inflight_writes", 3.75);
  p.set("ll_peer_s", 1e-6);  // unscoped: p6-b300's
  p.set("ll_peer_s", "p5.48xlarge", 5e-6);
  u->set_params(p);
  const DispatchHardware p5 = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  // Rank 0 sends 100 kB copies to ranks 2 and 3 of node 1: 2 writes x 6 us + 2 remote ranks x 5 us = 22 us
  // on the posting path (bytes: 200 kB / 50 GB/s = 4 us); 75 us + 22 us = 97 us (87 us without the peers).
  const A2aTraffic t = per_copy_traffic(tiny_plan(), 1e5);
  const std::optional<A2aCost> d = u->low_latency_cost(t, A2aDirection::dispatch, p5);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->duration_ns, 97000);
  EXPECT_EQ(d->gating_rank, 0);
  const auto term = [](const A2aCost& c, const std::string& name) {
    for (const A2aTerm& x : c.terms)
      if (x.name == name) return x.seconds;
    return -1.0;
  };
  EXPECT_NEAR(term(*d, "per_peer"), 10e-6, 1e-12);
  EXPECT_NEAR(term(*d, "proxy_messages"), 12e-6, 1e-12);
  // Combine: ranks 2 and 3 each write one copy back to one rank: 75 + 6 + 5 = 86 us.
  const std::optional<A2aCost> c = u->low_latency_cost(t, A2aDirection::combine, p5);
  EXPECT_EQ(c->duration_ns, 86000);
  EXPECT_NEAR(term(*c, "per_peer"), 5e-6, 1e-12);
  // p6-b300 takes the unscoped values: 35 us + 2 x (1 + 35 / 3.75) / 4 us + 2 x 1 us = 42.1667 us
  // (bytes: 200 kB / 100 GB/s = 2 us).
  const DispatchHardware b300 = DispatchHardware::from_catalog(catalog(), "p6-b300.48xlarge", 2);
  EXPECT_NEAR(static_cast<double>(u->low_latency_cost(t, A2aDirection::dispatch, b300)->duration_ns),
              35000 + 2 * (1 + 35 / 3.75) / 4 * 1000 + 2000, 1.0);
  // message_s (the normal kernels' and the carry's write) stays per_message_s's: (16 + 75 / 3.75) / 4 = 9 us.
  EXPECT_NEAR(u->message_s(p5), 9e-6, 1e-15);
  // The normal kernels never read it: their cost is the same at any ll_peer_s.
  const A2aTraffic dedup = u->traffic(tiny_plan(), 1e5);
  const TimeNs normal = u->cost(dedup, A2aDirection::dispatch, p5).duration_ns;
  p.set("ll_peer_s", "p5.48xlarge", 50e-6);
  u->set_params(p);
  EXPECT_EQ(u->cost(dedup, A2aDirection::dispatch, p5).duration_ns, normal);
  EXPECT_EQ(u->low_latency_cost(t, A2aDirection::dispatch, p5)->duration_ns, 75000 + 12000 + 100000);
  // A record without the term (DeepEP v1 over NVSHMEM: its rows grow with their copies) has no such work.
  const auto nv = make_dispatcher_model(catalog().dispatcher("deepep-nvshmem"));
  EXPECT_FALSE(nv->params().has("ll_peer_s"));
  EXPECT_EQ(term(*nv->low_latency_cost(t, A2aDirection::dispatch, p5), "per_peer"), 0.0);
}

TEST(DispatcherModel, SmCopyLegUsesTheRunsSms) {
  auto m = make_dispatcher_model(catalog().dispatcher("deepep-nvshmem"));
  ParamSet p = m->params();
  p.set("latency_rounds", 1);
  p.set("rdma_efficiency", 1.0);
  p.set("per_message_s", "p5.48xlarge", 0.0);
  p.set("inflight_writes", 3.75);  // 20 us per write, 2 writes: 40 us
  p.set("sm_write_bandwidth", 25e9);
  m->set_params(p);
  DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p5.48xlarge", 2);
  const A2aTraffic t = m->traffic(tiny_plan(), 1e6);
  // The record's 24 SMs copy rank 0's 2 MB (1 MB to node 1, 1 MB to rank 1 over NVLink) in 3.3 us: the
  // proxy's 40 us gates, 75 + 40 = 115 us.
  EXPECT_EQ(m->cost(t, A2aDirection::dispatch, hw).duration_ns, 115000);
  // On one SM: 2 MB / 25 GB/s = 80 us gates: 155 us, and the call reports the SMs it ran on.
  hw.comm_sms = 1;
  const A2aCost one = m->cost(t, A2aDirection::dispatch, hw);
  EXPECT_EQ(one.duration_ns, 155000);
  EXPECT_EQ(one.sms, 1);
}

// DeepEP v2's queue pairs: capping them at 2 (EP_EFA_MAX_QPS, DeepEP PR #612) instead of DeepEP's 129 cost
// about 3.2x dispatch latency at the kernel level on two p6-b200 (review of awsome-distributed-ai PR #1230).
// writes_per_qp was set from that one number (dispatchers.toml), so this guards the term, it does not
// validate it; the 129-QP call must stay what the benchmarks calibrated.
TEST(DispatcherModel, DeepEpV2QueuePairCap) {
  const auto v2 = make_dispatcher_model(catalog().dispatcher("deepep-v2-gin"));
  // test_low_latency.py: 128 tokens, top-8 of 256 over all experts, EP16 on 2 nodes
  RoutingSpec spec = test_support::routing_spec(RoutingKind::group_limited, 256, 8, 16, 8, 128);
  spec.groups = 2;
  spec.topk_groups = 2;
  spec.sampling = RoutingSampling::per_token;
  const A2aTraffic t = per_copy_traffic(RoutingPlanner(spec).plan(0, 0), token_bytes(7168, true));
  DispatchHardware hw = DispatchHardware::from_catalog(catalog(), "p6-b200.48xlarge", 2);
  hw.comm_sms = 64;  // ep-kernel-2026-09.csv: v2 ran on 64 SMs
  const double uncapped =
      static_cast<double>(v2->low_latency_cost(t, A2aDirection::dispatch, hw)->duration_ns);
  hw.gin_qps = 129;  // DeepEP's own count: min(129, 64 x 16 + 1)
  EXPECT_EQ(v2->low_latency_cost(t, A2aDirection::dispatch, hw)->duration_ns, static_cast<TimeNs>(uncapped));
  hw.gin_qps = 2;
  const double capped = static_cast<double>(v2->low_latency_cost(t, A2aDirection::dispatch, hw)->duration_ns);
  EXPECT_NEAR(capped / uncapped, 3.2, 0.32) << uncapped << " ns uncapped, " << capped << " ns capped";
  // At 129 queue pairs the GPU-side window binds: the per-write cost is the calibrated one.
  hw.gin_qps = 0;
  ParamSet p = v2->params();
  const double window = p.get("inflight_writes");
  EXPECT_NEAR(v2->message_s(hw), p.get("per_message_s", "p6-b200.48xlarge") + 35e-6 / window, 1e-15);
  // Capped: 2 x writes_per_qp writes in flight.
  hw.gin_qps = 2;
  EXPECT_NEAR(v2->message_s(hw),
              p.get("per_message_s", "p6-b200.48xlarge") + 35e-6 / (2 * p.get("writes_per_qp")), 1e-15);
}

}  // namespace
}  // namespace moetwin
