#include "moetwin/planning/pareto.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

// (time, cost): a=(10, 100) b=(20, 50) c=(15, 120) dominated by a, d=(30, 50) dominated by b (slower,
// same cost), e=(5, 300), f=(10, 100) duplicate of a (the first is kept), g=(40, 10).
TEST(ParetoFront, HandMadePoints) {
  const std::vector<TimeCost> pts = {{10, 100}, {20, 50}, {15, 120}, {30, 50}, {5, 300}, {10, 100}, {40, 10}};
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{4, 0, 1, 6}));
}

TEST(ParetoFront, EqualTimeKeepsTheCheaper) {
  const std::vector<TimeCost> pts = {{10, 200}, {10, 100}};
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{1}));
}

TEST(ParetoFront, EmptyAndSingle) {
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{1, 1}}), (std::vector<std::size_t>{0}));
}

// Cost proportional to time at one node count: only the fastest survives.
TEST(ParetoFront, ProportionalCostKeepsOnlyTheFastest) {
  const std::vector<TimeCost> pts = {{3, 3 * 32.0}, {2, 2 * 32.0}, {4, 4 * 32.0}};
  EXPECT_EQ(pareto_front(pts), (std::vector<std::size_t>{1}));
}

}  // namespace
}  // namespace moetwin
