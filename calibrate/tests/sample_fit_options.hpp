// Fitter options for calibrate's fitter tests: the GPU name and the source database the fitter writes into
// the profile (and names in its errors), at the bf16 peak of sample_calibration_profile.hpp (1e15 FLOP/s).
#pragma once

#include <optional>
#include <string>

#include "moetwin/calibrate/fitter.hpp"

namespace moetwin {

inline FitOptions sample_fit_options(const std::string& gpu, const std::string& source_db) {
  return FitOptions{.gpu = gpu,
                    .peak_bf16_flops = 1e15,
                    .source_db = source_db,
                    .instance = std::nullopt,
                    .gpu_spec = std::nullopt};
}

}  // namespace moetwin
