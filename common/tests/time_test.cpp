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

}  // namespace
}  // namespace moetwin
