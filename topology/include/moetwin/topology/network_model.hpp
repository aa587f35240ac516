// The network model seam: a set of flows over a sealed platform of links in, completion times out.
// Implementations (registered by name, STYLE.md #7): "analytical" (default; max-min fair sharing, fast,
// deterministic) and "simgrid" (SimGrid S4U oracle, CM02, no cross-traffic, no FATPIPE links).
// Flows are aggregated by the caller per (node pair, rail) — never per token.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "moetwin/common/time.hpp"

namespace moetwin {

// Time in the simulator: integer nanoseconds.
// One shared resource: a direction of an NVLink port, a NIC rail direction, a node uplink, ...
struct NetLink {
  std::string name;      // e.g. "n3.gpu5.nvl.tx", "n3.nic9.tx"; unique
  double bandwidth = 0;  // bytes/s, > 0
  double latency = 0;    // seconds, >= 0 (propagation + per-hop fixed cost)
};

// The links of a cluster, built by the topology (Cluster::platform()) then sealed: immutable while
// any network model runs.
class NetPlatform {
 public:
  int add_link(NetLink link);  // returns the link id; throws std::logic_error once sealed
  void reserve_links(std::size_t n) { links_.reserve(n); }  // capacity only (a 512-node cluster has 25k)
  void seal() { sealed_ = true; }
  bool sealed() const { return sealed_; }
  const std::vector<NetLink>& links() const { return links_; }

 private:
  std::vector<NetLink> links_;
  bool sealed_ = false;
};

// One aggregated transfer. `route` lists the link ids crossed in order (from Cluster::route()).
// A flow with bytes == 0 completes at start + route latency.
struct FlowSpec {
  int src = 0;             // source endpoint (GPU id) — for reporting and the SimGrid hosts
  int dst = 0;             // destination endpoint (GPU id)
  double bytes = 0;        // bytes, >= 0
  TimeNs start = 0;        // ns
  std::vector<int> route;  // link ids, non-empty unless src == dst
};

struct FlowResult {
  TimeNs finish = 0;  // ns, >= start
};

// Per-link accounting of one run, for "which NICs saturate" questions.
struct LinkUsage {
  double bytes = 0;  // bytes carried
  TimeNs busy = 0;   // ns during which at least one flow crossed the link
};

struct NetworkRun {
  std::vector<FlowResult> flows;  // same order as the input
  std::vector<LinkUsage> links;   // indexed by link id
  TimeNs makespan = 0;            // latest finish
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;  // one line
  virtual std::string reference() const = 0;    // paper / documentation it follows
  // Completion times of `flows` sharing `platform` (must be sealed). Deterministic: the same inputs give
  // the same outputs. Throws std::invalid_argument for a flow with a bad route or negative bytes.
  virtual NetworkRun run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const = 0;
};

}  // namespace moetwin
