// Shared by the network models (private to the topology library): input checks, the latency rule and
// per-link accounting (times round to integer ns with ceil_ns, common/time.hpp). Both models use the same
// code here so that they can differ only in how they share bandwidth.
#pragma once

#include <vector>

#include "moetwin/topology/network_model.hpp"

namespace moetwin::detail {

// Throws std::logic_error if the platform is not sealed, std::invalid_argument for a flow with negative,
// NaN or infinite bytes, a negative start, a link id out of range, or an empty route with src != dst.
void validate_flows(const NetPlatform& platform, const std::vector<FlowSpec>& flows);

// The latency rule of both models: a flow takes no bandwidth during its route latency and becomes
// active (starts sharing bandwidth) at start + ceil_ns(sum of route latencies); it finishes when its bytes
// are through. This is SimGrid CM02's latency phase (a comm's variable has weight 0 until its latency
// has elapsed). A flow with 0 bytes or an empty route finishes at its activation time.
std::vector<TimeNs> activation_times(const NetPlatform& platform, const std::vector<FlowSpec>& flows);

// True when the flow needs no bandwidth: it finishes at its activation time.
inline bool is_trivial(const FlowSpec& flow) {
  return flow.bytes <= 0 || flow.route.empty();
}

// Per-link accounting from the flows' activation and finish times: bytes = sum of the bytes of the flows
// crossing the link (twice for a flow crossing it twice); busy = length of the union of the intervals
// [activation, finish) of the flows crossing it.
std::vector<LinkUsage> link_usage(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                                  const std::vector<TimeNs>& activation, const std::vector<TimeNs>& finish);

// Assemble the run result: results in input order, link usage, makespan (0 for no flows).
NetworkRun make_run(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                    const std::vector<TimeNs>& activation, const std::vector<TimeNs>& finish);

}  // namespace moetwin::detail
