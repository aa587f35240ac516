// Communication cost seams of the workload builder, each with a documented default:
//  - CommCostModel: one NCCL collective or send/recv on a group of global ranks. Default: alpha-beta
//    over the instance's links (AlphaBetaComm). The integrator replaces it with topology's
//    estimate_collective (collectives.hpp) on the scenario's Cluster.
//  - MoeCostModel: per (MoE layer, microbatch, EP group), for every EP rank the token copies its local
//    experts receive and its dispatch / combine A2A times, permute / unpermute kernels and the SMs the A2A
//    kernels hold. Default: balanced routing over NCCL all-to-all (BalancedMoeCost). The integrator
//    replaces it with the routing plans and dispatcher models (routing_plan.hpp, dispatcher_model.hpp).
// Both are called while the workload is built (never in the engine's event loop).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

enum class CollectiveOp { all_gather, reduce_scatter, all_reduce, all_to_all, send_recv };
const char* to_string(CollectiveOp op);

// What one member of a collective holds of its own links when the collective runs alone, for the engine's
// flow model (engine.hpp, NetLoad): the fixed latency inside seconds() and how long each link is busy at
// the effective rate the closed form charges it (NVLink port, the GPU's EFA rails; per direction, every
// member of these collectives sends and receives alike; send/recv: the sender's tx, the receiver's rx).
struct CommUsage {
  double latency_s = 0;  // s, no bandwidth used
  double nvlink_s = 0;   // s the GPU's NVLink port is busy (each direction)
  double network_s = 0;  // s the GPU's EFA rails are busy (each direction)
  // Flows the member keeps on its rails / NVLink port, aggregated per (node pair, rail) as `moetwin net`
  // builds them: an all-to-all one per other node of the group (rails) and per other GPU of its node
  // (NVLink); a ring hop or a send one (engine NetLoad::flows).
  int network_flows = 1;
  int nvlink_flows = 1;
  bool known = false;  // false: the model cannot say (the op keeps a fixed duration in the flow model)
};

class CommCostModel {
 public:
  virtual ~CommCostModel() = default;
  virtual std::string name() const = 0;
  // Seconds of `op` on `ranks` (global rank ids, Megatron order: node = rank / gpus per node). `bytes`
  // follows nccl-tests: all-gather the output, reduce-scatter the input, all-reduce the buffer,
  // all-to-all each rank's send buffer, send/recv the message (ranks = {src, dst}).
  virtual double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const = 0;
  // The links the op holds alone (CommUsage); unknown by default.
  virtual CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
    (void)op, (void)bytes, (void)ranks;
    return {};
  }
};

// Alpha-beta default. Ring AG/RS move (n-1)/n of the buffer per rank, all-reduce twice that; all-to-all
// sends (n-g)/n of its buffer over the GPU's EFA rails and (g-1)/n over NVLink (g = members on its
// node); send/recv the message. The bandwidth of a step is the GPU's NVLink (per direction) when the
// group stays in one node, else its rails (nics_per_gpu x NIC bandwidth). Latency: per ring step /
// per message, base_latency_s of the instance across nodes, nvlink_latency_s inside one.
struct AlphaBetaParams {
  double nvlink_efficiency = 0.8;  // nccl-tests intra-node busbw ~360 of 450 GB/s on H100 (0.8)
  double efa_efficiency = 0.9;     // streamed RDMA writes at ~0.9 of line rate (topology/collectives.hpp)
  double nvlink_latency_s = 3e-6;  // NCCL Simple-protocol step inside a node, ~2-4 us
};

class AlphaBetaComm : public CommCostModel {
 public:
  AlphaBetaComm(const InstanceSpec& instance, const GpuSpec& gpu, AlphaBetaParams params = {});
  std::string name() const override { return "alpha-beta"; }
  double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;
  CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;

 private:
  InstanceSpec instance_;
  GpuSpec gpu_;
  AlphaBetaParams params_;
};

struct MoeRankCost {
  std::int64_t tokens = 0;  // token copies this rank's local experts process (sum over its experts)
  TimeNs dispatch_ns = 0;   // this rank's dispatch A2A time (the call ends at the slowest member)
  TimeNs combine_ns = 0;    // this rank's combine A2A time
  // The part of dispatch_ns / combine_ns that is the dispatcher model's handshake latency (a fixed time
  // per call, not a transfer); 0 where the model does not separate it.
  TimeNs dispatch_latency_ns = 0;
  TimeNs combine_latency_ns = 0;
  // Seconds this rank's dispatch / combine keeps its GPU's EFA rails and NVLink port busy at the
  // dispatcher's effective link rates (each direction), for the engine's flow model; 0 where the model
  // does not say.
  float dispatch_network_s = 0;
  float dispatch_nvlink_s = 0;
  float combine_network_s = 0;
  float combine_nvlink_s = 0;
  TimeNs permute_ns = 0;    // separate permute kernel on the compute stream, 0 when fused
  TimeNs unpermute_ns = 0;  // separate unpermute kernel, 0 when fused
  std::uint16_t sms = 0;    // SMs the A2A kernels hold while they run
  // Tokens this rank's dispatch sends to other nodes, and its combine receives back from them (DeepEP:
  // one per (token, remote node) pair, node-deduplicated; per-copy dispatchers: one per remote copy).
  std::int64_t dispatch_remote_tokens = 0;
  std::int64_t combine_remote_tokens = 0;
};

