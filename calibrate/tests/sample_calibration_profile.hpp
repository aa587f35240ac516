// A hand-made calibration profile for unit tests, shared by calibrate's profile tests and sim's
// calibrated-compute tests (included there by relative path): peak 1e15 FLOP/s, D2D copy 4e12 B/s,
// launch 10 / 4 / 0.5 us, and sample_gemm_curve(): floor 10 us, efficiency 0.25 at min_dim 64 rising
// linearly in log2 to 0.75 at 1024, memory efficiency 0.5, no hidden floor. Each test adds its curves.
#pragma once

#include <string>

#include "moetwin/profile/calibration_profile.hpp"

namespace moetwin {

inline GemmCurve sample_gemm_curve() {
  GemmCurve g;
  g.floor_s = 1e-5;
  g.efficiency = {{64, 1024}, {0.25, 0.75}};
  g.memory_efficiency = 0.5;
  return g;
}

// Metadata, launch costs and copy bandwidth; no GEMM, kernel or transport curves.
inline CalibrationProfile sample_calibration_profile(const std::string& gpu,
                                                     const std::string& measured_gpu) {
  CalibrationProfile p;
  p.gpu = gpu;
  p.measured_gpu = measured_gpu;
  p.source_db = "db.h5";
  p.git_revision = "abc";
  p.measured_at = "2026-11-29T09:00:00Z";
  p.peak_bf16_flops = 1e15;
  p.launch_sync_s = 1e-5;
  p.launch_back_to_back_s = 4e-6;
  p.launch_graph_s = 5e-7;
  p.d2d_bandwidth = 4e12;
  return p;
}

}  // namespace moetwin
