#include "moetwin/common/time.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace moetwin {
namespace {

TEST(ToNs, RoundsUpPartialNanoseconds) {
  EXPECT_EQ(to_ns(0.0), 0);
  EXPECT_EQ(to_ns(1.2e-9), 2);  // 1.2 ns costs 2: a cost never rounds down
  EXPECT_EQ(to_ns(3e-6), 3000);
}

TEST(ToNs, FloatingPointNoiseIsNotRoundedUp) {
  // 1e-4 * 1e9 is 100000.00000000001 in binary floating point: still 100 us.
  EXPECT_EQ(to_ns(1e-4), 100000);
  EXPECT_EQ(to_ns(0.1 + 0.2), 300000000);
}

TEST(ToNs, NegativeOrNonFiniteIsALogicError) {
  EXPECT_THROW(to_ns(-1e-9), std::logic_error);
  EXPECT_THROW(to_ns(std::numeric_limits<double>::quiet_NaN()), std::logic_error);
  EXPECT_THROW(to_ns(std::numeric_limits<double>::infinity()), std::logic_error);
}

TEST(CeilNs, RoundsUpButNotFloatNoise) {
  EXPECT_EQ(ceil_ns(0.0), 0);
  EXPECT_EQ(ceil_ns(999.2), 1000);
  EXPECT_EQ(ceil_ns(1000.0000000001), 1000);  // remaining / rate of an exact 1000 ns
  EXPECT_EQ(ceil_ns(3.0e9 * (1.0 + 1e-14)), 3'000'000'000);
  EXPECT_EQ(ceil_ns(3.0e9 + 1.0), 3'000'000'001);
}

TEST(CeilNs, OutOfRangeIsAnOverflow) {
  EXPECT_THROW(ceil_ns(1e19), std::overflow_error);
  EXPECT_THROW(ceil_ns(std::numeric_limits<double>::infinity()), std::overflow_error);
}

}  // namespace
}  // namespace moetwin
