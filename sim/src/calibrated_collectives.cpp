// Calibrated NVLink collectives (calibrated_collectives.hpp).
#include "moetwin/sim/calibrated_collectives.hpp"

#include "moetwin/calibrate/nvlink_fit.hpp"
#include "moetwin/calibrate/profile.hpp"
#include "moetwin/sim/calibrated_compute.hpp"
#include "moetwin/sim/topology_comm.hpp"

namespace moetwin {

CollectiveCalibration collectives_for(const Scenario& scenario, const std::string& dir) {
  const ScenarioCalibration c = calibration_for(scenario, dir);
  CollectiveCalibration out;
  if (!c.profile || !c.profile->nvlink) {
    out.comm = std::make_shared<TopologyComm>(scenario);
    out.source = "NVLink defaults (" + (c.profile ? c.shown_path + " has no [nvlink]" : c.why_not) + ")";
    return out;
  }
  const NvlinkCollectiveFit& fit = *c.profile->nvlink;
  out.comm = std::make_shared<TopologyComm>(scenario, nvlink_collective_params(fit));
  std::string ranks;
  for (const int n : fit.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(n);
  out.source = "calibrated NVLink (" + c.shown_path + ", NCCL on " + ranks + " GPUs)";
  return out;
}

}  // namespace moetwin
