// Unit-test support: the shipped fitted profile (calibrate/profiles/fitted/live-fit.toml), loaded once per
// test process, for tests that predict as `predict` does by default (needs sim/).
#pragma once

#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin::test_support {

inline const FittedProfile& shipped_fitted_profile() {
  static const FittedProfile p = load_fitted_profile(source_path("calibrate/profiles/fitted/live-fit.toml"));
  return p;
}

}  // namespace moetwin::test_support
