// Hand-computed checks of the CPU references (these define the kernels' semantics; run everywhere).
#include "moetwin/kernels/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace moetwin::kernels {
namespace {

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even -> 1.0.
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256.0f), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even) -> up.
  EXPECT_EQ(float_to_bf16(1.0f + 3.0f / 256.0f), 0x3f82);
  EXPECT_FLOAT_EQ(bf16_to_float(0x4040), 3.0f);
}

TEST(PermuteReference, GathersRowsByMap) {
  // 3 tokens of hidden 2: token t holds {10t, 10t+1}.
  std::vector<std::uint16_t> in;
  for (int t = 0; t < 3; ++t) {
    in.push_back(float_to_bf16(static_cast<float>(10 * t)));
    in.push_back(float_to_bf16(static_cast<float>(10 * t + 1)));
  }
  std::vector<std::uint16_t> out;
  permute_reference(in, {2, 0, 2, 1}, 2, out);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(bf16_to_float(out[0]), 20.0f);
  EXPECT_EQ(bf16_to_float(out[1]), 21.0f);
  EXPECT_EQ(bf16_to_float(out[2]), 0.0f);
  EXPECT_EQ(bf16_to_float(out[4]), 20.0f);
  EXPECT_EQ(bf16_to_float(out[7]), 11.0f);
}

TEST(UnpermuteReference, WeightedSumOfRows) {
  // rows: r0 = {1, 2}, r1 = {4, 8}; token 0 takes 0.25*r1 + 0.5*r0 = {1 + 0.5, 2 + 1}; token 1 takes 1*r0.
  const std::vector<std::uint16_t> in = {float_to_bf16(1), float_to_bf16(2), float_to_bf16(4),
                                         float_to_bf16(8)};
  std::vector<std::uint16_t> out;
  unpermute_reference(in, {1, 0, 0, 0}, {0.25f, 0.5f, 1.0f, 0.0f}, 2, 2, 2, out);
  EXPECT_EQ(bf16_to_float(out[0]), 1.5f);
  EXPECT_EQ(bf16_to_float(out[1]), 3.0f);
  EXPECT_EQ(bf16_to_float(out[2]), 1.0f);
  EXPECT_EQ(bf16_to_float(out[3]), 2.0f);
}

TEST(RouterReference, SoftmaxTop2) {
  // logits ln(1), ln(2), ln(3), ln(4): softmax = 0.1, 0.2, 0.3, 0.4; top-2 = experts 3, 2.
  RouterConfig c;
  c.experts = 4;
  c.topk = 2;
  std::vector<std::int32_t> expert;
  std::vector<float> weight;
  router_reference({0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)}, {}, 1, c, expert, weight);
  EXPECT_EQ(expert, (std::vector<std::int32_t>{3, 2}));
  EXPECT_NEAR(weight[0], 0.4f, 1e-6);
  EXPECT_NEAR(weight[1], 0.3f, 1e-6);
  c.normalize = true;
  c.scale = 2.0f;
  router_reference({0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)}, {}, 1, c, expert, weight);
  EXPECT_NEAR(weight[0], 2.0f * 0.4f / 0.7f, 1e-6);
}

TEST(RouterReference, SigmoidGroupLimitedWithBias) {
  // 8 experts in 4 groups of 2; sigmoid(0) = 0.5. Keys = 0.5 + bias.
  // bias: g0 {0.4, 0.0} sum 1.4; g1 {0.3, 0.3} sum 1.6; g2 {0.45, -0.5} sum 0.95; g3 {0, 0} sum 1.0.
  // Best 2 groups: g1 (1.6), g0 (1.4). Top-3 keys among experts 0..3: e0 (0.9), e2 (0.8), e3 (0.8; tie
  // -> lower index first). Expert 4 (key 0.95) is masked with its group. Weights are the scores 0.5.
  RouterConfig c;
  c.experts = 8;
  c.groups = 4;
  c.topk_groups = 2;
  c.topk = 3;
  c.sigmoid = true;
  c.normalize = true;
  std::vector<std::int32_t> expert;
  std::vector<float> weight;
  router_reference(std::vector<float>(8, 0.0f), {0.4f, 0.0f, 0.3f, 0.3f, 0.45f, -0.5f, 0.0f, 0.0f}, 1, c,
                   expert, weight);
  EXPECT_EQ(expert, (std::vector<std::int32_t>{0, 2, 3}));
  EXPECT_NEAR(weight[0], 1.0f / 3.0f, 1e-6);
}

TEST(RouterReference, RejectsConfigsOutsideKernelLimits) {
  RouterConfig c;
  c.experts = 10;
  c.groups = 4;
  EXPECT_THROW(validate_router_config(c), std::invalid_argument);
  c.experts = 1024;
  c.groups = 1;
  EXPECT_THROW(validate_router_config(c), std::invalid_argument);
  c.experts = 8;
  c.topk = 17;
  EXPECT_THROW(validate_router_config(c), std::invalid_argument);
}

}  // namespace
}  // namespace moetwin::kernels
