// The SimGrid oracle: the same flow set on a SimGrid 3.32 S4U platform generated from the NetPlatform.
//
// Platform: one star zone; every NetLink becomes a SHARED link "l<id>" with its bandwidth (never
// FATPIPE). Each flow gets its own source host whose route to a common sink host is exactly its
// FlowSpec route (StarZone route = source's up-links + destination's down-links; the sink has none), so
// flows between the same GPU pair may take different routes.
//
// Configuration, chosen so that CM02 is a pure max-min model comparable with AnalyticalNetwork:
//  - network/model:CM02, network/crosstraffic:0 (no 5% reverse-path traffic);
//  - network/TCP-gamma:0: CM02 otherwise bounds a comm's rate by gamma / (2 * latency) (TCP window,
//    default gamma 4 MiB), which caps a 10 us route at ~200 GB/s;
//  - network/weight-S:0, network/latency-factor:1, network/bandwidth-factor:1 (CM02 defaults, set
//    explicitly);
//  - link latencies are NOT given to SimGrid: CM02 sets each comm's sharing penalty to its route latency
//    (RTT-unfair TCP: a 10 ms route gets 1/100 the share of a 0.1 ms route), which is not max-min. The
//    route latency is applied instead as the delay before the comm is issued: the driver actor sleeps
//    until activation = start + ceil(route latency in ns), the same latency rule as the analytical model
//    (and as CM02's own latency phase, during which a comm takes no bandwidth).
// One actor issues all comms (Comm::sendto_async, bytes rounded to an integer) in the fixed order
// (activation, flow index) — SimGrid is bit-deterministic only for a fixed issue order — then waits for
// all; finish times (s) are rounded up to integer ns.
//
// Process model: SimGrid 3.32's Engine is a process-wide singleton that cannot be re-created (a second
// Engine aborts in its config code), so every run() forks a child that builds the platform, simulates,
// writes the finish times to a pipe and _exit()s; the parent reads them and reaps the child. The API
// stays run(platform, flows); each call costs a fork plus SimGrid's start-up. Do not call run() from a
// multi-threaded process whose other threads hold locks the child would need (malloc is fine on glibc).
#pragma once

#include "moetwin/topology/network_model.hpp"

namespace moetwin {

class SimgridNetwork final : public NetworkModel {
 public:
  std::string name() const override { return "simgrid"; }
  std::string description() const override;
  std::string reference() const override;
  // Throws std::runtime_error if the SimGrid child fails (its message is passed on) or dies.
  NetworkRun run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const override;
};

}  // namespace moetwin
