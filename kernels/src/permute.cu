// Token permute (gather by routing map) and unpermute (weighted gather back) for bf16 activations.
// Memory-bound: each thread moves 16-byte vectors (8 bf16), rows are contiguous, so every warp
// access is coalesced; read-only loads go through the non-coherent path (__ldg).
#include <cuda_bf16.h>

#include "moetwin/kernels/moe_kernels.hpp"

namespace moetwin::kernels {

namespace {

constexpr int kThreads = 128;

__global__ void permute_kernel(const uint4* __restrict__ in, const std::int32_t* __restrict__ row_to_token,
                               int rows, int vec_per_row, uint4* __restrict__ out) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const uint4* src = in + static_cast<std::size_t>(__ldg(row_to_token + r)) * vec_per_row;
    uint4* dst = out + static_cast<std::size_t>(r) * vec_per_row;
    for (int i = threadIdx.x; i < vec_per_row; i += blockDim.x) dst[i] = __ldg(src + i);
  }
}

__device__ __forceinline__ void accumulate(float (&acc)[8], uint4 v, float w) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const float2 f = __bfloat1622float2(pairs[p]);
    // _rn intrinsics forbid fused multiply-add, so the sum matches the CPU reference bit for bit.
    acc[2 * p] = __fadd_rn(acc[2 * p], __fmul_rn(w, f.x));
    acc[2 * p + 1] = __fadd_rn(acc[2 * p + 1], __fmul_rn(w, f.y));
  }
}

__global__ void unpermute_kernel(const uint4* __restrict__ in, const std::int32_t* __restrict__ token_to_row,
                                 const float* __restrict__ weight, int tokens, int topk, int vec_per_row,
                                 uint4* __restrict__ out) {
  for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
    const std::int32_t* rows = token_to_row + static_cast<std::size_t>(t) * topk;
    const float* w = weight + static_cast<std::size_t>(t) * topk;
    for (int i = threadIdx.x; i < vec_per_row; i += blockDim.x) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j = 0; j < topk; ++j) {
        const uint4 v = __ldg(in + static_cast<std::size_t>(__ldg(rows + j)) * vec_per_row + i);
        accumulate(acc, v, __ldg(w + j));
      }
      uint4 packed;
      __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
      for (int p = 0; p < 4; ++p) pairs[p] = __floats2bfloat162_rn(acc[2 * p], acc[2 * p + 1]);
      out[static_cast<std::size_t>(t) * vec_per_row + i] = packed;
    }
  }
}

// One block per row up to this many blocks; beyond it blocks loop (grid-stride). 65535 keeps the
// grid legal on every launch dimension limit while filling 132 SMs many times over.
int grid_for(int rows) {
  return rows < 65535 ? rows : 65535;
}

}  // namespace

cudaError_t permute(const std::uint16_t* in, const std::int32_t* row_to_token, int rows, int hidden,
                    std::uint16_t* out, cudaStream_t stream) {
  if (hidden % 8 != 0 || rows < 0) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  permute_kernel<<<grid_for(rows), kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(in), row_to_token,
                                                          rows, hidden / 8, reinterpret_cast<uint4*>(out));
  return cudaGetLastError();
}

cudaError_t unpermute(const std::uint16_t* in, const std::int32_t* token_to_row, const float* weight,
                      int tokens, int topk, int hidden, std::uint16_t* out, cudaStream_t stream) {
  if (hidden % 8 != 0 || tokens < 0 || topk < 1) return cudaErrorInvalidValue;
  if (tokens == 0) return cudaSuccess;
  unpermute_kernel<<<grid_for(tokens), kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(in),
                                                              token_to_row, weight, tokens, topk, hidden / 8,
                                                              reinterpret_cast<uint4*>(out));
  return cudaGetLastError();
}

}  // namespace moetwin::kernels
