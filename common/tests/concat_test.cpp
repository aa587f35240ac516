#include "moetwin/common/concat.hpp"

#include <gtest/gtest.h>

#include <string>

namespace moetwin {
namespace {

TEST(Concat, AppendsPiecesInOrder) {
  EXPECT_EQ(concat({"n", std::to_string(16), " tp", std::to_string(8), "."}), "n16 tp8.");
  const std::string owned = "abc";
  EXPECT_EQ(concat({owned, "", std::string_view(owned).substr(1)}), "abcbc");
}

TEST(Concat, EmptyListGivesEmptyString) {
  EXPECT_EQ(concat({}), "");
}

}  // namespace
}  // namespace moetwin
