// CPU references (semantics in reference.hpp).
#include "moetwin/kernels/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace moetwin::kernels {

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float value = 0;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

std::uint16_t float_to_bf16(float value) {
  std::uint32_t word = 0;
  std::memcpy(&word, &value, sizeof word);
  if (std::isnan(value)) return static_cast<std::uint16_t>((word >> 16) | 0x40U);
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit.
  word += 0x7fffU + ((word >> 16) & 1U);
  return static_cast<std::uint16_t>(word >> 16);
}

void permute_reference(const std::vector<std::uint16_t>& in, const std::vector<std::int32_t>& row_to_token,
                       int hidden, std::vector<std::uint16_t>& out) {
  const auto h = static_cast<std::size_t>(hidden);
  out.assign(row_to_token.size() * h, 0);
  for (std::size_t r = 0; r < row_to_token.size(); ++r) {
    const auto t = static_cast<std::size_t>(row_to_token[r]);
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(t * h), h,
                out.begin() + static_cast<std::ptrdiff_t>(r * h));
  }
}

void unpermute_reference(const std::vector<std::uint16_t>& in, const std::vector<std::int32_t>& token_to_row,
                         const std::vector<float>& weight, int tokens, int topk, int hidden,
                         std::vector<std::uint16_t>& out) {
  const auto h = static_cast<std::size_t>(hidden);
  out.assign(static_cast<std::size_t>(tokens) * h, 0);
  for (std::size_t t = 0; t < static_cast<std::size_t>(tokens); ++t) {
    for (std::size_t c = 0; c < h; ++c) {
      float acc = 0;
      for (std::size_t j = 0; j < static_cast<std::size_t>(topk); ++j) {
        const std::size_t slot = t * static_cast<std::size_t>(topk) + j;
        const auto row = static_cast<std::size_t>(token_to_row[slot]);
        acc += weight[slot] * bf16_to_float(in[row * h + c]);
      }
      out[t * h + c] = float_to_bf16(acc);
    }
  }
}

void validate_router_config(const RouterConfig& c) {
  if (c.experts < 1 || c.experts > 512) throw std::invalid_argument("router: experts must be in [1, 512]");
  if (c.groups < 1 || c.experts % c.groups != 0)
    throw std::invalid_argument("router: groups must divide experts");
  if (c.groups > 32) throw std::invalid_argument("router: groups must be <= 32");
  if (c.topk_groups < 1 || c.topk_groups > c.groups)
    throw std::invalid_argument("router: topk_groups in [1, groups]");
  if (c.topk < 1 || c.topk > 16 || c.topk > c.topk_groups * (c.experts / c.groups)) {
    throw std::invalid_argument("router: topk in [1, 16] and within the kept groups");
  }
  if (c.sigmoid && c.groups > 1 && c.experts / c.groups < 2) {
    throw std::invalid_argument("router: sigmoid group score needs >= 2 experts per group");
  }
}

void router_reference(const std::vector<float>& logits, const std::vector<float>& bias, int tokens,
                      const RouterConfig& c, std::vector<std::int32_t>& expert, std::vector<float>& weight) {
  validate_router_config(c);
  const auto e_count = static_cast<std::size_t>(c.experts);
  const std::size_t per_group = e_count / static_cast<std::size_t>(c.groups);
  expert.assign(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(c.topk), 0);
  weight.assign(expert.size(), 0);
  std::vector<float> score(e_count), key(e_count);
  for (std::size_t t = 0; t < static_cast<std::size_t>(tokens); ++t) {
    const float* row = logits.data() + t * e_count;
    if (c.sigmoid) {
      for (std::size_t e = 0; e < e_count; ++e) score[e] = 1.0f / (1.0f + std::exp(-row[e]));
    } else {
      const float mx = *std::max_element(row, row + e_count);
      float sum = 0;
      for (std::size_t e = 0; e < e_count; ++e) sum += std::exp(row[e] - mx);
      for (std::size_t e = 0; e < e_count; ++e) score[e] = std::exp(row[e] - mx) / sum;
    }
    for (std::size_t e = 0; e < e_count; ++e) key[e] = score[e] + (bias.empty() ? 0.0f : bias[e]);
    std::vector<float> group_key(static_cast<std::size_t>(c.groups));
    for (std::size_t g = 0; g < group_key.size(); ++g) {
      std::vector<float> members(key.begin() + static_cast<std::ptrdiff_t>(g * per_group),
                                 key.begin() + static_cast<std::ptrdiff_t>((g + 1) * per_group));
      std::sort(members.begin(), members.end(), std::greater<float>());
      group_key[g] = c.sigmoid && c.groups > 1 ? members[0] + members[1] : members[0];
    }
    std::vector<bool> kept(group_key.size(), false);
    for (int pick = 0; pick < c.topk_groups; ++pick) {
      std::size_t best = group_key.size();
      for (std::size_t g = 0; g < group_key.size(); ++g) {
        if (!kept[g] && (best == group_key.size() || group_key[g] > group_key[best])) best = g;
      }
      kept[best] = true;
    }
    std::vector<bool> taken(e_count, false);
    float sum = 0;
    for (std::size_t j = 0; j < static_cast<std::size_t>(c.topk); ++j) {
      std::size_t best = e_count;
      for (std::size_t e = 0; e < e_count; ++e) {
        if (taken[e] || !kept[e / per_group]) continue;
        if (best == e_count || key[e] > key[best]) best = e;
      }
      taken[best] = true;
      expert[t * static_cast<std::size_t>(c.topk) + j] = static_cast<std::int32_t>(best);
      weight[t * static_cast<std::size_t>(c.topk) + j] = score[best];
      sum += score[best];
    }
    for (std::size_t j = 0; j < static_cast<std::size_t>(c.topk); ++j) {
      float& w = weight[t * static_cast<std::size_t>(c.topk) + j];
      if (c.normalize) w /= sum;
      w *= c.scale;
    }
  }
}

}  // namespace moetwin::kernels
