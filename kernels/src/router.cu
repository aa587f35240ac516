// Router score (softmax or sigmoid) and group-limited top-k: one warp per token, each lane holding
// experts lane, lane+32, ... (up to 16 per lane = 512 experts) in registers; selections are warp
// arg-max reductions with ties to the lower expert index, as in the CPU reference.
#include <cfloat>
#include <stdexcept>

#include "moetwin/kernels/moe_kernels.hpp"

namespace moetwin::kernels {

namespace {

constexpr int kPerLane = 16;
constexpr int kWarpsPerBlock = 4;
constexpr unsigned kFull = 0xffffffffU;

struct Best {
  float key;
  int index;
  float score;
};

__device__ __forceinline__ Best better(Best a, Best b) {
  if (b.key > a.key || (b.key == a.key && b.index < a.index)) return b;
  return a;
}

__device__ __forceinline__ Best warp_best(Best b) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    Best other;
    other.key = __shfl_xor_sync(kFull, b.key, offset);
    other.index = __shfl_xor_sync(kFull, b.index, offset);
    other.score = __shfl_xor_sync(kFull, b.score, offset);
    b = better(b, other);
  }
  return b;
}

__global__ void router_kernel(const float* __restrict__ logits, const float* __restrict__ bias, int tokens,
                              RouterConfig c, std::int32_t* __restrict__ expert, float* __restrict__ weight) {
  const int token = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (token >= tokens) return;  // whole warps leave together: token is warp-uniform
  const float* row = logits + static_cast<std::size_t>(token) * c.experts;
  float score[kPerLane];
  float key[kPerLane];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int e = j * 32 + lane;
    score[j] = e < c.experts ? row[e] : -FLT_MAX;
  }
  if (c.sigmoid) {
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) score[j] = 1.0f / (1.0f + expf(-score[j]));
  } else {
    float mx = -FLT_MAX;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) mx = fmaxf(mx, score[j]);
    for (int offset = 16; offset > 0; offset >>= 1) mx = fmaxf(mx, __shfl_xor_sync(kFull, mx, offset));
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int e = j * 32 + lane;
      score[j] = e < c.experts ? expf(score[j] - mx) : 0.0f;
      sum += score[j];
    }
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(kFull, sum, offset);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) score[j] /= sum;
  }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int e = j * 32 + lane;
    key[j] = e < c.experts ? score[j] + (bias != nullptr ? bias[e] : 0.0f) : -FLT_MAX;
  }
  if (c.groups > 1) {
    const int per_group = c.experts / c.groups;
    // Lane g ends up holding group g's key.
    float my_group_key = -FLT_MAX;
    for (int g = 0; g < c.groups; ++g) {
      Best first{-FLT_MAX, 0x7fffffff, 0};
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        const int e = j * 32 + lane;
        if (e < c.experts && e / per_group == g) first = better(first, Best{key[j], e, 0});
      }
      first = warp_best(first);
      float group_key = first.key;
      if (c.sigmoid) {
        Best second{-FLT_MAX, 0x7fffffff, 0};
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
          const int e = j * 32 + lane;
          if (e < c.experts && e / per_group == g && e != first.index)
            second = better(second, Best{key[j], e, 0});
        }
        group_key += warp_best(second).key;
      }
      if (lane == g) my_group_key = group_key;
    }
    unsigned kept = 0;
    for (int pick = 0; pick < c.topk_groups; ++pick) {
      Best b{(kept >> lane) & 1U ? -FLT_MAX : my_group_key, lane < c.groups ? lane : 0x7fffffff, 0};
      if ((kept >> lane) & 1U || lane >= c.groups) b.index = 0x7fffffff;
      b = warp_best(b);
      kept |= 1U << b.index;
    }
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int e = j * 32 + lane;
      if (e < c.experts && !((kept >> (e / per_group)) & 1U)) key[j] = -FLT_MAX;
    }
  }
  float sum = 0;
  int chosen[16];
  float chosen_score[16];
  for (int k = 0; k < c.topk; ++k) {
    Best b{-FLT_MAX, 0x7fffffff, 0};
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int e = j * 32 + lane;
      if (e < c.experts && key[j] > -FLT_MAX) b = better(b, Best{key[j], e, score[j]});
    }
    b = warp_best(b);
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      if (j * 32 + lane == b.index) key[j] = -FLT_MAX;
    }
    chosen[k] = b.index;
    chosen_score[k] = b.score;
    sum += b.score;
  }
  if (lane == 0) {
    for (int k = 0; k < c.topk; ++k) {
      float w = chosen_score[k];
      if (c.normalize) w /= sum;
      expert[static_cast<std::size_t>(token) * c.topk + k] = chosen[k];
      weight[static_cast<std::size_t>(token) * c.topk + k] = w * c.scale;
    }
  }
}

}  // namespace

cudaError_t router_topk(const float* logits, const float* bias, int tokens, const RouterConfig& config,
                        std::int32_t* expert, float* weight, cudaStream_t stream) {
  try {
    validate_router_config(config);
  } catch (const std::invalid_argument&) {
    return cudaErrorInvalidValue;
  }
  if (tokens <= 0) return tokens == 0 ? cudaSuccess : cudaErrorInvalidValue;
  const int blocks = (tokens + kWarpsPerBlock - 1) / kWarpsPerBlock;
  router_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(logits, bias, tokens, config, expert, weight);
  return cudaGetLastError();
}

}  // namespace moetwin::kernels
