// The GEMM shapes the calibration measures, and their rounding for FP8 (CUDA builds: the shapes live in
// the GPU library, but these tests run no GPU code).
#include "../src/gpu/gemm_shapes.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace moetwin::gpu {
namespace {

TEST(GemmShapes, RoundedDimsRoundUpToTheMultiple) {
  const GemmShape s{"x.m100", "grouped_gemm", "x", 100, 576, 7, 8};
  const GemmShape r = rounded_dims(s, 16);
  EXPECT_EQ(r.m, 112);
  EXPECT_EQ(r.n, 576);
  EXPECT_EQ(r.k, 16);
  EXPECT_EQ(r.batch, 8);
  EXPECT_EQ(r.name, "x.m100");
  EXPECT_EQ(r.op, "grouped_gemm");
}

TEST(GemmShapes, FullListIsAlreadyFp8Aligned) {
  // FP8 cuBLASLt needs multiples of 16: every catalog shape already is one, so the FP8 sweep measures
  // exactly the bf16 shapes and the two curve sets compare shape by shape.
  std::set<std::string> names;
  for (const bool quick : {false, true}) {
    for (const GemmShape& s : calibration_gemm_shapes(quick)) {
      const GemmShape r = rounded_dims(s, 16);
      EXPECT_EQ(r.m, s.m) << s.name;
      EXPECT_EQ(r.n, s.n) << s.name;
      EXPECT_EQ(r.k, s.k) << s.name;
      if (!quick) {
        EXPECT_TRUE(names.insert(s.name).second) << s.name;
      }
    }
  }
  EXPECT_EQ(names.size(), 190u);
}

}  // namespace
}  // namespace moetwin::gpu
