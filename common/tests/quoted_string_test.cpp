#include "moetwin/common/quoted_string.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

TEST(QuotedString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(quoted_string("plain"), "\"plain\"");
  EXPECT_EQ(quoted_string(""), "\"\"");
  EXPECT_EQ(quoted_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoted_string("line\nnext\ttab"), "\"line\\u000anext\\u0009tab\"");
  EXPECT_EQ(quoted_string(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  EXPECT_EQ(quoted_string("\x7f"), "\"\\u007f\"");
  EXPECT_EQ(quoted_string("H200 \xc3\xa9"), "\"H200 \xc3\xa9\"");  // UTF-8 passes through
}

}  // namespace
}  // namespace moetwin
