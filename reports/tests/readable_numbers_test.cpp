#include "moetwin/reports/readable_numbers.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

TEST(ReadableCell, ShortensLongDecimalsToFourSignificantFigures) {
  EXPECT_EQ(readable_cell("5.236121"), "5.236");
  EXPECT_EQ(readable_cell("10.079190"), "10.08");
  EXPECT_EQ(readable_cell("0.123456"), "0.1235");
  EXPECT_EQ(readable_cell("-3.891891"), "-3.892");
  EXPECT_EQ(readable_cell("277.44"), "277.4");
  EXPECT_EQ(readable_cell("12345.678"), "12346");  // whole numbers from 1,000 up
  EXPECT_EQ(readable_cell("0.00012345"), "0.0001234");
}

TEST(ReadableCell, LeavesShortNumbersIntegersAndWordsAlone) {
  EXPECT_EQ(readable_cell("5.780"), "5.780");  // already 4 significant figures
  EXPECT_EQ(readable_cell("17560"), "17560");
  EXPECT_EQ(readable_cell("0.5"), "0.5");
  EXPECT_EQ(readable_cell("nccl-alltoall"), "nccl-alltoall");
  EXPECT_EQ(readable_cell("1.2345e+05"), "1.2345e+05");
  EXPECT_EQ(readable_cell("26.04.01"), "26.04.01");
  EXPECT_EQ(readable_cell(""), "");
}

TEST(ShortenLongDecimals, ShortensNumbersInSentencesAndKeepsEverythingElse) {
  EXPECT_EQ(shorten_long_decimals("Reference: nccl-alltoall, 5.236121 s per iteration (80% band 3.891891 to "
                                  "7.185405)."),
            "Reference: nccl-alltoall, 5.236 s per iteration (80% band 3.892 to 7.185).");
  EXPECT_EQ(shorten_long_decimals("ends 5.236121."), "ends 5.236.");
  EXPECT_EQ(shorten_long_decimals("stack nemo-26.04.01, run 20260601, h200x2 1e-05 9.1%"),
            "stack nemo-26.04.01, run 20260601, h200x2 1e-05 9.1%");
  EXPECT_EQ(shorten_long_decimals("v1.234567.8 and x1.234567"), "v1.234567.8 and x1.234567");
  EXPECT_EQ(shorten_long_decimals("-0.123456 s"), "-0.1235 s");
  EXPECT_EQ(shorten_long_decimals(""), "");
}

}  // namespace
}  // namespace moetwin
