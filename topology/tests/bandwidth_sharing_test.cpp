// Max-min allocations worked by hand (progressive filling), plus the solver's input checks.
#include "moetwin/topology/bandwidth_sharing.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace moetwin {
namespace {

TEST(BandwidthSharing, EqualSplitOnOneLink) {
  BandwidthSharing sharing({10.0});
  const auto rates = sharing.solve({{0}, {0}});
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_DOUBLE_EQ(rates[0], 5.0);
  EXPECT_DOUBLE_EQ(rates[1], 5.0);
}

TEST(BandwidthSharing, BottleneckFreesCapacityElsewhere) {
  // Link 0 (10) carries f0, f1; link 1 (4) carries f1, f2. Round 1: link 1 share 2 < link 0 share 5, so
  // f1 = f2 = 2. Round 2: link 0 has 10 - 2 = 8 left for f0 alone.
  BandwidthSharing sharing({10.0, 4.0});
  const auto rates = sharing.solve({{0}, {0, 1}, {1}});
  EXPECT_DOUBLE_EQ(rates[0], 8.0);
  EXPECT_DOUBLE_EQ(rates[1], 2.0);
  EXPECT_DOUBLE_EQ(rates[2], 2.0);
}

TEST(BandwidthSharing, LongFlowAcrossAChain) {
  // Three links of capacity 1; f0 crosses all three, f1, f2, f3 one each: every link has 2 flows, all
  // shares 0.5 tie and saturate together.
  BandwidthSharing sharing({1.0, 1.0, 1.0});
  const auto rates = sharing.solve({{0, 1, 2}, {0}, {1}, {2}});
  for (const double rate : rates) {
    EXPECT_DOUBLE_EQ(rate, 0.5);
  }
}

TEST(BandwidthSharing, ThreeLevels) {
  // Link 0 (0.5): f0. Link 1 (3): f0, f1, f2. Link 2 (2): f2, f3, f4.
  // Round 1: shares 0.5, 1, 0.667 -> link 0: f0 = 0.5. Link 1: 2.5 left for f1, f2 -> 1.25.
  // Round 2: shares 1.25 (link 1), 0.667 (link 2) -> f2 = f3 = f4 = 2/3. Round 3: link 1 has
  // 3 - 0.5 - 2/3 = 1.8333 for f1.
  BandwidthSharing sharing({0.5, 3.0, 2.0});
  const auto rates = sharing.solve({{0, 1}, {1}, {1, 2}, {2}, {2}});
  EXPECT_DOUBLE_EQ(rates[0], 0.5);
  EXPECT_NEAR(rates[1], 3.0 - 0.5 - 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(rates[2], 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(rates[3], 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(rates[4], 2.0 / 3.0, 1e-12);
}

TEST(BandwidthSharing, LinkCrossedTwiceIsChargedTwice) {
  // f0 crosses link 0 twice, f1 once: 3 crossings share 9 -> 3 each; f0 consumes 6 of the 9.
  BandwidthSharing sharing({9.0});
  const auto rates = sharing.solve({{0, 0}, {0}});
  EXPECT_DOUBLE_EQ(rates[0], 3.0);
  EXPECT_DOUBLE_EQ(rates[1], 3.0);
}

TEST(BandwidthSharing, SharesWithinToleranceSaturateTogether) {
  // Links of 1 and 1 + 1e-12 (relative gap 1e-12 < tolerance 1e-9): one bottleneck level, so both flows
  // get exactly the smaller share rather than two values 1e-12 apart.
  BandwidthSharing sharing({1.0, 1.0 + 1e-12});
  const auto rates = sharing.solve({{0}, {1}});
  EXPECT_EQ(rates[0], 1.0);
  EXPECT_EQ(rates[1], 1.0);
  // With a zero tolerance they are two levels.
  BandwidthSharing exact({1.0, 1.0 + 1e-12}, SharingTolerance{0.0});
  const auto exact_rates = exact.solve({{0}, {1}});
  EXPECT_EQ(exact_rates[0], 1.0);
  EXPECT_EQ(exact_rates[1], 1.0 + 1e-12);
}

TEST(BandwidthSharing, UnusedLinksAndNoFlows) {
  BandwidthSharing sharing({1.0, 2.0, 4.0});
  EXPECT_TRUE(sharing.solve(std::vector<std::vector<int>>{}).empty());
  const auto rates = sharing.solve({{2}});
  EXPECT_DOUBLE_EQ(rates[0], 4.0);
}

TEST(BandwidthSharing, WorkspaceIsCleanBetweenCalls) {
  BandwidthSharing sharing({10.0, 4.0});
  const auto first = sharing.solve({{0}, {0, 1}, {1}});
  EXPECT_THROW(sharing.solve({{0}, {7}}), std::invalid_argument);
  const auto second = sharing.solve({{0}, {0, 1}, {1}});
  EXPECT_EQ(first, second);
  const auto alone = sharing.solve({{1}});
  EXPECT_DOUBLE_EQ(alone[0], 4.0);
}

TEST(BandwidthSharing, RejectsBadInput) {
  EXPECT_THROW(BandwidthSharing({1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(BandwidthSharing({-1.0}), std::invalid_argument);
  EXPECT_THROW(BandwidthSharing({1.0}, SharingTolerance{-1.0}), std::invalid_argument);
  BandwidthSharing sharing({1.0});
  EXPECT_THROW(sharing.solve({{}}), std::invalid_argument);
  EXPECT_THROW(sharing.solve({{-1}}), std::invalid_argument);
  EXPECT_THROW(sharing.solve({{1}}), std::invalid_argument);
}

}  // namespace
}  // namespace moetwin
