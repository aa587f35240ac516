// CPU references of the MoE kernels (kernels/src/*.cu): the GPU tests compare against these, and
// they document the exact semantics. bf16 values travel as their 16 raw bits (std::uint16_t).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace moetwin::kernels {

// bf16 <-> float with round-to-nearest-even, as __float2bfloat16 does (NaN kept quiet).
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

// permute (gather): out[r, :] = in[row_to_token[r], :] for r in [0, rows). in: [tokens, hidden].
void permute_reference(const std::vector<std::uint16_t>& in, const std::vector<std::int32_t>& row_to_token,
                       int hidden, std::vector<std::uint16_t>& out);

// unpermute (weighted gather back): out[t, :] = sum_j weight[t*topk+j] * in[token_to_row[t*topk+j], :],
// accumulated in fp32 in j order, rounded to bf16 once. in: [rows, hidden]; out: [tokens, hidden].
void unpermute_reference(const std::vector<std::uint16_t>& in, const std::vector<std::int32_t>& token_to_row,
                         const std::vector<float>& weight, int tokens, int topk, int hidden,
                         std::vector<std::uint16_t>& out);

// Router score + group-limited top-k (DeepSeek-V2/V3 style).
//   score = softmax(logits) over all experts, or sigmoid(logits) per expert;
//   selection key = score + bias[e] (bias empty -> 0; DeepSeek-V3's aux-loss-free bias);
//   experts form `groups` equal groups; a group's key is its max key (softmax) or the sum of its two
//   largest keys (sigmoid, as DeepSeek-V3); the `topk_groups` best groups stay, the others are masked;
//   the `topk` largest keys among unmasked experts are chosen (ties: lower index first);
//   weight = score of the chosen expert; with `normalize`, weights are divided by their sum;
//   then multiplied by `scale`. groups = 1 and topk_groups = 1 give plain top-k.
struct RouterConfig {
  int experts = 0;  // <= 512 and a multiple of `groups`
  int groups = 1;
  int topk_groups = 1;
  int topk = 1;  // <= 16
  bool sigmoid = false;
  bool normalize = false;
  float scale = 1.0f;
};
void router_reference(const std::vector<float>& logits, const std::vector<float>& bias, int tokens,
                      const RouterConfig& config, std::vector<std::int32_t>& expert,
                      std::vector<float>& weight);

// Throws std::invalid_argument naming the field when `config` is outside the kernels' limits.
void validate_router_config(const RouterConfig& config);

}  // namespace moetwin::kernels
