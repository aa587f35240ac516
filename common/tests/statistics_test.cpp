#include "moetwin/common/statistics.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "moetwin/common/fnv1a.hpp"

namespace moetwin {
namespace {

TEST(Statistics, MedianOfOddAndEvenCountsInAnyOrder) {
  EXPECT_DOUBLE_EQ(median_of({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({7.0}), 7.0);
}

TEST(Statistics, MedianOfNothingIsAnError) {
  EXPECT_THROW(median_of({}), std::logic_error);
}

TEST(Fnv1a, PublishedTestVectorsAndChaining) {
  // Test vectors of the FNV reference (isthe.com/chongo/tech/comp/fnv): "" -> offset basis, "a", "foobar".
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
  EXPECT_EQ(hex64(0x85944171f73967e8ULL), "85944171f73967e8");
  EXPECT_EQ(hex64(0), "0000000000000000");
}

}  // namespace
}  // namespace moetwin
