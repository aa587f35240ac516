// Internal to the workload builder: the stage builder (StageBuilder), which emits one pipeline stage's
// program op by op as the schedule (pipeline_program.hpp) walks its steps. Its parts by concern:
//  - stage_builder.cpp: the schedule's callbacks (forward, backward, the combined 1F1B step, P2P, epilogue);
//  - stage_ops.cpp: the op primitives (kernels, linear layers, collectives and their memoised per-rank
//    times, TP communication overlap, MoE var slots);
//  - stage_layers.cpp: the transformer layer's parts (attention, dense MLP, MoE router / dispatch / experts /
//    combine, embedding, output layer and loss, MTP), forward and backward;
//  - stage_gradients.cpp: parameters per chunk, the data-parallel gradient reduce-scatter (buckets) and
//    parameter all-gather.
// The MoE costs are priced later (moe_pricing.hpp), the stages assembled into a Workload by build_workload
// (workload.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/sim/context_parallel.hpp"
#include "moetwin/sim/cuda_graphs.hpp"
#include "moetwin/sim/fsdp.hpp"
#include "moetwin/sim/layer_ops.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/tp_comm_overlap.hpp"
#include "moetwin/sim/workload.hpp"
#include "workload_template.hpp"

namespace moetwin::stage_emission {

namespace ops = layer_ops;

// Hash of a tuple of hashable values (the builder's memo keys), combined as boost::hash_combine does.
struct TupleHash {
  template <typename... T>
  std::size_t operator()(const std::tuple<T...>& t) const {
    std::size_t h = 0;
    std::apply(
        [&h](const auto&... v) {
          ((h ^= std::hash<std::decay_t<decltype(v)>>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)),
           ...);
        },
        t);
    return h;
  }
};

// The NetLoad (engine's flow model) of a comm op of `total_ns` whose links are busy `nvlink_s` /
// `network_s` alone after `latency_ns` of fixed time; tx / rx: which directions it uses (a send, a
// receive, or both for a collective). None when nothing is left to share.
// `network_flows` / `nvlink_flows`: the flows it keeps on each (NetLoad::flows takes the busier link's).
std::optional<NetLoad> net_load_of(TimeNs total_ns, TimeNs latency_ns, double nvlink_s, double network_s,
                                   bool tx, bool rx, int network_flows = 1, int nvlink_flows = 1);

// A pipeline send uses its GPU's transmit side, a receive its receive side.
inline bool sends(ChannelKind kind) {
  return kind != ChannelKind::pp_fwd_in && kind != ChannelKind::pp_bwd_in;
}
inline bool receives(ChannelKind kind) {
  return kind != ChannelKind::pp_fwd_out && kind != ChannelKind::pp_bwd_out;
}
inline bool is_pipeline(ChannelKind kind) {
  return kind == ChannelKind::pp_fwd_out || kind == ChannelKind::pp_fwd_in ||
         kind == ChannelKind::pp_bwd_out || kind == ChannelKind::pp_bwd_in;
}

struct Ctx {
  const Scenario& s;
  const SimProfile& prof;
  const ComputeProfile& cp;
  const RankGroups& groups;
  const PipelineLayout& layout;
  const CommCostModel& comm;
  const MoeCostModel& moe;
  int m = 0;     // microbatches
  double T = 0;  // tokens per microbatch on a TP group (mb x seq / cp)
  int t = 1;     // tp
  bool combined = false;
  std::vector<const std::vector<int>*> tp_of, dp_of, ep_of, etp_of, edp_of;
  std::vector<int> prev_of, next_of;  // pipeline neighbours (ring)
  std::vector<int> cp_next_of;        // the next rank of the CP ring (context_parallel.hpp); empty at cp 1
};

// Parameters (elements) of one chunk held by one rank, for the DP collectives and the optimizer.
struct ChunkParams {
  double dense = 0;   // reduced over the dp x cp group
  double expert = 0;  // reduced over the expert-data-parallel group
};

class StageBuilder : public StageEmitter {
 public:
  StageBuilder(const Ctx& c, int stage);

