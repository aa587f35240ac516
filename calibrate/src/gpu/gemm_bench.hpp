// cuBLASLt bf16 GEMM calibration (fp32 accumulate, "TN" layout — the layout Megatron's linear layers
// hand to cuBLAS). For every shape the heuristic's first `candidates` algorithms are tried and the
// fastest is measured; the rate of heuristic #0 is kept too (label algo_choice). Samples are taken in
// rounds over all shapes, so slow drifts of the GPU's state over a run hit every shape alike.
#pragma once

#include <string>
#include <vector>

#include "gemm_shapes.hpp"
#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::gpu {

struct GemmBenchOptions {
  bool quick = false;
  int samples = 10;
  int candidates = 6;
  std::string only;          // substring filter on shape names; empty = all
  double cooldown_s = 0.02;  // idle before each sample (see TimingOptions::cooldown_s)
  // The samples of every shape are taken in this many rounds over all shapes (at most `samples`).
  int rounds = 5;
};

// Experiments of kind "gemm" / "grouped_gemm" / "attention" (unit s, samples = seconds per call),
// params m, n, k, batch, flops; labels model, algo_choice ("best" or "heuristic0").
std::vector<Experiment> run_gemm_bench(const GemmBenchOptions& options, std::string& cublas_version);

}  // namespace moetwin::gpu
