// Per-fabric one-way message latency (fabric_latency.hpp).
#include "moetwin/catalog/fabric_latency.hpp"

namespace moetwin {
namespace {

// shared/data/hardware.csv, line 16 (UCCL blog): "Small-message round trip ~15-25 us on EFA vs ~10 us on
// InfiniBand". One way = half the round trip, as the closed form charges one message per step.
// EFA: 20 us / 2 = 10 us, the same 10 us topology has charged since its first version (the cluster graph's
// NIC links read it from here): bounds = the quoted range halved, [7.5, 12.5] us.
constexpr FabricLatency kEfa{10.0e-6, 7.5e-6, 12.5e-6,
                             "shared/data/hardware.csv (UCCL blog): EFA small-message round trip ~15-25 us; "
                             "one way = half"};
// InfiniBand: ~10 us / 2 = 5 us. Upper bound 7.5 us: the same source puts IB below EFA's quoted range.
// Lower bound 1 us: a ConnectX RDMA write one way through one switch (perftest ib_write_lat is ~1-2 us;
// from memory, UNVERIFIED: the design doc found no IB latency figure, A3).
constexpr FabricLatency kInfiniband{
    5.0e-6, 1.0e-6, 7.5e-6,
    "shared/data/hardware.csv (UCCL blog): InfiniBand small-message round "
    "trip ~10 us; one way = half (NDR and XDR alike: no source separates them)"};

}  // namespace

const FabricLatency& fabric_latency(Fabric fabric) {
  switch (fabric) {
    case Fabric::efa:
      return kEfa;
    case Fabric::infiniband:
      return kInfiniband;
  }
  return kEfa;  // unreachable: every Fabric is listed above
}

}  // namespace moetwin