  const std::vector<VarReq>& vars() const { return vars_; }
  const std::vector<int>& moe_layers() const { return moe_layers_; }
  const std::vector<CommEntry>& comm_entries() const { return comm_entries_; }
  double local_experts() const { return local_experts_; }

  // --- StageEmitter ---
  void prologue(Program& p) override {
    if (!c_.s.training.overlap_param_gather || fsdp()) return;
    for (int v = 0; v < c_.layout.vpp; ++v) ag_op_[static_cast<std::size_t>(v)] = param_gather(p, v);
  }

  int forward(Program& p, const StepContext& st) override;

  int backward(Program& p, const StepContext& st) override;

  std::pair<int, int> forward_backward(Program& p, const StepContext& fs, const StepContext& bs) override;

  void chunk_grads_ready(Program& p, int chunk, int last_op) override {
    if (c_.s.training.overlap_grad_reduce && !fsdp()) grad_reduce(p, chunk, last_op);
  }

  void epilogue(Program& p) override;

  OpSpec p2p(bool forward, int microbatch, int chunk) override;

  void set_labels(Program& p) {
    label_fwd_p2p_ = p.label(ops::kPpActivation.name);
    label_bwd_p2p_ = p.label(ops::kPpGradient.name);
  }

 private:
  struct Chain {
    int last = kNoOp;
    // Host time (layer_host_s / moe_host_s) the chain's next op issues before its own launches, ns.
    std::int64_t pending_host_ns = 0;
  };

  void add_moe_layer(int layer) { moe_layers_.push_back(layer); }
  int moe_index(int layer) const {
    const auto it = std::find(moe_layers_.begin(), moe_layers_.end(), layer);
    return it == moe_layers_.end() ? -1 : static_cast<int>(it - moe_layers_.begin());
  }
  int dp_size() const { return c_.s.parallel.dp * c_.s.parallel.cp; }
  // Megatron-FSDP (fsdp.hpp) with a data-parallel group to shard over.
  bool fsdp() const { return c_.s.training.megatron_fsdp && dp_size() > 1; }
  int edp_size() const { return c_.s.parallel.edp(); }

  std::int32_t host_ns(int launches, bool backward) const {
    if (graph_.capturing) return graph_.replay_ns();
    const double per = backward ? c_.prof.backward_launch_s : c_.prof.launch_s;
    return static_cast<std::int32_t>(to_ns(per * launches));
  }
  // Host time of one C++-issued call (a TE cast-transpose, at grouped_gemm_launch_s), ns: 0 inside a
  // captured graph (the graph launch already paid for it).
  std::int64_t cpp_call_ns() const { return graph_.capturing ? 0 : to_ns(c_.prof.grouped_gemm_launch_s); }
  // The TE-scoped CUDA-graph regions (cuda_graphs.hpp): while one is open, its first op pays one graph
  // launch and the others no launch time. A no-op unless the scenario uses te-scoped graphs.
  // `router`: the MoE router's region (captured by te-scoped and te-router); else attention's (te-scoped).
  GraphRegion te_graph_region(bool router = false) const {
    return GraphRegion(graph_, te_scoped_graphs_ || (router && te_router_graphs_), c_.prof.graph_launch_s);
  }
  // Per-layer host time (layer_host_s or moe_host_s) in a forward (backward = false) or backward pass:
  // the backward runs in the C++ autograd engine, at the backward/forward launch-cost ratio.
  void add_layer_host(Chain& ch, double forward_s, bool backward) const {
    const double ratio = c_.prof.launch_s > 0 ? c_.prof.backward_launch_s / c_.prof.launch_s : 1.0;
    ch.pending_host_ns += to_ns(backward ? forward_s * ratio : forward_s);
  }

  // p.label(name) memoised by the name's address: Program::label compares the name with every label so
  // far, once per op (~4% of `plan`). Sound because every name passed is a LayerOp record's static string
  // (layer_ops.hpp), so an address never names two strings while the builder lives; equal names at two
  // addresses still get one id from Program::label.
  int label_id(Program& p, const char* name) {
    if (label_program_ != &p) {
      label_program_ = &p;
      label_ids_.clear();
    }
    const auto [it, fresh] = label_ids_.try_emplace(name, 0);
    if (fresh) it->second = p.label(name);
    return it->second;
  }

