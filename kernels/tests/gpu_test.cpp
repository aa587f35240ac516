// GPU kernels against the CPU references. Skipped where no CUDA device is present (CI).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>

#include "moetwin/kernels/moe_kernels.hpp"

namespace moetwin::kernels {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Deterministic test data: a 64-bit LCG (Knuth MMIX constants), top 24 bits -> [0, 1).
struct Lcg {
  std::uint64_t state;
  float next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(state >> 40) / 16777216.0f;
  }
};

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr), host.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  explicit DeviceBuffer(std::size_t n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T)), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<T> download(std::size_t n) const {
    std::vector<T> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

class GpuKernels : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(GpuKernels, PermuteAndUnpermuteMatchReferenceBitForBit) {
  const int hidden = GetParam();
  const int tokens = 300;
  const int topk = 4;
  const int rows = tokens * topk;
  Lcg rng{42};
  std::vector<std::uint16_t> x(static_cast<std::size_t>(tokens) * hidden);
  for (auto& v : x) v = float_to_bf16(rng.next() * 4.0f - 2.0f);
  // Routing map: row r holds token (r * 7919) % tokens; the inverse map sends each token's topk slots
  // to the rows that hold it (every row is used exactly once since 7919 is prime to 300).
  std::vector<std::int32_t> row_to_token(rows);
  std::vector<std::int32_t> token_to_row(rows);
  std::vector<int> fill(tokens, 0);
  for (int r = 0; r < rows; ++r) {
    const int t = static_cast<int>((static_cast<long long>(r) * 7919) % tokens);
    row_to_token[r] = t;
    token_to_row[t * topk + fill[t]++] = r;
  }
  std::vector<float> weight(rows);
  for (auto& w : weight) w = rng.next();
  std::vector<std::uint16_t> permuted_ref, combined_ref;
  permute_reference(x, row_to_token, hidden, permuted_ref);
  unpermute_reference(permuted_ref, token_to_row, weight, tokens, topk, hidden, combined_ref);

  DeviceBuffer<std::uint16_t> d_x(x), d_perm(static_cast<std::size_t>(rows) * hidden),
      d_out(static_cast<std::size_t>(tokens) * hidden);
  DeviceBuffer<std::int32_t> d_r2t(row_to_token), d_t2r(token_to_row);
  DeviceBuffer<float> d_w(weight);
  ASSERT_EQ(permute(d_x.ptr, d_r2t.ptr, rows, hidden, d_perm.ptr, nullptr), cudaSuccess);
  ASSERT_EQ(unpermute(d_perm.ptr, d_t2r.ptr, d_w.ptr, tokens, topk, hidden, d_out.ptr, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(d_perm.download(permuted_ref.size()), permuted_ref);
  EXPECT_EQ(d_out.download(combined_ref.size()), combined_ref);
}

INSTANTIATE_TEST_SUITE_P(Hidden, GpuKernels, ::testing::Values(2048, 4096, 7168));

struct RouterCase {
  RouterConfig config;
  bool bias;
};

class GpuRouter : public ::testing::TestWithParam<RouterCase> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(GpuRouter, MatchesReference) {
  const RouterCase rc = GetParam();
  const RouterConfig& c = rc.config;
  const int tokens = 1000;
  Lcg rng{7};
  std::vector<float> logits(static_cast<std::size_t>(tokens) * c.experts);
  for (auto& v : logits) v = rng.next() * 8.0f - 4.0f;
  std::vector<float> bias;
  if (rc.bias) {
    bias.resize(static_cast<std::size_t>(c.experts));
    for (auto& b : bias) b = rng.next() * 0.1f;
  }
  std::vector<std::int32_t> expert_ref;
  std::vector<float> weight_ref;
  router_reference(logits, bias, tokens, c, expert_ref, weight_ref);
  DeviceBuffer<float> d_logits(logits);
  DeviceBuffer<float> d_bias(rc.bias ? bias : std::vector<float>{0.0f});
  const std::size_t n = static_cast<std::size_t>(tokens) * c.topk;
  DeviceBuffer<std::int32_t> d_expert(n);
  DeviceBuffer<float> d_weight(n);
  ASSERT_EQ(router_topk(d_logits.ptr, rc.bias ? d_bias.ptr : nullptr, tokens, c, d_expert.ptr, d_weight.ptr,
                        nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto expert = d_expert.download(n);
  const auto weight = d_weight.download(n);
  int mismatched_tokens = 0;
  for (int t = 0; t < tokens; ++t) {
    bool same = true;
    for (int k = 0; k < c.topk; ++k) {
      const std::size_t i = static_cast<std::size_t>(t) * c.topk + k;
      if (expert[i] != expert_ref[i])
        same = false;
      else
        EXPECT_NEAR(weight[i], weight_ref[i], 1e-5f * std::max(1.0f, std::fabs(weight_ref[i])));
    }
    mismatched_tokens += same ? 0 : 1;
  }
  // expf on the GPU and std::exp differ in the last bits; on random logits that never reorders keys.
  EXPECT_EQ(mismatched_tokens, 0);
}

RouterConfig make(int experts, int groups, int topk_groups, int topk, bool sigmoid, bool normalize,
                  float scale) {
  RouterConfig c;
  c.experts = experts;
  c.groups = groups;
  c.topk_groups = topk_groups;
  c.topk = topk;
  c.sigmoid = sigmoid;
  c.normalize = normalize;
  c.scale = scale;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Configs, GpuRouter,
    ::testing::Values(RouterCase{make(8, 1, 1, 2, false, false, 1.0f), false},     // Mixtral
                      RouterCase{make(128, 1, 1, 8, false, true, 1.0f), false},    // Qwen3
                      RouterCase{make(160, 8, 3, 6, false, false, 16.0f), false},  // DeepSeek-V2
                      RouterCase{make(256, 8, 4, 8, true, true, 2.5f), true},      // DeepSeek-V3
                      RouterCase{make(384, 1, 1, 8, true, true, 2.827f), true}));  // Kimi-K2

}  // namespace
}  // namespace moetwin::kernels
