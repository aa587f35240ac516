// The GEMM shapes the calibration measures: those a scenario's ops produce for the catalog's models
// (catalog/data/models.toml), forward and backward, plus a square sweep. C[m,n] = A[m,k] B[k,n].
#pragma once

#include <string>
#include <vector>

namespace moetwin::gpu {

struct GemmShape {
  std::string name;   // unique, name-safe: "<model>.<op>.<pass>.m<m>", or "square.<m>"
  std::string op;     // op class: "gemm" (dense/attention projections), "grouped_gemm" (experts),
                      // "attention" (batched QK^T and PV of the attention core)
  std::string model;  // catalog model, or "square"
  long long m = 0, n = 0, k = 0;
  long long batch = 1;  // > 1: strided-batched (experts of one rank with equal tokens, or heads)
};

// quick = fewer token counts (a smoke run); the full list is what the profile is fitted on.
std::vector<GemmShape> calibration_gemm_shapes(bool quick);

// `shape` with m, n and k rounded up to multiples of `multiple` (FP8 cuBLASLt GEMMs need 16); name, op,
// model and batch unchanged. Every shape of calibration_gemm_shapes is already a multiple of 16.
GemmShape rounded_dims(const GemmShape& shape, long long multiple);

}  // namespace moetwin::gpu