  int first_forward_dep(int chunk);

  int add(Program& p, Chain& ch, OpSpec op) {
    op.deps[0] = ch.last;
    op.deps[1] = extra_dep_;
    op.host_ns = static_cast<std::int32_t>(op.host_ns + ch.pending_host_ns);
    ch.pending_host_ns = 0;
    extra_dep_ = kNoOp;
    op.microbatch = mb_;
    op.chunk = static_cast<std::int16_t>(chunk_);
    ch.last = p.add(op);
    return ch.last;
  }

  // A compute op of its record's class, label and launches (layer_ops.hpp). `dims`: the op's GEMM shape
  // {m, n, k} for a calibrated GPU's efficiency curves (compute_model.hpp); an op of several GEMMs names
  // its main one. Empty: the catalog roofline.
  int compute(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
              bool backward, const GemmDims& dims = {}) {
    return kernel_op(p, ch, rec.name, phase,
                     kernel_seconds(c_.cp, compute_class(rec.cls), flops, bytes, dims),
                     host_ns(rec.launches, backward));
  }
  // One kernel of `seconds` on the compute stream, issued after `host` ns of host time.
  int kernel_op(Program& p, Chain& ch, const char* name, OpPhase phase, double seconds, std::int32_t host);

  // A linear layer's GEMM (Transformer Engine Linear / LayerNormLinear): in an FP8 recipe its fprop, dgrad
  // and wgrad run in FP8 (fp8_kernel_seconds) and TE adds, per GEMM input, the recipe's quantization
  // (quantize_seconds: amax, cast and both copies at the measured fraction of HBM bandwidth; forward: the
  // input activations m x k, backward: the output gradients m x n), issued from C++ (at the per-call C++
  // issue cost). Weights are quantized once per iteration (TE caches them across microbatches): not
  // charged. NVFP4: the GEMMs at the FP4 rate (fp4_kernel_seconds). bf16: exactly compute().
  int linear(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
             bool backward, const GemmDims& dims) {
    if (!is_fp8(c_.s.training.precision)) return compute(p, ch, rec, phase, flops, bytes, backward, dims);
    return linear_op(p, ch, rec, phase, linear_seconds(rec, phase, flops, bytes, dims), backward);
  }
  // The kernel time of linear(), s.
  double linear_seconds(const LayerOp& rec, OpPhase phase, double flops, double bytes,
                        const GemmDims& dims) const;
  // A linear op of `seconds` with linear()'s host time (an FP8 recipe adds the C++-issued cast-transpose).
  int linear_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double seconds, bool backward);
  // TE's quantization of `elements` bf16 values under the scenario's recipe (quantize_seconds), s.
  double quantize_input_seconds(double elements) const {
    return quantize_seconds(c_.cp, quant_recipe(c_.s.training.precision), elements);
  }

  // A collective of the stage's `kind` groups on `stream`.
  int collective(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, CollectiveOp cop, double bytes,
                 ChannelKind kind, CommClass cls, std::uint8_t stream, bool backward) {
    return collective_op(p, ch, rec, phase, comm_entry(cop, bytes, kind), kind, cls, stream, backward);
  }
  // The collective op of comm entry `entry`.
  int collective_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, int entry, ChannelKind kind,
                    CommClass cls, std::uint8_t stream, bool backward);

  int tp_collective(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, CollectiveOp cop, double bytes,
                    bool backward) {
    if (c_.t <= 1) return ch.last;
    return collective(p, ch, rec, phase, cop, bytes, ChannelKind::tp, CommClass::tp, kStreamCompute,
                      backward);
  }

  // --- TP communication overlap (training.tp_comm_overlap; tp_comm_overlap.hpp) ---
  bool tp_overlap() const { return c_.s.training.tp_comm_overlap && c_.t > 1; }
  // A TP collective overlapped by `method` with `gemm_s` of its GEMM: the op stays on the compute stream
  // where its group meets, lasting per rank only what the overlap leaves exposed. Without overlap (or at
  // tp = 1): tp_collective.
  int tp_overlapped(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, CollectiveOp cop, double bytes,
                    bool backward, TpOverlapMethod method, double gemm_s) {
    if (!tp_overlap()) return tp_collective(p, ch, rec, phase, cop, bytes, backward);
    const int entry = exposed_entry(comm_entry(cop, bytes, ChannelKind::tp), method, gemm_s);
    return collective_op(p, ch, rec, phase, entry, ChannelKind::tp, CommClass::tp, kStreamCompute, backward);
  }
  // `gemm_s` of a GEMM share overlapped by `method`, s: slowed by the SMs the userbuffers kernels hold.
  double overlapped_gemm(TpOverlapMethod method, double gemm_s) const {
    if (!tp_overlap()) return gemm_s;
    return overlapped_gemm_s(method, gemm_s, c_.cp.sms, c_.prof.tp_overlap_sms);
  }
  // The comm entry of `base`'s exposed time under an overlap with `gemm_s` of GEMM in tp chunks, per local
  // rank. The flow model gets no load for it (usage unknown): the exposed remainder is priced in closed form.
  int exposed_entry(int base, TpOverlapMethod method, double gemm_s);

  // One side of a linear op's TP overlap: the collective, its method and the share of the op's GEMM time
  // (by FLOPs) it overlaps.
  struct TpSide {
    const LayerOp* rec;
    CollectiveOp cop;
    double bytes;
    TpOverlapMethod method;
    double share;
  };
  // A linear op between its TP collectives: `before` (an all-gather) and `after` (a reduce-scatter), either
  // null. Without overlap exactly tp_collective, linear, tp_collective. With it, each side's collective
  // lasts its exposed time against its share of the GEMM, and the shares overlapped by a pipeline or bulk
  // method are slowed by the SMs their kernels hold.
  void overlapped_linear(Program& p, Chain& ch, const TpSide* before, const LayerOp& rec, OpPhase phase,
                         double flops, double bytes, bool backward, const GemmDims& dims,
                         const TpSide* after);

  // The flow model's load of a comm entry's op on a channel of `kind`.
  std::optional<NetLoad> entry_load(int entry, ChannelKind kind) const;

 public:
  // The load of a pipeline send or receive (every P2P of a stage moves the same activation bytes).
  std::optional<NetLoad> p2p_load(ChannelKind kind);

  double p2p_bytes() const { return c_.T * c_.s.model.hidden * 2.0 / c_.t; }

 private:
  void set_comm_duration(OpSpec& op, int entry);

  // The var slot of `r`: ops that read the same per-rank duration share one slot (a full-recompute
  // forward reads the forward's A2A, expert and permute costs of its layer and microbatch), so each rank
  // stores one duration per distinct request, not one per op.
  int new_var(const VarReq& r);

  // An op whose per-rank duration comes from the MoE cost model (a var slot); the record's all-to-all
  // class puts it on the EP channel.
  int var_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, VarKind kind, bool fold, int layer,
             bool backward);

  // Memoised collective times for every local rank of the stage.
  int comm_entry(CollectiveOp cop, double bytes, ChannelKind kind);

  // --- model shapes ---
  double h() const { return c_.s.model.hidden; }
  bool mla() const { return c_.s.model.attention == AttentionKind::mla; }
  double heads() const { return c_.s.model.heads; }
  double q_width() const {  // per-head query/key width x heads (QK^T contraction)
    const ModelSpec& m = c_.s.model;
    return mla() ? heads() * (m.qk_head_dim + m.qk_rope_dim) : heads() * m.head_dim;
  }
  double v_width() const {
    const ModelSpec& m = c_.s.model;
    return mla() ? heads() * m.v_head_dim : heads() * m.head_dim;
  }
  double mla_down_width() const {
    const ModelSpec& m = c_.s.model;
    return static_cast<double>(m.q_lora_rank) + m.kv_lora_rank + m.qk_rope_dim;
  }

  // --- layer parts (forward) ---
  void attn_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass);

  // Keys per query of decoder layer `layer` (model_accounting: s/2 causal, a sliding-window layer its band
  // w - w^2/(2s)): the attention core's FLOPs are 2 x seq x keys x (qk + v) per sequence on this rank, and
  // its kernel's key extent (GEMM-shape fallback) is the window. Q, K, V and O bytes do not depend on it.
  double keys_per_query(int layer, double seq) const { return causal_keys_per_query(c_.s.model, layer, seq); }
  double key_extent(int layer, double seq) const {
    return layer_is_windowed(c_.s.model, layer) ? std::min<double>(c_.s.model.sliding_window, seq) : seq;
  }

  void core_attn(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass);
  // The fused attention core (forward, or its backward kernel): the GPU's measured attention kernels
  // when its profile has them (attention_kernel_seconds, by FLOPs per call and head width), else priced
  // as a GEMM of its shape (compute()).
  int attention(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
                bool backward_pass, bool backward_kernel, const GemmDims& dims);

  // The attention core under context parallelism (context_parallel.hpp): `flops` and `bytes` of the
  // rank's whole ring (forward or backward kernel), priced as cp tiles overlapped with the KV ring in
  // closed form, one op.
  int ring_attention(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
                     bool backward_pass, bool backward_kernel, const GemmDims& dims);
  // attention()'s kernel time without emitting an op, s.
  double attention_seconds(const LayerOp& rec, double flops, double bytes, bool backward_kernel,
                           const GemmDims& dims) const;
  // Query-key pairs per sequence of this rank's causal attention under CP load balancing.
  double ring_pairs() const { return ring_attention_pairs(c_.s.training.seq_length, c_.s.parallel.cp); }
  // The slowest CP ring hop of the stage's ranks for one KV block (cp_kv_bytes), s: the ring's step
  // transfer. Memoised per stage.
  double cp_ring_xfer_s();

  void router_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass);
  // Megatron's alltoall dispatcher with --moe-pad-expert-input-to-capacity: equal splits known on the
  // host, so no counts all-gather, no D2H copy and no host sync (a2a-mechanisms.md section 1).
  bool alltoall_padded() const {
    return c_.s.training.moe_pad_to_capacity && c_.s.dispatcher.transport == DispatcherTransport::nccl;
  }
  int counts_gather(Program& p, Chain& ch, OpPhase phase, bool backward_pass);

  void dense_mlp_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass);

  void shared_expert_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass);

  // The per-expert cuBLASLt calls TEGroupedMLP's two GroupedLinear ops issue from C++ (grouped_gemm_launch_s
  // each): forward fc1 + fc2, backward dgrad + wgrad of both (the record's gemm_calls_per_expert), ns. Its
  // Python-level ops are the record's launches.
  std::int32_t expert_gemm_host_ns(const LayerOp& rec) const {
    const double calls = static_cast<double>(rec.gemm_calls_per_expert) * local_experts_;
    return static_cast<std::int32_t>(to_ns(calls * c_.prof.grouped_gemm_launch_s));
  }

  // Sequential layer forward (also the full-recompute forward in backward).
  void layer_fwd(Program& p, Chain& ch, int layer, OpPhase phase);

  bool layer_is_moe_any(int layer) const { return moe_index(layer) >= 0; }

  void moe_attn_tail_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd);
  void moe_dispatch_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
    if (c_.s.parallel.ep > 1 || c_.combined) {
      var_op(p, ch, ops::kEpDispatch, phase, VarKind::dispatch, c_.combined, layer, bwd);
    }
  }
  void moe_mlp_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
    ch.pending_host_ns += expert_gemm_host_ns(ops::kMoeExperts);
    var_op(p, ch, ops::kMoeExperts, phase, VarKind::expert_fwd, false, layer, bwd);
    shared_expert_fwd(p, ch, phase, bwd);
  }
  void moe_combine_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd);

  // --- layer parts (backward) ---
  void attn_bwd(Program& p, Chain& ch, int layer);

  // The first backward part of a dense layer: the layer's backward host time.
  void dense_mlp_bwd(Program& p, Chain& ch);

  // The first backward part of a MoE layer: the layer's and the MoE block's backward host time.
  void moe_combine_bwd(Program& p, Chain& ch, int layer);
  // `delay_wgrad`: the experts' dgrad on the chain and their wgrad after it off the chain
  // (training.delay_wgrad_compute in a combined 1F1B step).
  void moe_mlp_bwd(Program& p, Chain& ch, int layer, bool delay_wgrad = false);
  void moe_dispatch_bwd(Program& p, Chain& ch, int layer) {
    if (c_.s.parallel.ep > 1 || c_.combined) {
      var_op(p, ch, ops::kEpDispatchBwd, OpPhase::backward, VarKind::combine, c_.combined, layer, true);
    }
  }
  void moe_attn_head_bwd(Program& p, Chain& ch, int layer);

  void layer_bwd(Program& p, Chain& ch, int layer);

  // --- embedding, output layer, MTP ---
  void embedding_fwd(Program& p, Chain& ch, OpPhase phase) {
    compute(p, ch, ops::kEmbedding, phase, 0, 2 * c_.T * h() * 2, false);
    tp_collective(p, ch, ops::kTpRsEmbedding, phase, CollectiveOp::reduce_scatter, c_.T * h() * 2, false);
  }
  void embedding_bwd(Program& p, Chain& ch) {
    tp_collective(p, ch, ops::kTpAgEmbeddingBwd, OpPhase::backward, CollectiveOp::all_gather, c_.T * h() * 2,
                  true);
    compute(p, ch, ops::kEmbeddingBwd, OpPhase::backward, 0, 3 * c_.T * h() * 2, true);
  }
  double vocab() const { return static_cast<double>(padded_vocab(c_.s.model, c_.t)); }
  void loss_fwd(Program& p, Chain& ch);
  void loss_bwd(Program& p, Chain& ch);
  void mtp_pre_fwd(Program& p, Chain& ch, OpPhase phase);
  void mtp_pre_bwd(Program& p, Chain& ch);
  void post_fwd(Program& p, Chain& ch, const PipelineChunk& chunk);
  void post_bwd(Program& p, Chain& ch, const PipelineChunk& chunk);

  // --- Megatron-FSDP (fsdp.hpp; stage_fsdp.cpp) ---
  // The chunk's units in forward order.
  std::vector<FsdpUnit> fsdp_units(int chunk) const;
  // The all-gather of `unit`'s parameters on the data-parallel stream, after op `after` (its buffer free).
  int fsdp_gather(Program& p, Chain& dp, const FsdpUnit& unit, bool backward, int after);
  // A chunk's forward / backward, unit by unit with their gathers (and reduce-scatters).
  // One pass of a chunk under Megatron-FSDP: forward, or backward in reverse unit order with each unit's
  // gradient reduce-scatter after it.
  void fsdp_pass(Program& p, Chain& ch, int chunk, bool backward);

  // --- CPU offload of activations (cpu_offload.hpp; stage_offload.cpp) ---
  // Activations decoder layer `layer` saves for backward, one microbatch, bytes (the memory model's).
  double offload_bytes(int layer) const;
  // The copy of `layer`'s activations to (reload = false) or from the host on its stream, after op `after`.
  int offload_copy(Program& p, int after, int layer, bool reload);
  // The compute stream waits for op `on` (a zero-time op after the chain; the chain's pending extra
  // dependency is kept for the op after it).
  void offload_wait(Program& p, Chain& ch, int on, OpPhase phase);
  // TE's group commits: after decoder layer `layer`'s forward, and before its backward.
  void offload_forward_commit(Program& p, Chain& ch, int layer);
  void offload_backward_commit(Program& p, Chain& ch, int layer);

  // --- data parallel ---
  // The per-layer parameter counts and the shares of them one rank holds (TP, EP and ETP splits).
  struct RankShares {
    LayerParams lp;
    double t = 1, etp = 1;
    double experts_local = 0;  // routed experts on this rank
    double attn = 0;           // attention parameters on this rank (TP-split part / tp + replicated part)
  };
  RankShares rank_shares() const;

  // Parameters of decoder layer `index` held by one rank.
  ChunkParams decoder_layer_params(int index) const;

  std::vector<ChunkParams> chunk_params() const;

  int param_gather(Program& p, int chunk) {
    Chain ch{kNoOp};
    return param_gather_ops(p, ch, chunk);
  }
  int param_gather_ops(Program& p, Chain& ch, int chunk);
  // Reduce-scatters the chunk's gradients not yet reduced by a bucket (all of them without
  // overlap_grad_reduce).
  int grad_reduce(Program& p, int chunk, int after);

  // Megatron DDP with overlap_grad_reduce: gradient sync runs in the last microbatch's backward only (the
  // others accumulate under no_sync), and a bucket's reduce-scatter starts as soon as every gradient in it
  // is ready; parameters sit in the buffer in reverse order, so buckets fill layer by layer as the backward
  // proceeds. Bucket: max(40M, 1M x dp) parameters (megatron/core/distributed/distributed_data_parallel.py,
  // the default ddp_config.bucket_size); dense and expert parameters live in separate buffers (the expert
  // one reduced over the expert-data-parallel group). Called after decoder layer `layer`'s backward.
  void layer_grads_ready(Program& p, int after, int layer);

  int grad_reduce_params(Program& p, int chunk, int after, const ChunkParams& cp);

 public:
  std::vector<int> sync_ops_;          // router ops whose D2H count copy syncs the host
  std::vector<std::int32_t> a2a_ops_;  // the all-to-alls (their SMs come with the MoE costs)

 private:
  const Ctx& c_;
  int stage_;
  mutable GraphState graph_;  // the open TE-scoped CUDA-graph region (host_ns is const)
  bool te_scoped_graphs_ = c_.s.training.cuda_graphs == CudaGraphs::te_scoped;
  bool te_router_graphs_ = c_.s.training.cuda_graphs == CudaGraphs::te_router;
  std::vector<const PipelineChunk*> chunks_;
  std::vector<int> moe_layers_;
  std::vector<VarReq> vars_;
  const Program* label_program_ = nullptr;          // the program label_ids_ holds ids of
  std::unordered_map<const char*, int> label_ids_;  // label_id
  std::vector<CommEntry> comm_entries_;
  // Hashed: every op of a stage program looks one of them up (an ordered map of tuples was ~7% of
  // `plan`, docs/2026-12-04-plan-speed.md session 40); neither is iterated, so order does not matter.
  std::unordered_map<std::tuple<int, double, int>, int, TupleHash> comm_index_;
  // exposed_entry: (base entry, method, overlapped GEMM ns) -> entry.
  std::map<std::tuple<int, int, TimeNs>, int> exposed_index_;
  std::unordered_map<std::tuple<int, bool, std::int32_t, std::int32_t, std::int32_t>, int, TupleHash>
      var_index_;  // new_var
  std::vector<ChunkParams> params_;
  // Per chunk: gradients of the last microbatch's backward waiting for their bucket to fill, and those
  // already reduced by a bucket.
  struct GradBuckets {
    ChunkParams pending;
    ChunkParams reduced;
  };
  std::vector<GradBuckets> buckets_;
  std::vector<int> ag_op_;
  std::vector<bool> first_fwd_done_;
  double local_experts_ = 0;
  double cp_xfer_s_ = -1;  // cp_ring_xfer_s, < 0 until asked
  int extra_dep_ = kNoOp;
  int mb_ = -1;
  int chunk_ = -1;
  int last_compute_ = kNoOp;
  int last_grad_op_ = kNoOp;
  int label_fwd_p2p_ = 0;
  int label_bwd_p2p_ = 0;
  // CPU offload: TE's window map, the next group to commit (forward: copy; backward: reload) and the last
  // copy issued on each stream.
  std::vector<int> offload_window_;
  int offload_next_ = 0;
  int offload_last_ = kNoOp;
  int offload_reload_ = kNoOp;
};

}  // namespace moetwin::stage_emission
