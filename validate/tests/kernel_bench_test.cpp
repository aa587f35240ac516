// Kernel-benchmark calibration: the shipped dispatcher parameters against the published dispatch/combine
// benchmarks, and the benchmark routing reproducing the benchmarks' byte counts.
#include "moetwin/validate/kernel_bench.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

std::vector<KernelBenchRow> both_kernel_files() {
  const std::string dir = std::string(MOETWIN_SOURCE_DIR) + "/validate/data/";
  std::vector<KernelBenchRow> rows = read_kernel_bench(dir + "ep-kernel-bench.csv");
  const std::vector<KernelBenchRow> sep = read_kernel_bench(dir + "ep-kernel-2026-09.csv");
  rows.insert(rows.end(), sep.begin(), sep.end());
  return rows;
}

TEST(KernelBench, ShippedParametersMeetTheAcceptanceBar) {
  const auto rows = both_kernel_files();
  ASSERT_EQ(rows.size(), 54u + 36u);
  // Errors per (transport, instance, kernel mode).
  std::map<std::string, std::vector<double>> errors;
  int accepted = 0;
  for (const auto& row : rows) {
    if (!in_acceptance_set(row)) continue;
    const PreparedBench b = prepare_bench(row, catalog(), BenchShape{});
    if (!b.modelled) {
      // Only rows of instances outside the catalog (the H800 InfiniBand reference) go unmodelled.
      EXPECT_EQ(b.skip_reason, "instance not in the catalog") << row.line;
      continue;
    }
    ++accepted;
    const auto m = make_dispatcher_model(catalog().dispatcher(row.transport));
    const std::string key = row.transport + " " + row.instance + " " + (b.low_latency ? "ll" : "normal");
    for (const double e : bench_errors(b, predict_bench(*m, b))) errors[key].push_back(std::fabs(e));
  }
  // 45 rows of ep-kernel-bench.csv and the 24 EP16 rows of ep-kernel-2026-09.csv (its 12 EP32 rows are
  // "a direction, not a measurement" per their source: predicted, not accepted).
  EXPECT_EQ(accepted, 69);
  // Median |error| per (transport, instance, kernel mode), calibrated on both files (2026-12-07). Issue 54's
  // bar: normal kernels <= 10%, low-latency <= 15%. The guards sit just above the shipped values so a
  // regression shows; the cells over the bar are named with their cause in
  // docs/2026-12-07-efa-rails-and-deepep.md: UCCL-EP p6-b200 normal (the two campaigns 62-70% apart at the
  // cell they share, run-to-run spread 0-0.7%), UCCL-EP p6-b300 normal (its 16-rank combine); and in
  // docs/2026-12-07-uccl-ll-per-peer.md: UCCL-EP low-latency on p5 (byte-bound at 5 GB/s, combine twice
  // dispatch: a loss per byte, not per peer) and p5en (its 16-rank combine), the cells the work per
  // destination rank (ll_peer_s) does not close; it took p6-b300 19.4 -> 13.8%, p6-b200 9.0 -> 4.5%, p5en
  // 29.0 -> 17.9% and p5 27.0 -> 28.4%.
  const std::map<std::string, double> bar = {
      {"nccl-alltoall p5.48xlarge normal", 0.04},       {"nccl-alltoall p6-b300.48xlarge normal", 0.07},
      {"deepep-nvshmem p5.48xlarge normal", 0.03},      {"deepep-nvshmem p6-b200.48xlarge normal", 0.10},
      {"deepep-nvshmem p6-b300.48xlarge normal", 0.07}, {"deepep-uccl p5.48xlarge normal", 0.05},
      {"deepep-uccl p5en.48xlarge normal", 0.10},       {"deepep-uccl p6-b200.48xlarge normal", 0.18},
      {"deepep-uccl p6-b300.48xlarge normal", 0.15},    {"deepep-v2-gin p6-b200.48xlarge normal", 0.05},
      {"deepep-nvshmem p5.48xlarge ll", 0.11},          {"deepep-nvshmem p6-b200.48xlarge ll", 0.06},
      {"deepep-nvshmem p6-b300.48xlarge ll", 0.09},     {"deepep-uccl p5.48xlarge ll", 0.29},
      {"deepep-uccl p5en.48xlarge ll", 0.18},           {"deepep-uccl p6-b200.48xlarge ll", 0.05},
      {"deepep-uccl p6-b300.48xlarge ll", 0.14},        {"deepep-v2-gin p6-b200.48xlarge ll", 0.07},
  };
  for (const auto& [key, guard] : bar) {
    ASSERT_TRUE(errors.count(key)) << key;
    EXPECT_LE(median(errors.at(key)), guard) << key;
  }
  EXPECT_EQ(errors.size(), bar.size());
}

