#include "moetwin/common/time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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

// The rule as time.hpp states it, with libm's round and ceil (to_ns computes it in integer steps).
TimeNs to_ns_by_round_and_ceil(double seconds) {
  const double ns = seconds * 1e9;
  const double nearest = std::round(ns);
  if (std::fabs(ns - nearest) < 1e-6) return static_cast<TimeNs>(nearest);
  return static_cast<TimeNs>(std::ceil(ns));
}

TEST(ToNs, EqualsTheRoundAndCeilRuleEverywhere) {
  // Edges: integers, halves, and values 1e-6 ns either side of an integer at several magnitudes (the
  // tolerance's boundary), up to 2^53 ns and beyond (where every double is an integer).
  for (const double base : {0.0, 1.0, 7.0, 1e3, 123456.0, 1e9, 4.5e12, 9007199254740992.0, 1e17}) {
    for (const double offset :
         {0.0, 0.5, 1e-6, -1e-6, 9.99e-7, -9.99e-7, 1.001e-6, -1.001e-6, 0.25, 0.999999}) {
      const double ns = base + offset;
      if (ns < 0) continue;
      for (const double s : {ns / 1e9, std::nextafter(ns / 1e9, 0.0), std::nextafter(ns / 1e9, 1.0)})
        EXPECT_EQ(to_ns(s), to_ns_by_round_and_ceil(s)) << s;
    }
  }
  // Random durations over 1 ps .. 1e6 s, log-uniform, and random exact-ish decimal costs.
  std::mt19937_64 rng(40);
  std::uniform_real_distribution<double> exponent(-12.0, 6.0);
  std::uniform_int_distribution<std::int64_t> units(0, 1'000'000'000);
  for (int i = 0; i < 200'000; ++i) {
    const double s = std::pow(10.0, exponent(rng));
    EXPECT_EQ(to_ns(s), to_ns_by_round_and_ceil(s)) << s;
    const double decimal = static_cast<double>(units(rng)) * 1e-7;
    EXPECT_EQ(to_ns(decimal), to_ns_by_round_and_ceil(decimal)) << decimal;
  }
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
