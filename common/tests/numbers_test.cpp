#include "moetwin/common/numbers.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

TEST(Numbers, FormatsDeterministically) {
  EXPECT_EQ(format_fixed(3.14159, 3), "3.142");
  EXPECT_EQ(format_fixed(-0.0001, 2), "0.00");
  EXPECT_EQ(format_exact(0.1), "0.1");
  EXPECT_EQ(format_significant(123456.0, 3), "1.23e+05");
}

}  // namespace
}  // namespace moetwin
