// The hand-checked compute profile models' FP8 and FP4 tests share: catalog-style numbers small enough to
// work out on paper (the tests' comments show the arithmetic).
#pragma once

#include <string>

#include "moetwin/models/compute_model.hpp"

namespace moetwin::models_test {

// GPU "X": bf16 peak 1e15 FLOP/s, FP8 peak 2e15 FLOP/s, HBM 5e12 B/s; ComputeProfile's default class
// efficiencies (gemm 0.75, grouped 0.6, attention 0.5, elementwise 0.8) and 2 us minimum kernel.
inline ComputeProfile hand_fp8_profile() {
  ComputeProfile p;
  // Not = "X": GCC 12 -O3 flags assigning a one-character literal (-Wrestrict false positive, GCC bug
  // 105329).
  p.gpu = std::string("X");
  p.peak_flops = 1e15;
  p.fp8_peak_flops = 2e15;
  p.hbm_bandwidth = 5e12;
  return p;
}

}  // namespace moetwin::models_test
