// The SweepPredictor the CLI uses: predictions with a profile (sim/fitted_profile.hpp), and what the
// provenance block records about it.
#pragma once

#include <memory>
#include <string>

#include "moetwin/sweep/point_result.hpp"

namespace moetwin {

struct ProfileInfo {
  std::string path;  // profile file read; "" = the built-in defaults
  std::string hash;  // FNV-1a 64 of its bytes (16 hex digits); "" for the built-in defaults
};

// `spec` as given to --profile ("" = the default profile, "none" = built-in defaults, else a file).
// Throws InputError for a missing or malformed profile.
std::unique_ptr<SweepPredictor> make_profile_predictor(const std::string& spec, ProfileInfo& info);

}  // namespace moetwin
