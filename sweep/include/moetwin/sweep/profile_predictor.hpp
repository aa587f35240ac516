// The SweepPredictor the CLI uses: predictions with a profile (sim/fitted_profile.hpp), and what the
// provenance block records about it.
#pragma once

#include <memory>
#include <string>

#include "moetwin/sweep/point_result.hpp"

namespace moetwin {

struct ProfileInfo {
  std::string path;  // profile file read; "" = the built-in defaults
  std::string hash;  // FNV-1a 64 of its bytes (16 hex digits); "" for the built-in defaults; "+network=MODE"
                     // appended when --network overrides the profile's (a journal of the other mode is not
                     // resumed)
};

// `spec` as given to --profile ("" = the default profile, "none" = built-in defaults, else a file);
// `network` as given to --network ("" = the profile's, "closed-form", "flow"). Throws InputError for a
// missing or malformed profile or an unknown network model.
std::unique_ptr<SweepPredictor> make_profile_predictor(const std::string& spec, ProfileInfo& info,
                                                       const std::string& network = "");

}  // namespace moetwin
