// CommCostModel over topology's closed-form collective estimates (topology/collectives.hpp,
// estimate_collective) on the scenario's Cluster: NCCL ring AG/RS/AR and pairwise A2A / send-recv over
// NVLink and the GPUs' EFA rails with the efficiency curves and step latencies documented there. The
// default collective model of build_workload.
#pragma once

#include <string>
#include <vector>

#include "moetwin/models/comm_cost.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/topology/cluster.hpp"
#include "moetwin/topology/collectives.hpp"

namespace moetwin {

class TopologyComm : public CommCostModel {
 public:
  explicit TopologyComm(const Scenario& scenario, CollectiveParams params = {});
  std::string name() const override { return "topology-closed-form"; }
  double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;
  // From the closed form's own terms (CollectiveEstimate::latency_s, nvlink_s, network_s).
  CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;

 private:
  CollectiveEstimate estimate(CollectiveOp op, double bytes, const std::vector<int>& ranks) const;
  Cluster cluster_;
  CollectiveParams params_;
};

}  // namespace moetwin
