// NIC rails: which path an EP transfer's RDMA writes take between two nodes, and what it costs.
//
// Each GPU's traffic leaves through its own NICs (InstanceSpec::nics_per_gpu; aws-ofi-nccl groups them per
// GPU and stripes a message over them). Rail r of one node connects to rail r of another (the plugin pairs
// device k with remote device k). A write from local GPU g to GPU h of another node therefore takes:
//   - same rail: h has g's local index: NIC k to the peer's NIC k, the rail-aligned rate;
//   - cross rail: h has another index, the write goes NIC-to-NIC through the upper switch tiers at
//     InstanceSpec::cross_rail_efficiency of the rail-aligned rate (p5: 20.1 vs 43.7 GB/s per GPU at 4 MiB);
//   - PXN: NCCL first moves the data over NVLink to the local GPU with h's index, whose proxy sends it on
//     that GPU's rail (same rail, one NVLink hop more).
// Which one each dispatcher takes (shared/design/efa-mechanisms.md sections 1-4):
//   - nccl-alltoall with PXN (NCCL's default, P2P_PXN_LEVEL 2 with GDR, which aws-ofi-nccl requires on
//     p4d/p5/p5en/p6): every remote send on its rail, the (G-1)/G whose destination index differs via PXN;
//   - nccl-alltoall without PXN (NCCL_PXN_DISABLE=1 or P2P_PXN_LEVEL=0): the rank's own NIC, so (G-1)/G of
//     the remote bytes cross rails;
//   - DeepEP's normal kernels on every transport (UCCL-EP's proxies, NVSHMEM's host proxy, v2's GIN RAIL
//     connections in hybrid mode): RDMA only to the same local index on each remote node, then NVLink:
//     same rail by construction;
//   - DeepEP's low-latency kernels (UCCL-EP, NVSHMEM and v2 direct mode): each copy straight to the
//     expert's rank, so (G-1)/G of the remote copies cross rails (uniform destinations).
// The per-write cost the low-latency rows fit (per_message_s) already holds that mix; the rail factor here
// prices the bytes. NVSHMEM 3.6.5+'s multi-NIC mode (transmits over 4 NICs, receives on one: a cross-rail
// and incast path on p5; NVSHMEM PR #76) is not modelled: the benchmark stacks use one NIC per PE.
#pragma once

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

// Fractions of a rank's remote (network) bytes by path; they sum to 1.
struct RailMix {
  double same_rail = 1;   // rank's own NIC to the peer's NIC of the same rail
  double cross_rail = 0;  // rank's own NIC to a NIC of another rail
  double pxn = 0;         // NVLink to the local GPU of the destination's index, then its rail
};

// How a dispatcher's writes reach other nodes. `low_latency`: DeepEP's low-latency kernels (per-copy
// writes to the expert's rank); `nccl_pxn`: NCCL's PXN on (the default); `gpus_per_node` the local indices
// a destination spreads over.
RailMix rail_mix(const DispatcherSpec& spec, bool low_latency, bool nccl_pxn, int gpus_per_node);

// Network time of `mix`'s bytes over rail-aligned time: same + pxn + cross / cross_rail_efficiency.
double rail_time_factor(const RailMix& mix, const InstanceSpec& instance);

// aws-ofi-nccl's striping (src/nccl_ofi_scheduler.cpp): a message under 64 B goes to one rail; otherwise
// to the largest divisor of the GPU's rail count not above ceil(bytes / 128 KiB). 512 KiB on p5's 4 rails
// is 4 stripes; an 8 KiB message uses one rail.
int ofi_stripes(double message_bytes, int rails);

}  // namespace moetwin