TEST(KernelBench, CampaignFormatAndRunToRunSpread) {
  const auto rows =
      read_kernel_bench(std::string(MOETWIN_SOURCE_DIR) + "/validate/data/ep-kernel-2026-09.csv");
  ASSERT_EQ(rows.size(), 36u);
  // First row: UCCL-EP, EP16 decode FP8, 0.5258 ms slowest-rank dispatch+combine, the LL API (no SM count).
  EXPECT_EQ(rows[0].transport, "deepep-uccl");
  EXPECT_EQ(rows[0].mode, "low-latency");
  EXPECT_DOUBLE_EQ(rows[0].dispatch_us, 525.8);
  EXPECT_EQ(rows[0].comm_sms, 0);
  EXPECT_EQ(rows[0].tokens, 128);
  EXPECT_EQ(rows[0].campaign, "ep-b200-use1-n16-20260901054057");
  EXPECT_FALSE(rows[0].direction_only);
  int direction = 0;
  for (const auto& r : rows) direction += r.direction_only ? 1 : 0;
  EXPECT_EQ(direction, 12);  // the companion campaign's EP32 rows
  // The primary (16 starts) and companion (4 starts) campaigns share the 12 EP16 cells: run-to-run spread.
  double worst = 0;
  int shared = 0;
  for (const CampaignSpread& c : campaign_spreads(rows)) {
    ++shared;
    worst = std::max(worst, c.spread);
  }
  EXPECT_EQ(shared, 12);
  EXPECT_NEAR(worst, 0.026, 0.001);  // DeepEP v2 decode BF16: 483.9 vs 496.3 us
}

// The catalog holds what `dispatch --bench --fit` gives UCCL-EP's work per destination rank: calibrating
// from the shipped values on both files' acceptance rows comes back to them (stage 2 frees ll_peer_s with
// the write costs; the normal rows, which never read it, leave it alone), each instance's value identified
// by its own rows.
TEST(KernelBench, LowLatencyRowsIdentifyTheWorkPerDestinationRank) {
  std::vector<PreparedBench> prepared;
  for (const auto& row : both_kernel_files())
    if (row.transport == "deepep-uccl" && in_acceptance_set(row))
      prepared.push_back(prepare_bench(row, catalog(), BenchShape{}));
  std::vector<const PreparedBench*> set;
  for (const auto& b : prepared) set.push_back(&b);
  ASSERT_EQ(set.size(), 31u);  // UCCL-EP acceptance rows of both files, normal and low-latency
  const auto model = make_dispatcher_model(catalog().dispatcher("deepep-uccl"));
  const ParamSet fitted = calibrate_dispatcher_params(*model, set);
  for (const char* inst : {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"}) {
    ASSERT_TRUE(fitted.scoped("ll_peer_s", inst)) << inst;
    const double shipped = model->params().get("ll_peer_s", inst);
    EXPECT_GT(shipped, 1e-6) << inst;  // several us per peer: p5en 10, p6-b200 7.4, p5 21
    EXPECT_NEAR(fitted.get("ll_peer_s", inst), shipped, 0.01 * shipped) << inst;
  }
  // Stage 2a fits the per-copy model as before the split: the write cost the carry reads comes back too.
  for (const char* inst : {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"}) {
    const double shipped = model->params().get("per_message_s", inst);
    EXPECT_NEAR(fitted.get("per_message_s", inst), shipped, 0.01 * shipped) << inst;
  }
  // p6-b300 (the unscoped value): under 1 us.
  EXPECT_NEAR(fitted.get("ll_peer_s"), model->params().get("ll_peer_s"),
              0.01 * model->params().get("ll_peer_s"));
  // The normal-kernel stages alone never move it.
  std::vector<const PreparedBench*> normal;
  for (const PreparedBench* b : set)
    if (!b->low_latency) normal.push_back(b);
  auto zero = make_dispatcher_model(model->spec());
  ParamSet p = zero->params();
  p.set("ll_peer_s", "p5en.48xlarge", 0.0);
  zero->set_params(p);
  EXPECT_EQ(calibrate_dispatcher_params(*zero, normal).get("ll_peer_s", "p5en.48xlarge"), 0.0);
}

TEST(KernelBench, BenchRoutingReproducesTheTestByteCount) {
  // uccl README, p5en 32 ranks: 4096 tokens x E[distinct nodes] x 7392 B / 2022 us = 54 GB/s published.
  KernelBenchRow row;
  row.instance = "p5en.48xlarge";
  row.ranks = 32;
  row.nodes = 4;
  row.transport = "deepep-uccl";
  row.mode = "normal";
  const PreparedBench b = prepare_bench(row, catalog(), BenchShape{});
  double counted = 0;
  for (const auto& l : b.dispatch.legs) counted += l.counted_rdma;
  counted /= 32;
  // 4 nodes x (1 - C(192,8)/C(256,8)) = 3.60 distinct nodes per token.
  EXPECT_NEAR(counted / (4096 * 7392.0), 3.60, 0.02);
  EXPECT_NEAR(counted / 2022e-6 / 1e9, 54.0, 1.0);
}

}  // namespace
}  // namespace moetwin
