#include "moetwin/models/topology_comm.hpp"

#include <algorithm>

namespace moetwin {

TopologyComm::TopologyComm(const Scenario& s, CollectiveParams params)
    : cluster_(s.instance, s.gpu, s.nodes), params_(std::move(params)) {
  cluster_.seal();
}

double TopologyComm::seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  if (ranks.size() < 2 || bytes <= 0) return 0;
  return estimate(op, bytes, ranks).time_s;
}

CommUsage TopologyComm::usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  CommUsage u;
  u.known = true;
  if (ranks.size() < 2 || bytes <= 0) return u;
  const CollectiveEstimate e = estimate(op, bytes, ranks);
  u.latency_s = e.latency_s;
  u.nvlink_s = e.nvlink_s;
  u.network_s = e.network_s;
  if (op == CollectiveOp::all_to_all) {
    // One flow per other NVLink domain on the rails, one per other GPU of the domain on NVLink.
    u.network_flows = std::max(1, e.domains - 1);
    u.nvlink_flows = std::max(1, e.ranks_per_domain - 1);
  }
  return u;
}

CollectiveEstimate TopologyComm::estimate(CollectiveOp op, double bytes,
                                          const std::vector<int>& ranks) const {
  CollectiveRequest r;
  switch (op) {
    case CollectiveOp::all_gather:
      r.kind = CollectiveKind::all_gather;
      break;
    case CollectiveOp::reduce_scatter:
      r.kind = CollectiveKind::reduce_scatter;
      break;
    case CollectiveOp::all_reduce:
      r.kind = CollectiveKind::all_reduce;
      break;
    case CollectiveOp::all_to_all:
      r.kind = CollectiveKind::all_to_all;
      break;
    case CollectiveOp::send_recv:
      r.kind = CollectiveKind::send_recv;
      break;
  }
  r.algorithm = default_algorithm(r.kind);
  r.bytes = bytes;
  r.ranks = ranks;
  return estimate_collective(cluster_, r, params_);
}

}  // namespace moetwin
