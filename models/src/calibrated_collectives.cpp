// Calibrated NVLink collectives (calibrated_collectives.hpp).
#include "moetwin/models/calibrated_collectives.hpp"

#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/profile/collective_params.hpp"

namespace moetwin {

CollectiveParams collective_params_for(const Scenario& scenario, const std::string& dir,
                                       std::string& source) {
  return collective_params_from(scenario, calibration_for(scenario, dir), source);
}

CollectiveParams collective_params_from(const Scenario& scenario, const ScenarioCalibration& c,
                                        std::string& source) {
  CollectiveParams params;
  // The scenario GPU's profile's bands, else (its profile has none) its calibration_from GPU's.
  const bool own = c.profile && c.profile->nvlink;
  const CalibrationProfile* from = own ? c.profile.get() : c.nvlink_profile.get();
  if (from == nullptr || !from->nvlink) {
    source = "NVLink defaults (" + (c.profile ? c.shown_path + " has no [nvlink]" : c.why_not) + ")";
  } else {
    const NvlinkCollectiveFit& fit = *from->nvlink;
    std::string ranks;
    // Not "," + std::to_string(n): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
    for (const int n : fit.ranks) ranks.append(ranks.empty() ? "" : ",").append(std::to_string(n));
    source =
        "calibrated NVLink (" + (own ? c.shown_path : c.nvlink_shown_path) + ", NCCL on " + ranks + " GPUs";
    // Borrowed from a GPU of the same die: the same NVLink generation and bandwidth (catalog check).
    if (!c.borrowed.empty() || !own) source.append(" of ").append(from->gpu);
    if (!own) source.append("; ").append(c.shown_path).append(" has no [nvlink]");
    source.append(")");
    params = nvlink_collective_params(fit, params);
  }
  // EFA terms belong to the instance they were measured on (NIC generation and line rate).
  if (c.profile && c.profile->efa) {
    const EfaFabricFit& efa = *c.profile->efa;
    if (efa.instance == scenario.instance.name) {
      source += "; calibrated EFA (" + c.shown_path + ", libfabric " + efa.buffer + " buffers)";
      params = efa_collective_params(efa, params);
    } else {
      source += "; EFA defaults (the profile's EFA was measured on " + efa.instance + ")";
    }
  }
  return params;
}

CollectiveCalibration collectives_from(const Scenario& scenario, const ScenarioCalibration& calibration) {
  CollectiveCalibration out;
  const CollectiveParams params = collective_params_from(scenario, calibration, out.source);
  out.comm = std::make_shared<TopologyComm>(scenario, params);
  return out;
}

CollectiveCalibration collectives_for(const Scenario& scenario, const std::string& dir) {
  return collectives_from(scenario, calibration_for(scenario, dir));
}

}  // namespace moetwin
