// Kernel-benchmark calibration: the shipped dispatcher parameters against the published dispatch/combine
// benchmarks, and the benchmark routing reproducing the benchmarks' byte counts.
#include "moetwin/validate/kernel_bench.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "moetwin/models/dispatcher_model.hpp"

namespace moetwin {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(Catalog::default_dir());
  return c;
}

TEST(KernelBench, ShippedParametersMeetTheAcceptanceBar) {
  const auto rows = read_kernel_bench(std::string(MOETWIN_SOURCE_DIR) + "/validate/data/ep-kernel-bench.csv");
  ASSERT_EQ(rows.size(), 42u);
  std::map<std::string, std::vector<double>> errors;
  int accepted = 0;
  for (const auto& row : rows) {
    if (!in_acceptance_set(row)) continue;
    ++accepted;
    const PreparedBench b = prepare_bench(row, catalog(), BenchShape{});
    ASSERT_TRUE(b.modelled) << row.line;
    const auto m = make_dispatcher_model(catalog().dispatcher(row.transport));
    for (const double e : bench_errors(b, predict_bench(*m, b)))
      errors[row.transport].push_back(std::fabs(e));
  }
  EXPECT_EQ(accepted, 15);
  ASSERT_EQ(errors.size(), 3u);
  // Acceptance: median |error| <= 15 % per transport (shipped: nccl 4.3 %, nvshmem 3.8 %, uccl 9.7 %;
  // uccl was 18.6 % before efa_gen2_efficiency). The guards are tighter than the bar so a regression shows.
  EXPECT_LE(median(errors.at("nccl-alltoall")), 0.05);
  EXPECT_LE(median(errors.at("deepep-nvshmem")), 0.05);
  EXPECT_LE(median(errors.at("deepep-uccl")), 0.10);
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
