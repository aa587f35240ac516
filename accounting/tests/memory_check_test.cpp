// The memory model against the measured peaks it can describe (accounting/data/memory-checks.csv): prints
// the error per row and per source (the numbers of docs/2026-12-04-honest-bounds.md) and bounds them, so a
// change to the model that moves them shows here.
#include "moetwin/accounting/memory_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

TEST(MemoryCheck, ErrorPerSourceAgainstMeasuredPeaks) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const std::vector<MemoryCheck> checks =
      check_measured_memory(std::string(MOETWIN_SOURCE_DIR) + "/accounting/data/memory-checks.csv", catalog);
  ASSERT_EQ(checks.size(), 15u);
  for (const MemoryCheck& c : checks) {
    std::printf("row %2d %-28s %-9s measured %7.1f GiB model %7.1f GiB error %+6.1f%%  %s\n", c.measured_row,
                c.source.c_str(), c.compare.c_str(), c.measured_bytes / kGiB, c.predicted_bytes / kGiB,
                c.error * 100, c.label.c_str());
    EXPECT_TRUE(std::isfinite(c.error)) << c.label;
  }
  const std::vector<MemoryCheckSummary> summary = summarize_memory_checks(checks);
  for (const MemoryCheckSummary& s : summary) {
    std::printf("%-28s rows %2d median |error| %5.1f%% worst %+6.1f%% (row %d)\n", s.source.c_str(), s.rows,
                s.median_abs * 100, s.worst * 100, s.worst_row);
  }
  ASSERT_EQ(summary.back().source, "all");
  EXPECT_EQ(summary.back().rows, 15);
  // What the docs quote (2026-12-04: median |error| 40%, worst +76%): the bounds below are those numbers
  // rounded out, not targets. Where the counter is PyTorch's (allocated, reserved) the model errs high on
  // every row: a layout it says fits did fit; the totals of whole processes (nvidia-smi-like, LOW-rated
  // ms-swift figures) it underestimates by up to 25%, which the HBM headroom is for.
  EXPECT_LT(summary.back().median_abs, 0.45);
  for (const MemoryCheckSummary& s : summary) EXPECT_LT(std::abs(s.worst), 0.8) << s.source;
  for (const MemoryCheck& c : checks) {
    if (c.compare == "total")
      EXPECT_GT(c.error, -0.3) << c.label;
    else
      EXPECT_GT(c.error, 0) << c.label;
  }
}

TEST(MemoryCheck, BadRowNamesFileLineAndColumn) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const std::string path = ::testing::TempDir() + "bad-memory-checks.csv";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "measured_row,source,model,layers,dense_layers,mtp_layers,instance,tp,pp,vpp,ep,etp,dp,mb,gbs,seq,"
      "recompute,precision,distributed_optimizer,dispatcher,stage,compare,measured_mib,assumed\n"
      "1,x,qwen3-30b-a3b,48,0,0,p5.48xlarge,1,1,1,8,1,8,1,256,4096,sometimes,bf16,true,nccl-alltoall,0,"
      "allocated,100,none\n",
      f);
  std::fclose(f);
  try {
    (void)check_measured_memory(path, catalog);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bad-memory-checks.csv:2"), std::string::npos) << m;
    EXPECT_NE(m.find("recompute"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace moetwin
