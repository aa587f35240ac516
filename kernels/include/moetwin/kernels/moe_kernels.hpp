// GPU MoE kernels (CUDA builds only): token permute/unpermute by routing map and router top-k.
// Semantics are those of the CPU references in reference.hpp; pointers are device pointers, bf16 as
// raw 16-bit values. Launches are asynchronous on `stream`; errors come back as cudaError_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "moetwin/kernels/reference.hpp"

namespace moetwin::kernels {

// hidden must be a multiple of 8 (16-byte rows of bf16) — true for every model (2048..7168).
cudaError_t permute(const std::uint16_t* in, const std::int32_t* row_to_token, int rows, int hidden,
                    std::uint16_t* out, cudaStream_t stream);
cudaError_t unpermute(const std::uint16_t* in, const std::int32_t* token_to_row, const float* weight,
                      int tokens, int topk, int hidden, std::uint16_t* out, cudaStream_t stream);
// logits [tokens, experts] fp32; bias [experts] or nullptr; expert/weight [tokens, topk].
cudaError_t router_topk(const float* logits, const float* bias, int tokens, const RouterConfig& config,
                        std::int32_t* expert, float* weight, cudaStream_t stream);

}  // namespace moetwin::kernels
