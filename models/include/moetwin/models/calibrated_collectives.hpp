// The collective model a prediction uses: topology's closed form (TopologyComm) with the NVLink
// parameters of the scenario GPU's calibration profile (`[nvlink]`, fitted by `moetwin-calibrate fit`
// from NCCL runs on >= 2 GPUs of one node, calibrate/include/moetwin/calibrate/nvlink_fit.hpp, read through
// profile/collective_params.hpp) when it has them, else the model's defaults. Collectives that cross nodes
// keep the EFA model either way.
#pragma once

#include <memory>
#include <string>

#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/topology/collectives.hpp"

namespace moetwin {

struct CollectiveCalibration {
  std::shared_ptr<const CommCostModel> comm;  // never null
  // For reports: "calibrated NVLink (calibrate/profiles/h200-measured.toml, 2 GPUs)" or
  // "NVLink defaults (no calibration profile for B300)" / "(... has no [nvlink])".
  std::string source;
};

// The collective model's parameters for `scenario` (the profile's [nvlink] over the defaults), and
// `source` as above. Same lookup rules as compute_profile_for (calibrated_compute.hpp); `dir` empty:
// lookup off.
CollectiveParams collective_params_for(const Scenario& scenario, const std::string& dir, std::string& source);
// The same from a lookup already made (calibrated_compute.hpp, calibration_for).
CollectiveParams collective_params_from(const Scenario& scenario, const ScenarioCalibration& calibration,
                                        std::string& source);

// TopologyComm on the scenario's cluster with collective_params_from.
CollectiveCalibration collectives_from(const Scenario& scenario, const ScenarioCalibration& calibration);
CollectiveCalibration collectives_for(const Scenario& scenario, const std::string& dir);

}  // namespace moetwin
