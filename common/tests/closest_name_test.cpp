#include "moetwin/common/closest_name.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

TEST(ClosestName, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("micro_bach", "micro_batch"), 1u);   // one insertion
  EXPECT_EQ(edit_distance("mciro_batch", "micro_batch"), 1u);  // one swap
  EXPECT_EQ(edit_distance("micro_batch", "micro_batch"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ClosestName, SuggestsTheNearestKnownNameOrNothing) {
  const std::vector<std::string> keys = {"global_batch", "micro_batch", "seq_length", "tp", "dp"};
  EXPECT_EQ(closest_name("micro_bach", keys), "micro_batch");
  EXPECT_EQ(closest_name("seq_lenght", keys), "seq_length");
  EXPECT_EQ(closest_name("ep", keys), "");             // one edit from tp and dp, but half its length
  EXPECT_EQ(closest_name("nodes", {"model"}), "");     // two edits of five letters: another word
  EXPECT_EQ(closest_name("learning_rate", keys), "");  // nothing near
  EXPECT_EQ(did_you_mean("micro_bach", keys), " (did you mean `micro_batch`?)");
  EXPECT_EQ(did_you_mean("zzz", keys), "");
}

}  // namespace
}  // namespace moetwin
