#include "moetwin/common/parallel_for.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace moetwin {
namespace {

TEST(ParallelFor, RunsEveryIndexOnceForAnyThreadCount) {
  for (const int threads : {1, 2, 3, 8}) {
    std::vector<int> runs(1000, 0);
    parallel_for(runs.size(), threads, [&](std::size_t k) { ++runs[k]; });
    for (std::size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k], 1) << "index " << k << ", " << threads;
  }
  int calls = 0;
  parallel_for(0, 4, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, ReportsTheLowestFailingIndexLikeAPlainLoop) {
  // Indices 700 and 300 throw; a plain loop would stop at 300, and so must every thread count.
  for (const int threads : {1, 2, 4}) {
    std::vector<int> runs(1000, 0);
    try {
      parallel_for(runs.size(), threads, [&](std::size_t k) {
        ++runs[k];
        if (k == 300 || k == 700) throw std::runtime_error("failed at " + std::to_string(k));
      });
      FAIL() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "failed at 300") << threads << " threads";
    }
    for (std::size_t k = 0; k <= 300; ++k) ASSERT_EQ(runs[k], 1) << "index " << k << " skipped";
  }
}

TEST(ParallelFor, ThreadCountDefaultsToTheHardware) {
  EXPECT_EQ(thread_count(3), 3);
  EXPECT_GE(thread_count(0), 1);
  EXPECT_LE(thread_count(0), 16);
}

}  // namespace
}  // namespace moetwin
