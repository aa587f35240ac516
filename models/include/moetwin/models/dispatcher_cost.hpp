// The dispatcher's cost of one layout in one place: what the MoE block's all-to-alls, permutes and expert
// copies cost, from the mechanism terms to the fitted layers. A change to how one dispatcher is priced
// touches this file or the dispatcher's model (dispatcher_model.cpp), plus its catalog record:
//  1. mechanism terms: the routing plans and the dispatcher model (DispatcherMoeCost,
//     dispatcher_moe_cost.hpp), its parameters at the fit's values (DispatcherFit::model_params) and its host
//     work scaled to the instance's CPU (host_factor); or the balanced NCCL default (BalancedMoeCost) where
//     the caller prices balanced routing;
//  2. instance and host scaling: the fitted in-training terms carried from the instance they were fitted on
//     to this one (a2a_transfer below);
//  3. fitted layers: the dispatcher's own (or generic) in-training terms and the software stack's scale,
//     a ScaledMoeCost over the mechanism (comm_cost.hpp).
// sim reads a fitted profile into a DispatcherFit once (sim/dispatcher_fit.hpp) and calls dispatcher_cost
// once per layout (build_workload); predict() asks dispatcher_mechanism once per scenario for the seam its
// replays share. Nothing else on the path prices a dispatcher.
//
// Instance scaling (a2a_transfer), by mechanism rather than as constants:
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

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "moetwin/models/comm_cost.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// A dispatcher's in-training A2A terms, fitted on live runs (the live-run fit's "<dispatcher>.<term>"):
//  - time_scale: dispatch / combine transfer time over the dispatcher model's transfer terms (in-training
//    contention and proxy costs the kernel benchmarks do not show; a bandwidth shortfall does not
//    lengthen a handshake, so the scale leaves the model's latency alone), x;
//  - latency_s: fixed time per dispatch/combine call (host synchronisation, proxy round trip), s;
//  - per_copy_s: time per received token copy per call (per-token work the benchmark's large calls
//    amortise: metadata, layout and proxy work per token), s;
//  - fill_tokens: pipeline fill of a chunked A2A kernel, tokens per peer per call; each call pays
//    fill x (EP - 1) x hidden x 2 bytes / the GPU's link bandwidth (A2aFillGeometry, comm_cost.hpp);
//  - node_latency_s: time per call per remote node of the EP group (per-node chunk pipelines that fill
//    and drain, proxy round trips and RDMA fences per remote peer): it grows with the EP group's span
//    in nodes, not with its bytes (live runs: EP16 -> EP32 at the same tokens per call costs DeepEP
//    1-3 ms per call more than its byte terms explain; NCCL's byte terms explain its own), s;
//  - remote_token_s: time per token a rank's dispatch sends to another node (combine: receives back),
//    per call: per-token work of the RDMA path that does not grow with the hidden size (DeepEP's
//    per-token metadata, signalling and forwarding-loop work, the proxy's bookkeeping). The kernel
//    benchmarks all use hidden 7168 and cannot tell it from a per-byte cost; the live runs can (hidden
//    4096 and 7168). Counted on MoeRankCost::dispatch_remote_tokens / combine_remote_tokens, s.
struct A2aFit {
  double time_scale = 1;
  double latency_s = 0;
  double per_copy_s = 0;
  double fill_tokens = 0;
  double node_latency_s = 0;
  double remote_token_s = 0;
  bool operator==(const A2aFit&) const = default;
};

// What a fitted profile holds for one scenario's dispatcher (sim/dispatcher_fit.hpp reads it from a
// SimProfile).
struct DispatcherFit {
  A2aFit terms;            // its own in-training terms, or the generic ones when the fit had no runs of it
  bool own_terms = false;  // the fit had runs of it
  double stack_scale = 1;  // the software stack's in-training A2A scale (SimProfile::stack_a2a_scale), x
  // Fitted values of dispatcher-model parameters, "<dispatcher>.<parameter>" (dispatcher_params.hpp).
  std::map<std::string, double> model_params;
  double host_factor = 1;  // host work on the instance's CPU over the fit's reference CPU (host_time_factor)
  // The instance the per-node and per-token terms hold for (SimProfile::proxy_reference_instance).
  std::string reference_instance;
  // The measured dispatchers the generic terms are the median of (generic_a2a_source_names).
  std::vector<std::string> generic_sources;
};

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

// The factors for `dispatcher` on `instance` under `fit`. Dispatchers without a posting path (NCCL's
// all-to-all) and catalogs without the reference instance get a proxy factor of 1.
A2aTransfer a2a_transfer(const DispatcherFit& fit, const DispatcherSpec& dispatcher,
                         const InstanceSpec& instance);

// `a2a` carried to the instance: node_latency_s and remote_token_s x proxy_factor, latency_s x host_factor.
A2aFit transferred(A2aFit a2a, const A2aTransfer& transfer);

// The mechanism: routing plans and the scenario's dispatcher model at the fit's parameters and host factor
// (DispatcherMoeCost). Throws InputError when the dispatcher cannot run at the scenario's EP size.
std::shared_ptr<const MoeCostModel> dispatcher_mechanism(const Scenario& scenario, const DispatcherFit& fit);

struct DispatcherCost {
  std::shared_ptr<const MoeCostModel> moe;  // what the builder prices every MoE cell with
  // Where the in-training terms come from and how they were carried to this instance (A2aTransfer::describe).
  std::string source;
};

// The dispatcher's cost of `scenario`'s layout: `mechanism` (dispatcher_mechanism's, or BalancedMoeCost)
// with the fitted in-training terms carried to the scenario's instance and the stack's scale on top.
DispatcherCost dispatcher_cost(const Scenario& scenario, const DispatcherFit& fit,
                               std::shared_ptr<const MoeCostModel> mechanism);

}  // namespace moetwin
