// Fitter options for calibrate's fitter tests: the GPU name and the source database the fitter writes into
// the profile (and names in its errors), at the bf16 peak of sample_calibration_profile.hpp (1e15 FLOP/s).
#pragma once

#include <string>

#include "moetwin/calibrate/fitter.hpp"

namespace moetwin {

inline FitOptions sample_fit_options(const std::string& gpu, const std::string& source_db) {
  FitOptions o;
  o.gpu = gpu;
  o.peak_bf16_flops = 1e15;
  o.source_db = source_db;
  return o;
}

}  // namespace moetwin
