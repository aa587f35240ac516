// One-way small-message latency of each scale-out fabric: what one network step of an NCCL ring, tree or
// pairwise exchange pays on top of its bytes in topology's closed form (topology/collectives.hpp).
//
// Not the instance's `base_latency_us`: that is the hint aws-ofi-nccl hands NCCL's tuner (75 us p5, 35 us
// p5en/p6; an assumption on InfiniBand), which the alpha-beta model and the dispatcher handshakes read. This
// is the fabric's own per-message latency, a fact of the fabric (EFA's SRD vs InfiniBand's RC), the same on
// every NIC generation of it: no source separates NDR from XDR (design doc A3: "IB latency figures: NOT
// FOUND"), and a step's latency is NIC processing and switch hops, not serialisation at the line rate.
#pragma once

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

struct FabricLatency {
  double one_way_s = 0;  // s, per message, one way: the value the closed form charges per network step
  double min_s = 0;      // s, lower bound of the value (inclusive)
  double max_s = 0;      // s, upper bound (inclusive)
  const char* source = "";
};

// EFA (SRD): 10 us, bounds [7.5, 12.5] us. InfiniBand (NDR and XDR alike): 5 us, bounds [1, 7.5] us.
// Sources and derivation in fabric_latency.cpp.
const FabricLatency& fabric_latency(Fabric fabric);

}  // namespace moetwin