class MoeCostModel {
 public:
  virtual ~MoeCostModel() = default;
  virtual std::string name() const = 0;
  // `out` gets one entry per member of `ep_ranks` (global ranks in EP-rank order) for MoE layer
  // `layer` (0-based model order; MTP layers follow the decoder layers) and `microbatch`.
  // `ep_group` is the group's index in the job (distinct groups route different data).
  // Calls may come from several threads at once (the workload builder spreads the calls of unclassed
  // (layer, microbatch, group) cells, cost_class -1, over its threads): implementations guard any cache.
  virtual void layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                           std::vector<MoeRankCost>& out) const = 0;
  // A key for reuse: two layer_costs calls for the same EP group (same ep_group and ep_ranks) whose
  // (layer, microbatch) have equal non-negative keys return equal costs, so a caller may keep the first
  // answer (the builder asks for every MoE layer and microbatch of every group). -1: no such promise
  // (the default).
  virtual std::int64_t cost_class(int layer, int microbatch, int ep_group) const {
    (void)layer, (void)microbatch, (void)ep_group;
    return -1;
  }
  // Validity warnings about the modelled dispatcher at this scale (predict reports them); none by default.
  virtual std::vector<std::string> warnings() const { return {}; }
  // Called before the layer_costs calls of `layers` (MoE layers, as layer_costs numbers them): work those
  // calls share per layer may be done here, on up to `threads` threads. Answers must not depend on
  // whether or on how many threads it ran (the default does nothing).
  virtual void prepare_layers(const std::vector<int>& layers, int threads) const {
    (void)layers, (void)threads;
  }
};

// Balanced default (the live runs' forced load balancing): every EP rank routes its tokens_per_rank
// (mb x seq / tp with sequence parallelism) x top_k copies evenly over all experts, so every rank
// receives tokens_per_rank x top_k copies. NCCL all-to-all moves one copy per (token, expert); the A2A
// time comes from `comm` on the EP group with bytes = copies x hidden x 2 (bf16); the permute/unpermute
// kernels (separate unless the dispatcher fuses them) read and write every copy once (HBM-bound).
// Expert-tensor parallelism gathers the copies of the ETP group: tokens x etp.
class BalancedMoeCost : public MoeCostModel {
 public:
  BalancedMoeCost(const Scenario& scenario, std::shared_ptr<const CommCostModel> comm,
                  const ComputeProfile& compute, std::uint16_t a2a_sms);
  std::string name() const override { return "balanced"; }
  void layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                   std::vector<MoeRankCost>& out) const override;
  // The costs depend on the group's members alone.
  std::int64_t cost_class(int, int, int) const override { return 0; }

 private:
  std::shared_ptr<const CommCostModel> comm_;
  MoeRankCost cost_;      // identical for all ranks under balanced routing, A2A times aside
  double a2a_bytes_ = 0;  // each rank's dispatch send buffer, bytes
  int gpus_per_node_ = 1;
  std::int64_t copies_per_rank_ = 0;  // (token, expert) copies each rank's dispatch sends
  // The A2A time depends only on the group's node pattern; the last group's answer is reused when the
  // next call is for the same members (the builder asks layer by layer for the same group).
  mutable std::mutex cache_mutex_;  // guards the two below (layer_costs may be called from several threads)
  mutable std::vector<int> cached_ranks_;
  mutable std::vector<MoeRankCost> cached_;
};

// Decorators that multiply another model's times by a fitted factor (SimProfile::collective_time_scale,
// SimProfile::a2a_time_scale). The builder wraps its seams in them when the factor is not 1.
class ScaledCommCost : public CommCostModel {
 public:
  ScaledCommCost(std::shared_ptr<const CommCostModel> inner, double scale);
  std::string name() const override { return inner_->name(); }
  double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;
  // The inner model's: the scale lengthens the op, not its bytes (the links are then partly idle).
  CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override {
    return inner_->usage(op, bytes, ranks);
  }

 private:
  std::shared_ptr<const CommCostModel> inner_;
  double scale_;
};

// Nodes a rank group spans: global rank r lives on node r / gpus_per_node (> 0). Called with an NVLink
// domain's GPUs it counts domains.
int nodes_spanned(const std::vector<int>& ranks, int gpus_per_node);

