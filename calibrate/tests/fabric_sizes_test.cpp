#include <gtest/gtest.h>

#include "moetwin/calibrate/fabric_bench.hpp"

namespace moetwin {
namespace {

TEST(FabricSizes, PowersOfTwoIncludingBothEnds) {
  EXPECT_EQ(fabric_sizes(8, 64), (std::vector<std::size_t>{8, 16, 32, 64}));
  EXPECT_EQ(fabric_sizes(8, 100), (std::vector<std::size_t>{8, 16, 32, 64, 100}));
  EXPECT_EQ(fabric_sizes(0, 2), (std::vector<std::size_t>{1, 2}));
  EXPECT_TRUE(fabric_sizes(16, 8).empty());
}

TEST(FabricBench, RejectsNonPositiveSettings) {
  FabricBenchOptions o;
  o.iterations = 0;
  EXPECT_THROW(run_fabric_bench(o), std::invalid_argument);
}

}  // namespace
}  // namespace moetwin
