// How a dispatcher's in-training A2A terms (SimProfile::A2aFit) carry from the instance they were fitted on
// to another instance, by mechanism rather than as constants:
//  - the per-remote-node and per-remote-token terms are work of the posting path that puts DeepEP's RDMA
//    writes on the wire (UCCL-EP's CPU proxy threads, NVSHMEM's host proxy thread, or the GPU itself for
//    DeepEP v2 over EFA-GDA). They are held at the reference instance (SimProfile::proxy_reference_instance)
//    and scale with the ratio of what one token copy costs on the posting path there and here: the
//    dispatcher's low-latency call (test_low_latency.py's 128 tokens x top-8 over 4 nodes; one RDMA write
//    per remote copy) per remote copy, from its terms on each instance (per_message_s per instance,
//    calibrated on that instance's standalone low-latency benchmarks; DispatcherModel::low_latency_cost);
//  - the per-call term is host work (the CPU spin on DeepEP's received-token counters, the host sync on the
//    alltoall dispatcher's counts, Python around each call): it scales with the host CPU like launch and
//    layer time (host_time_factor).
// A dispatcher without live runs (generic terms: the median of its measured relatives') scales by its own
// write cost here over the median of its relatives' write costs at the reference: DeepEP v2's GPU-posted
// writes cost less than a CPU proxy's, and the generic terms say so.
#pragma once

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {

struct A2aTransfer {
  double proxy_factor = 1;         // per-node and per-token terms here over the reference instance
  double host_factor = 1;          // per-call term here over the reference CPU
  double message_s = 0;            // one token copy through this dispatcher's posting path here, s (0: none)
  double reference_message_s = 0;  // the same at the reference (generic terms: median of the relatives')
  std::string reference_instance;
  // One line for outputs, e.g. "fitted; on p5.48xlarge per-node and per-token terms x6.05 (one RDMA write
  // ...), per-call x1.35 (host CPU)".
  std::string describe(const std::string& terms_label, const std::string& instance) const;
};

// The factors for `dispatcher` on `instance` under `profile`. Dispatchers without a posting path (NCCL's
// all-to-all) and catalogs without the reference instance get a proxy factor of 1.
A2aTransfer a2a_transfer(const SimProfile& profile, const DispatcherSpec& dispatcher,
                         const InstanceSpec& instance);

// `a2a` carried to the instance: node_latency_s and remote_token_s x proxy_factor, latency_s x host_factor.
SimProfile::A2aFit transferred(SimProfile::A2aFit a2a, const A2aTransfer& transfer);

}  // namespace moetwin
