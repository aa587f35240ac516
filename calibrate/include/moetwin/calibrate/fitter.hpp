// The fitter: calibration database -> calibration profile (profile.hpp), with a held-back check of
// the GEMM curves: every third GEMM shape (in name order) is left out of the fit and predicted.
#pragma once

#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/profile.hpp"

namespace moetwin {

struct FitOptions {
  std::string gpu;             // catalog GPU name the profile is for, e.g. "H200-SXM"
  double peak_bf16_flops = 0;  // that GPU's catalog dense bf16 peak, FLOP/s
  std::string source_db;       // recorded in the profile
};

struct HeldOutShape {
  std::string name;
  std::string op;
  double measured_s = 0;
  double predicted_s = 0;
  double relative_error() const;
};

struct FitResult {
  CalibrationProfile profile;
  std::vector<HeldOutShape> heldout;  // all op classes, name order
};

// Throws InputError naming the db when it lacks launch or copy experiments (run `all` first) or
// GEMM shapes. Deterministic: the same db gives the same profile text.
FitResult fit_calibration_profile(const CalibrationDb& db, const FitOptions& options);

// Per-band latency/bandwidth through consecutive (bytes, seconds) points (ascending bytes), the
// first band starting at 0. A segment steeper than through the origin becomes bytes/time with zero
// latency; a flat or falling one (noise at small sizes) becomes its smaller time, bandwidth 1e15 B/s.
TransportCurve fit_transport(const std::vector<std::pair<double, double>>& points);

}  // namespace moetwin
