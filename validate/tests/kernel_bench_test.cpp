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
  // cell they share, run-to-run spread 0-0.7%), UCCL-EP p6-b300 normal (its 16-rank combine), UCCL-EP
  // low-latency on p5, p5en and p6-b300 (per-rank-count effects the model lacks).
  const std::map<std::string, double> bar = {
      {"nccl-alltoall p5.48xlarge normal", 0.04},       {"nccl-alltoall p6-b300.48xlarge normal", 0.07},
      {"deepep-nvshmem p5.48xlarge normal", 0.03},      {"deepep-nvshmem p6-b200.48xlarge normal", 0.10},
      {"deepep-nvshmem p6-b300.48xlarge normal", 0.07}, {"deepep-uccl p5.48xlarge normal", 0.05},
      {"deepep-uccl p5en.48xlarge normal", 0.10},       {"deepep-uccl p6-b200.48xlarge normal", 0.18},
      {"deepep-uccl p6-b300.48xlarge normal", 0.15},    {"deepep-v2-gin p6-b200.48xlarge normal", 0.05},
      {"deepep-nvshmem p5.48xlarge ll", 0.11},          {"deepep-nvshmem p6-b200.48xlarge ll", 0.06},
      {"deepep-nvshmem p6-b300.48xlarge ll", 0.09},     {"deepep-uccl p5.48xlarge ll", 0.28},
      {"deepep-uccl p5en.48xlarge ll", 0.30},           {"deepep-uccl p6-b200.48xlarge ll", 0.10},
      {"deepep-uccl p6-b300.48xlarge ll", 0.20},        {"deepep-v2-gin p6-b200.48xlarge ll", 0.07},
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
