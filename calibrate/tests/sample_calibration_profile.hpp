// A hand-made calibration profile for unit tests, shared by calibrate's profile tests and sim's
// calibrated-compute tests (included there by relative path): peak 1e15 FLOP/s, D2D copy 4e12 B/s,
// launch 10 / 4 / 0.5 us, and sample_gemm_curve(): floor 10 us, efficiency 0.25 at min_dim 64 rising
// linearly in log2 to 0.75 at 1024, memory efficiency 0.5, no hidden floor. Each test adds its curves.
#pragma once

#include <string>

#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {

inline GemmCurve sample_gemm_curve() {
  GemmCurve g;
  g.floor_s = 1e-5;
  g.efficiency = {{64, 1024}, {0.25, 0.75}};
  g.memory_efficiency = 0.5;
  return g;
}

// The held-back statistics a fitted curve carries (written to and read from the profile as they are).
inline void set_heldout_stats(GemmCurve& g, int shapes, double median_error, double max_error,
                              double within_5pct) {
  g.heldout_shapes = shapes;
  g.heldout_median_error = median_error;
  g.heldout_max_error = max_error;
  g.heldout_within_5pct = within_5pct;
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

// What parse_calibration_profile says of `text` (read as "p.toml"), or "no error".
inline std::string profile_error_of(const std::string& text) {
  return test_support::error_of([&] { parse_calibration_profile(text, "p.toml"); });
}

}  // namespace moetwin