// Consecutive GPUs inside which `scenario`'s EP all-to-all stays on NVLink, by dispatcher:
//  - NCCL all-to-all (Megatron's alltoall dispatcher, no dedup): the NVLink domain. NCCL's P2P transport
//    runs over the NVSwitch fabric of an NVL72 rack (MNNVL; Megatron-Bridge sets USE_MNNVL=1 and
//    NVLINK_DOMAIN_SIZE=72 on GB200/GB300: shared/design/nvl72-and-infiniband.md A2), so = the node on an
//    8-GPU instance, 72 on an NVL72 tray.
//  - node-dedup dispatchers (DeepEP v1 normal kernels and their ports): the node. DeepEP v1 forwards
//    within the NVL peers of one host (NUM_MAX_NVL_PEERS = 8, CUDA IPC buffers) and sends everything else
//    over RDMA (NVSHMEM / UCCL through the NICs: design doc C1); Megatron-Bridge does not allow deepep on
//    GB200/GB300 at all (falls back to alltoall, design doc C1), so no measured NVL72 run says more. On
//    an instance whose domain is its node both answers are the same.
int a2a_nvlink_reach_gpus(const Scenario& scenario);

// Per-call pipeline fill of a chunked A2A kernel (SimProfile::A2aFit::fill_tokens). DeepEP's normal-mode
// kernels stream tokens to every peer in chunks per (channel, peer) (num_max_*_chunked_send/recv_tokens
// x channels, ~100-300 tokens) and only run at link rate once every peer's chunks are in flight; each
// call pays that fill once: fill_s = tokens_per_peer x (EP - 1 peers) x hidden x bytes_per_element /
// the GPU's link bandwidth (its EFA rails, nics_per_gpu x NIC, when the EP group spans nodes, else its
// NVLink per direction). Hence a per-call cost that grows with EP size x hidden, which a fixed per-call
// latency cannot express (live runs: mb1 - mb4 differences of deepep-uccl - nccl give ~2.3 ms per call
// for hidden 7168 at EP32, ~1.0 ms for 4096 at EP32, ~0.5 ms for 4096 at EP16).
struct A2aFillGeometry {
  double tokens_per_peer = 0;    // fitted fill, tokens per peer per call (0: no fill term)
  double hidden = 0;             // elements per token
  double bytes_per_element = 2;  // bf16 dispatch and combine
  int gpus_per_node = 0;         // NVLink reach of global rank r = r / gpus_per_node (a2a_nvlink_reach_gpus)
  double inter_node_bandwidth = 0;  // per GPU per direction, bytes/s (nics_per_gpu x NIC bandwidth)
  double intra_node_bandwidth = 0;  // per GPU NVLink per direction, bytes/s
  // Fill seconds of one call on `ep_ranks` (0 with fewer than 2 ranks or no fill).
  double seconds(const std::vector<int>& ep_ranks) const;
};
// The geometry of `scenario` (hidden, bf16, its instance's links) with `tokens_per_peer`.
A2aFillGeometry a2a_fill_geometry(const Scenario& scenario, double tokens_per_peer);

// dispatch_ns and combine_ns become their handshake latency + scale x the rest + latency_s per call (the
// permute kernels, which are compute, are left alone). The per-call terms (latency_s, fill, node latency)
// join dispatch_latency_ns / combine_latency_ns: fixed times per call that use no bandwidth.
class ScaledMoeCost : public MoeCostModel {
 public:
  // Dispatch / combine: the inner model's handshake latency (MoeRankCost::dispatch_latency_ns /
  // combine_latency_ns) + scale x the rest of its time + latency_s + per_copy_s x the rank's received
  // token copies (MoeRankCost::tokens) + the call's pipeline fill (fill.seconds(ep_ranks)) + node_latency_s
  // x the remote nodes of the call's EP group + remote_token_s x the rank's tokens to or from other nodes
  // (MoeRankCost::dispatch_remote_tokens / combine_remote_tokens).
  // node_latency_s: per call per remote node of the call's EP group (nodes of fill.gpus_per_node GPUs: the
  // dispatcher's NVLink reach, a2a_nvlink_reach_gpus).
  ScaledMoeCost(std::shared_ptr<const MoeCostModel> inner, double scale, double latency_s = 0,
                double per_copy_s = 0, A2aFillGeometry fill = {}, double node_latency_s = 0,
                double remote_token_s = 0);
  std::string name() const override { return inner_->name(); }
  void layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                   std::vector<MoeRankCost>& out) const override;
  // The scaling reads the inner costs and the group's members alone.
  std::int64_t cost_class(int layer, int microbatch, int ep_group) const override {
    return inner_->cost_class(layer, microbatch, ep_group);
  }
  std::vector<std::string> warnings() const override { return inner_->warnings(); }
  void prepare_layers(const std::vector<int>& layers, int threads) const override {
    inner_->prepare_layers(layers, threads);
  }

 private:
  std::shared_ptr<const MoeCostModel> inner_;
  double scale_;
  double latency_s_;
  double per_copy_s_;
  A2aFillGeometry fill_;
  double node_latency_s_;
  double remote_token_s_;
};

}  // namespace moetwin
