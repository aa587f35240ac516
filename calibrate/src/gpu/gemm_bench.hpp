// cuBLASLt bf16 GEMM calibration (fp32 accumulate, "TN" layout — the layout Megatron's linear layers
// hand to cuBLAS). For every shape the heuristic's first `candidates` algorithms are tried and the
// fastest is measured; the rate of heuristic #0 is kept too (label algo_choice). Samples are taken in
// rounds over all shapes, so slow drifts of the GPU's state over a run hit every shape alike.
//
// precision fp8: the same shapes (dimensions rounded up to multiples of 16, which cuBLASLt's FP8 kernels
// need) as E4M3 x E4M3 -> bf16 GEMMs with per-tensor scales (1.0, on the device) and fp32 accumulate,
// what Transformer Engine's FP8 linear layers run. TN is also the only FP8 layout cuBLASLt has on Hopper.
#pragma once

#include <string>
#include <vector>

#include "gemm_shapes.hpp"
#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/fitter.hpp"

namespace moetwin::gpu {

struct GemmBenchOptions {
  bool quick = false;
  int samples = 10;
  int candidates = 6;
  std::string only;          // substring filter on shape names; empty = all
  double cooldown_s = 0.02;  // idle before each sample (see TimingOptions::cooldown_s)
  // The samples of every shape are taken in this many rounds over all shapes (at most `samples`).
  int rounds = 5;
  GemmPrecision precision = GemmPrecision::bf16;
  // fp8: CUBLASLT_MATMUL_DESC_FAST_ACCUM (Hopper's FP8 accumulation without periodic promotion to fp32;
  // Transformer Engine uses it for the forward GEMM only). Off by default, cuBLASLt's default.
  bool fp8_fast_accum = false;
};

// Experiments of kind "gemm" / "grouped_gemm" / "attention" (unit s, samples = seconds per call),
// params m, n, k, batch, flops; labels model, algo_choice ("best" or "heuristic0"). fp8: kinds and name
// prefixes with "_fp8" (gemm_kind: "gemm_fp8.<shape>", kind "grouped_gemm_fp8", ...; "gemm_fp8_heuristic0.",
// "gemm_fp8_sustained."), params m, n, k the rounded dimensions (requested_m/n/k where rounding changed
// one), labels precision "fp8", dtype "e4m3", output "bf16", scaling "per_tensor", fast_accum "0"/"1".
// fp8 on a GPU without FP8 tensor cores (compute capability < 8.9): NoDeviceError.
std::vector<Experiment> run_gemm_bench(const GemmBenchOptions& options, std::string& cublas_version);

}  // namespace moetwin::gpu
