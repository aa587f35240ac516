// A calibration profile's fitted transport terms as the simulator's collective parameters: the profile's
// [nvlink] and [efa] tables (written by the one-node calibration's fitter) in place of the closed-form
// collective model's defaults (topology/collectives.hpp). Plain mapping, no fitting: the fit itself is
// calibrate/nvlink_fit.hpp.
#pragma once

#include <string>

#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/topology/collectives.hpp"

namespace moetwin {

// A profile's efficiency bands as the collective model's piecewise-constant curve.
EfficiencyCurve efficiency_curve_of(const EfficiencyBands& bands);

// The collective of a profile op name; InputError located at `source` for others.
CollectiveKind nvlink_op_kind(const std::string& op, const std::string& source);

// The simulator's collective parameters with the fitted NVLink terms in place of `base`'s.
CollectiveParams nvlink_collective_params(const NvlinkCollectiveFit& fit, CollectiveParams base = {});
// ... with the fitted EFA terms in place of `base`'s.
CollectiveParams efa_collective_params(const EfaFabricFit& fit, CollectiveParams base = {});

}  // namespace moetwin
