// The default network model: event-driven max-min fair sharing of link bandwidth.
//
// Semantics (shared with SimgridNetwork, see src/flow_timing.hpp):
//  - a flow takes no bandwidth during its route latency: it becomes active at
//    activation = start + ceil(sum of route latencies, in ns);
//  - active flows share every link they cross max-min fairly (BandwidthSharing); rates are recomputed
//    whenever a flow becomes active or finishes, and are constant in between;
//  - the clock is integer ns: the next event is the earliest of the next activation and the active
//    flows' completion times, each rounded up to a whole ns; flows whose rounded completion equals that
//    event finish there, the others progress by rate * elapsed time. A remainder below
//    tolerance.relative * bytes snaps to done (SimGrid's double_update habit).
//  - a flow with 0 bytes or an empty route (src == dst) finishes at its activation time.
// Per-link usage: bytes carried and busy ns (union of the active intervals of the flows crossing it).
//
// Cost: one full solve per event, each O(crossings of the active flows + heap work on the links they
// touch). A uniform all-to-all has a handful of events whatever its size (32 nodes, 17,664 flows: ~3 ms).
// Flows that all finish at different times are the worst case: one event per flow, so O(flows^2)
// (the same 32-node set with every flow's bytes jittered by +-50%: ~13 s CPU, as slow as SimGrid).
// Known remedy, not done yet: after departures only, flows whose rate is below the smallest departed
// rate keep their rates (no bottleneck below that level changes), so only the rest need re-filling.
#pragma once

#include "moetwin/topology/bandwidth_sharing.hpp"
#include "moetwin/topology/network_model.hpp"

namespace moetwin {

class AnalyticalNetwork final : public NetworkModel {
 public:
  explicit AnalyticalNetwork(SharingTolerance tolerance = {});

  std::string name() const override { return "analytical"; }
  std::string description() const override;
  std::string reference() const override;
  NetworkRun run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const override;

 private:
  SharingTolerance tolerance_;
};

}  // namespace moetwin
