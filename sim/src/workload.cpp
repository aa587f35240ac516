#include "moetwin/sim/workload.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/sim/a2a_transfer.hpp"
#include "moetwin/sim/cuda_graphs.hpp"
#include "moetwin/sim/layer_ops.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/schedule.hpp"
#include "moetwin/sim/tp_comm_overlap.hpp"
#include "moetwin/sim/workload_estimate.hpp"
#include "moetwin/topology/placement.hpp"
#include "moetwin/topology/shared_placement.hpp"
#include "workload_template.hpp"

namespace moetwin {

RankGroups megatron_rank_groups(const ParallelLayout& p, int gpus_per_node, int a2a_reach_gpus) {
  const std::shared_ptr<const Placement> shared = shared_placement(p, gpus_per_node);
  const Placement& placement = *shared;
  RankGroups g;
  g.world = p.world();
  g.gpus_per_node = gpus_per_node;
  g.a2a_reach_gpus = a2a_reach_gpus > 0 ? a2a_reach_gpus : gpus_per_node;
  g.stage_size = p.tp * p.cp * p.dp;
  g.tp = placement.groups(GroupKind::tp);
  g.dp = placement.groups(GroupKind::dp);
  g.ep = placement.groups(GroupKind::ep);
  g.etp = placement.groups(GroupKind::etp);
  g.edp = placement.groups(GroupKind::edp);
  g.pipelines = placement.groups(GroupKind::pp);
  g.ep_group_of.assign(static_cast<std::size_t>(g.world), -1);
  for (std::size_t i = 0; i < g.ep.size(); ++i) {
    for (int r : g.ep[i]) g.ep_group_of[static_cast<std::size_t>(r)] = static_cast<int>(i);
  }
  return g;
}

namespace {

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
                                   bool tx, bool rx, int network_flows = 1, int nvlink_flows = 1) {
  const TimeNs latency = std::clamp<TimeNs>(latency_ns, 0, total_ns);
  const auto transfer = static_cast<double>(total_ns - latency);
  if (!(transfer > 0)) return std::nullopt;
  // Fraction of the link's effective rate the op holds while it transfers (1: its bottleneck under the
  // closed form; a fitted slow-down or non-bandwidth terms inside the transfer leave the link part idle).
  const auto fraction = [&](double busy_s) {
    return static_cast<float>(std::clamp(busy_s * 1e9 / transfer, 0.0, 1.0));
  };
  NetLoad load;
  load.latency = latency;
  const float nvl = fraction(nvlink_s), net = fraction(network_s);
  if (nvl <= 0 && net <= 0) return std::nullopt;
  load.flows = static_cast<std::uint16_t>(std::clamp(net >= nvl ? network_flows : nvlink_flows, 1, 65535));
  if (tx) {
    load.use[static_cast<int>(NetRole::nvlink_tx)] = nvl;
    load.use[static_cast<int>(NetRole::network_tx)] = net;
  }
  if (rx) {
    load.use[static_cast<int>(NetRole::nvlink_rx)] = nvl;
    load.use[static_cast<int>(NetRole::network_rx)] = net;
  }
  return load;
}

// A pipeline send uses its GPU's transmit side, a receive its receive side.
bool sends(ChannelKind kind) {
  return kind != ChannelKind::pp_fwd_in && kind != ChannelKind::pp_bwd_in;
}
bool receives(ChannelKind kind) {
  return kind != ChannelKind::pp_fwd_out && kind != ChannelKind::pp_bwd_out;
}
bool is_pipeline(ChannelKind kind) {
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
};

// Megatron-Core DDP's default gradient bucket: max(40M, 1M x data-parallel size) parameters
// (megatron/core/distributed/distributed_data_parallel.py: bucket_size = max(40000000, 1000000 *
// dp_group.size()) when ddp_config.bucket_size is unset and overlap_grad_reduce is on).
constexpr double kDdpBucketParams = 40e6;
constexpr double kDdpBucketParamsPerDpRank = 1e6;

// Parameters (elements) of one chunk held by one rank, for the DP collectives and the optimizer.
struct ChunkParams {
  double dense = 0;   // reduced over the dp x cp group
  double expert = 0;  // reduced over the expert-data-parallel group
};

class StageBuilder : public StageEmitter {
 public:
  StageBuilder(const Ctx& c, int stage) : c_(c), stage_(stage) {
    const ModelSpec& model = c.s.model;
    for (int v = 0; v < c.layout.vpp; ++v) {
      const PipelineChunk& ch = c.layout.chunk(stage, v);
      chunks_.push_back(&ch);
      for (int i = 0; i < ch.decoder_layers; ++i) {
        const int layer = ch.first_layer + i;
        if (layer_is_moe(model, layer)) add_moe_layer(layer);
      }
      if (mtp_is_moe(model)) {
        for (int i = 0; i < ch.mtp_layers; ++i) add_moe_layer(model.layers + i);
      }
    }
    local_experts_ = model.experts > 0 ? model.experts / c.s.parallel.ep : 0;
    params_ = chunk_params();
    buckets_.assign(params_.size(), GradBuckets{});
    ag_op_.assign(static_cast<std::size_t>(c.layout.vpp), kNoOp);
    first_fwd_done_.assign(static_cast<std::size_t>(c.layout.vpp), false);
  }

  const std::vector<VarReq>& vars() const { return vars_; }
  const std::vector<int>& moe_layers() const { return moe_layers_; }
  const std::vector<CommEntry>& comm_entries() const { return comm_entries_; }
  double local_experts() const { return local_experts_; }

  // --- StageEmitter ---
  void prologue(Program& p) override {
    if (!c_.s.training.overlap_param_gather) return;
    for (int v = 0; v < c_.layout.vpp; ++v) ag_op_[static_cast<std::size_t>(v)] = param_gather(p, v);
  }

  int forward(Program& p, const StepContext& st) override {
    Chain ch{st.input_dep};
    extra_dep_ = first_forward_dep(st.chunk);
    const PipelineChunk& chunk = *chunks_[static_cast<std::size_t>(st.chunk)];
    mb_ = st.microbatch;
    chunk_ = st.chunk;
    if (chunk.embedding) embedding_fwd(p, ch, OpPhase::forward);
    for (int i = 0; i < chunk.decoder_layers; ++i) layer_fwd(p, ch, chunk.first_layer + i, OpPhase::forward);
    if (chunk.loss) post_fwd(p, ch, chunk);
    last_compute_ = ch.last;
    return ch.last;
  }

  int backward(Program& p, const StepContext& st) override {
    Chain ch{st.input_dep};
    const PipelineChunk& chunk = *chunks_[static_cast<std::size_t>(st.chunk)];
    mb_ = st.microbatch;
    chunk_ = st.chunk;
    if (chunk.loss) post_bwd(p, ch, chunk);
    for (int i = chunk.decoder_layers - 1; i >= 0; --i) {
      layer_bwd(p, ch, chunk.first_layer + i);
      layer_grads_ready(p, ch.last, chunk.first_layer + i);
    }
    if (chunk.embedding) embedding_bwd(p, ch);
    last_compute_ = ch.last;
    return ch.last;
  }

  std::pair<int, int> forward_backward(Program& p, const StepContext& fs, const StepContext& bs) override;

  void chunk_grads_ready(Program& p, int chunk, int last_op) override {
    if (c_.s.training.overlap_grad_reduce) grad_reduce(p, chunk, last_op);
  }

  void epilogue(Program& p) override {
    int last = kNoOp;
    if (!c_.s.training.overlap_grad_reduce) {
      for (int v = 0; v < c_.layout.vpp; ++v) {
        const int op = grad_reduce(p, v, last_compute_);
        if (op != kNoOp) last = op;
      }
    } else {
      last = last_grad_op_;
    }
    // Optimizer step over the local shard (distributed optimizer: 1 / (dp x cp) of the dense and
    // 1 / edp of the expert parameters).
    double shard = 0;
    for (const ChunkParams& cpar : params_) {
      shard += cpar.dense / static_cast<double>(dp_size()) + cpar.expert / static_cast<double>(edp_size());
    }
    Chain ch{last};
    chunk_ = -1;
    mb_ = -1;
    const int opt = compute(p, ch, ops::kOptimizerAdam, OpPhase::optimizer, 0,
                            shard * c_.prof.optimizer_bytes_per_param, false);
    last_compute_ = opt;
    if (!c_.s.training.overlap_param_gather) {
      for (int v = 0; v < c_.layout.vpp; ++v) {
        Chain g{opt};
        param_gather_ops(p, g, v);
      }
    }
  }

  OpSpec p2p(bool forward, int microbatch, int chunk) override {
    (void)microbatch, (void)chunk;
    OpSpec op;
    op.label = 0;  // set below
    const double bytes = p2p_bytes();
    const ChannelKind kind = forward ? ChannelKind::pp_fwd_out : ChannelKind::pp_bwd_out;
    // Both ends see the same pair, so the send side's entry serves both (max over members anyway).
    const int e = comm_entry(CollectiveOp::send_recv, bytes, kind);
    set_comm_duration(op, e);
    op.sms = static_cast<std::uint16_t>(c_.prof.nccl_sms);
    op.host_ns = host_ns(forward ? ops::kPpActivation.launches : ops::kPpGradient.launches, !forward);
    op.phase = forward ? OpPhase::forward : OpPhase::backward;
    op.label = forward ? label_fwd_p2p_ : label_bwd_p2p_;
    return op;
  }

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
  GraphRegion te_graph_region() const {
    return GraphRegion(graph_, te_scoped_graphs_, c_.prof.graph_launch_s);
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

  int first_forward_dep(int chunk) {
    auto idx = static_cast<std::size_t>(chunk);
    if (first_fwd_done_[idx]) return kNoOp;
    first_fwd_done_[idx] = true;
    return ag_op_[idx];
  }

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
  int kernel_op(Program& p, Chain& ch, const char* name, OpPhase phase, double seconds, std::int32_t host) {
    OpSpec op;
    op.duration = to_ns(seconds);
    op.host_ns = host;
    op.label = label_id(p, name);
    op.phase = phase;
    return add(p, ch, op);
  }

  // A linear layer's GEMM (Transformer Engine Linear / LayerNormLinear): in an FP8 recipe its fprop, dgrad
  // and wgrad run in FP8 (fp8_kernel_seconds) and TE adds, per GEMM input, a cast-transpose kernel (read
  // bf16, write the FP8 tensor and its transpose for the other GEMM: 2 + 1 + 1 bytes per element; forward:
  // the input activations m x k, backward: the output gradients m x n), issued from C++ (at the per-call
  // C++ issue cost). Weights are cast once per iteration (TE caches them across microbatches): not
  // charged. bf16: exactly compute().
  int linear(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
             bool backward, const GemmDims& dims) {
    if (!is_fp8(c_.s.training.precision)) return compute(p, ch, rec, phase, flops, bytes, backward, dims);
    return linear_op(p, ch, rec, phase, linear_seconds(rec, phase, flops, bytes, dims), backward);
  }
  // The kernel time of linear(), s.
  double linear_seconds(const LayerOp& rec, OpPhase phase, double flops, double bytes,
                        const GemmDims& dims) const {
    if (!is_fp8(c_.s.training.precision))
      return kernel_seconds(c_.cp, compute_class(rec.cls), flops, bytes, dims);
    const bool bwd_op = phase == OpPhase::backward;
    const double cast_elements = bwd_op ? dims.m * dims.n : dims.m * dims.k;
    // Operands in FP8 (1 B), the output in bf16 (2 B): half the bf16 operand-and-output bytes plus one byte
    // per output element back (the measured FP8 curves' memory term counts bytes this way).
    const double fp8_bytes = 0.5 * bytes + dims.m * dims.n;
    return fp8_kernel_seconds(c_.cp, compute_class(rec.cls), flops, fp8_bytes, dims) +
           fp8_cast_seconds(cast_elements);
  }
  // A linear op of `seconds` with linear()'s host time (an FP8 recipe adds the C++-issued cast-transpose).
  int linear_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double seconds, bool backward) {
    if (!is_fp8(c_.s.training.precision))
      return kernel_op(p, ch, rec.name, phase, seconds, host_ns(rec.launches, backward));
    return kernel_op(p, ch, rec.name, phase, seconds,
                     static_cast<std::int32_t>(host_ns(rec.launches, backward) + cpp_call_ns()));
  }
  // A TE cast(-transpose) of `elements` bf16 values to FP8 (with its transpose), s.
  double fp8_cast_seconds(double elements) const {
    return elements > 0 ? kernel_seconds(c_.cp, OpClass::elementwise, 0, elements * kFp8CastBytesPerElement)
                        : 0.0;
  }

  // A collective of the stage's `kind` groups on `stream`.
  int collective(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, CollectiveOp cop, double bytes,
                 ChannelKind kind, CommClass cls, std::uint8_t stream, bool backward) {
    return collective_op(p, ch, rec, phase, comm_entry(cop, bytes, kind), kind, cls, stream, backward);
  }
  // The collective op of comm entry `entry`.
  int collective_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, int entry, ChannelKind kind,
                    CommClass cls, std::uint8_t stream, bool backward) {
    OpSpec op;
    op.kind = OpKind::comm;
    op.channel = kind;
    op.comm_class = cls;
    op.stream = stream;
    op.sms = stream == kStreamCompute ? 0 : static_cast<std::uint16_t>(c_.prof.nccl_sms);
    set_comm_duration(op, entry);
    if (const auto load = entry_load(entry, kind)) op.net_load = p.net_load(*load);
    op.host_ns = host_ns(rec.launches, backward);
    op.label = label_id(p, rec.name);
    op.phase = phase;
    return add(p, ch, op);
  }

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
  int exposed_entry(int base, TpOverlapMethod method, double gemm_s) {
    const auto key = std::make_tuple(base, static_cast<int>(method), to_ns(gemm_s));
    const auto it = exposed_index_.find(key);
    if (it != exposed_index_.end()) return it->second;
    const auto exposed = [&](TimeNs comm) {
      return to_ns(exposed_s(method, static_cast<double>(comm) * 1e-9, gemm_s, c_.t));
    };
    CommEntry e;
    {
      const CommEntry& b = comm_entries_[static_cast<std::size_t>(base)];
      e.uniform = b.uniform;
      e.value = exposed(b.value);
      for (TimeNs v : b.per_local) e.per_local.push_back(exposed(v));
      e.first = exposed(b.first);
    }
    comm_entries_.push_back(std::move(e));
    const int id = static_cast<int>(comm_entries_.size()) - 1;
    exposed_index_.emplace(key, id);
    return id;
  }

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
                         const TpSide* after) {
    if (!tp_overlap()) {
      if (before != nullptr) tp_collective(p, ch, *before->rec, phase, before->cop, before->bytes, backward);
      linear(p, ch, rec, phase, flops, bytes, backward, dims);
      if (after != nullptr) tp_collective(p, ch, *after->rec, phase, after->cop, after->bytes, backward);
      return;
    }
    const double g = linear_seconds(rec, phase, flops, bytes, dims);
    double rest = 1;  // share of the GEMM time no overlap touches
    double before_s = 0, after_s = 0;
    if (before != nullptr) {
      before_s = overlapped_gemm(before->method, g * before->share);
      rest -= before->share;
    }
    if (after != nullptr) {
      after_s = overlapped_gemm(after->method, g * after->share);
      rest -= after->share;
    }
    if (before != nullptr)
      tp_overlapped(p, ch, *before->rec, phase, before->cop, before->bytes, backward, before->method,
                    before_s);
    linear_op(p, ch, rec, phase, g * rest + before_s + after_s, backward);
    if (after != nullptr)
      tp_overlapped(p, ch, *after->rec, phase, after->cop, after->bytes, backward, after->method, after_s);
  }

  // The flow model's load of a comm entry's op on a channel of `kind`.
  std::optional<NetLoad> entry_load(int entry, ChannelKind kind) const {
    const CommEntry& e = comm_entries_[static_cast<std::size_t>(entry)];
    if (!e.usage.known) return std::nullopt;
    return net_load_of(e.first, to_ns(e.usage.latency_s), e.usage.nvlink_s, e.usage.network_s, sends(kind),
                       receives(kind), e.usage.network_flows, e.usage.nvlink_flows);
  }

 public:
  // The load of a pipeline send or receive (every P2P of a stage moves the same activation bytes).
  std::optional<NetLoad> p2p_load(ChannelKind kind) {
    const bool forward = kind == ChannelKind::pp_fwd_out || kind == ChannelKind::pp_fwd_in;
    const int entry = comm_entry(CollectiveOp::send_recv, p2p_bytes(),
                                 forward ? ChannelKind::pp_fwd_out : ChannelKind::pp_bwd_out);
    return entry_load(entry, kind);
  }

  double p2p_bytes() const { return c_.T * c_.s.model.hidden * 2.0 / c_.t; }

 private:
  void set_comm_duration(OpSpec& op, int entry) {
    const CommEntry& e = comm_entries_[static_cast<std::size_t>(entry)];
    if (e.uniform) {
      op.duration = e.value;
    } else {
      VarReq r;
      r.kind = VarKind::comm;
      r.comm = entry;
      op.var_slot = new_var(r);
    }
  }

  // The var slot of `r`: ops that read the same per-rank duration share one slot (a full-recompute
  // forward reads the forward's A2A, expert and permute costs of its layer and microbatch), so each rank
  // stores one duration per distinct request, not one per op.
  int new_var(const VarReq& r) {
    const auto key = std::make_tuple(static_cast<int>(r.kind), r.fold, r.moe, r.mb, r.comm);
    const auto [it, fresh] = var_index_.try_emplace(key, static_cast<int>(vars_.size()));
    if (fresh) vars_.push_back(r);
    return it->second;
  }

  // An op whose per-rank duration comes from the MoE cost model (a var slot); the record's all-to-all
  // class puts it on the EP channel.
  int var_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, VarKind kind, bool fold, int layer,
             bool backward) {
    VarReq r;
    r.kind = kind;
    r.fold = fold;
    r.moe = moe_index(layer);
    r.mb = mb_;
    OpSpec op;
    op.var_slot = new_var(r);
    op.host_ns = host_ns(rec.launches, backward);
    op.label = label_id(p, rec.name);
    op.phase = phase;
    if (rec.cls == LayerOpClass::all_to_all) {
      op.kind = OpKind::comm;
      op.channel = ChannelKind::ep;
      op.comm_class = CommClass::ep;
      op.stream = c_.combined ? kStreamEpComm : kStreamCompute;
      // op.sms: the stage's A2A kernels' SMs, set when build_workload prices the MoE costs.
      const int id = add(p, ch, op);
      a2a_ops_.push_back(id);
      return id;
    }
    return add(p, ch, op);
  }

  // Memoised collective times for every local rank of the stage.
  int comm_entry(CollectiveOp cop, double bytes, ChannelKind kind) {
    const auto key = std::make_tuple(static_cast<int>(cop), bytes, static_cast<int>(kind));
    const auto it = comm_index_.find(key);
    if (it != comm_index_.end()) return it->second;
    CommEntry e;
    const int S = c_.groups.stage_size;
    e.per_local.resize(static_cast<std::size_t>(S));
    std::map<int, TimeNs> group_memo;  // groups of one kind are disjoint: keyed by first member
    std::vector<int> pair(2);
    for (int local = 0; local < S; ++local) {
      const int rank = stage_ * S + local;
      const auto r = static_cast<std::size_t>(rank);
      const std::vector<int>* members = nullptr;
      switch (kind) {
        case ChannelKind::tp:
          members = c_.tp_of[r];
          break;
        case ChannelKind::dp:
          members = c_.dp_of[r];
          break;
        case ChannelKind::ep:
          members = c_.ep_of[r];
          break;
        case ChannelKind::etp:
          members = c_.etp_of[r];
          break;
        case ChannelKind::edp:
          members = c_.edp_of[r];
          break;
        case ChannelKind::pp_fwd_out:
        case ChannelKind::pp_bwd_in:
          pair = {rank, c_.next_of[r]};
          break;
        case ChannelKind::pp_fwd_in:
        case ChannelKind::pp_bwd_out:
          pair = {c_.prev_of[r], rank};
          break;
        case ChannelKind::count:
          break;
      }
      TimeNs v = 0;
      if (members != nullptr) {
        const auto g = group_memo.find(members->front());
        if (g != group_memo.end()) {
          v = g->second;
        } else {
          v = to_ns(c_.comm.seconds(cop, bytes, *members));
          group_memo[members->front()] = v;
        }
      } else {
        v = to_ns(c_.comm.seconds(cop, bytes, pair));
      }
      e.per_local[static_cast<std::size_t>(local)] = v;
      if (local == 0) {
        e.usage = members != nullptr ? c_.comm.usage(cop, bytes, *members) : c_.comm.usage(cop, bytes, pair);
        e.first = v;
      }
    }
    e.value = e.per_local.empty() ? 0 : e.per_local[0];
    for (TimeNs v : e.per_local) e.uniform = e.uniform && v == e.value;
    if (e.uniform) e.per_local.clear();
    comm_entries_.push_back(std::move(e));
    const int id = static_cast<int>(comm_entries_.size()) - 1;
    comm_index_[key] = id;
    return id;
  }

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
  void attn_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass) {
    // A recompute re-runs the layer's Python forward: forward host time.
    add_layer_host(ch, c_.prof.layer_host_s, false);
    const GraphRegion graph = te_graph_region();
    const double T = c_.T, t = c_.t;
    const ModelSpec& m = c_.s.model;
    if (mla()) {
      // Down projections are TP-duplicated and run on the rank's sequence shard (T / t tokens); the
      // compressed q/kv are then gathered (sequence parallel) for the head-split up projections.
      const double down_out =
          m.q_lora_rank > 0 ? mla_down_width() : static_cast<double>(m.kv_lora_rank) + m.qk_rope_dim;
      linear(p, ch, ops::kAttnMlaDown, phase, 2 * (T / t) * h() * down_out,
             2 * (h() * down_out + (T / t) * (h() + down_out)), backward_pass, {T / t, down_out, h()});
      tp_collective(p, ch, ops::kTpAgMlaLatent, phase, CollectiveOp::all_gather, T * down_out * 2,
                    backward_pass);
      const double up = m.q_lora_rank > 0 ? m.q_lora_rank * q_width() : h() * q_width();
      const double kv_up = static_cast<double>(m.kv_lora_rank) * heads() * (m.qk_head_dim + m.v_head_dim);
      linear(p, ch, ops::kAttnMlaUp, phase, 2 * T * (up + kv_up) / t,
             2 * ((up + kv_up) / t + T * (down_out + (q_width() + v_width() + heads() * m.qk_head_dim) / t)),
             backward_pass,
             {T, heads() * (m.qk_head_dim + m.v_head_dim) / t, static_cast<double>(m.kv_lora_rank)});
    } else {
      const double kv = static_cast<double>(m.query_groups) * m.head_dim;
      const double n_out = q_width() + 2 * kv;
      // TE qkv_fprop: the all-gather by ring exchange with the whole QKV GEMM.
      const TpSide ag{&ops::kTpAgAttn, CollectiveOp::all_gather, T * h() * 2, TpOverlapMethod::ring_exchange,
                      1};
      overlapped_linear(p, ch, &ag, ops::kAttnQkv, phase, 2 * T * h() * n_out / t,
                        2 * (h() * n_out / t + T * (h() + n_out / t)), backward_pass, {T, n_out / t, h()},
                        nullptr);
    }
    core_attn(p, ch, layer, phase, backward_pass);
    // TE proj_fprop: the reduce-scatter pipelined with the whole output projection.
    const TpSide rs{&ops::kTpRsAttn, CollectiveOp::reduce_scatter, T * h() * 2, TpOverlapMethod::pipeline, 1};
    overlapped_linear(p, ch, nullptr, ops::kAttnOutProj, phase, 2 * T * v_width() * h() / t,
                      2 * (v_width() * h() / t + T * (v_width() / t + h())), backward_pass,
                      {T, h(), v_width() / t}, &rs);
  }

  // Keys per query of decoder layer `layer` (model_accounting: s/2 causal, a sliding-window layer its band
  // w - w^2/(2s)): the attention core's FLOPs are 2 x seq x keys x (qk + v) per sequence on this rank, and
  // its kernel's key extent (GEMM-shape fallback) is the window. Q, K, V and O bytes do not depend on it.
  double keys_per_query(int layer, double seq) const { return causal_keys_per_query(c_.s.model, layer, seq); }
  double key_extent(int layer, double seq) const {
    return layer_is_windowed(c_.s.model, layer) ? std::min<double>(c_.s.model.sliding_window, seq) : seq;
  }

  void core_attn(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass) {
    // Causal: half of 2 x seq^2 x (qk + v) per sequence and head group on this rank.
    const double seq = c_.s.training.seq_length / static_cast<double>(c_.s.parallel.cp);
    const double mb = c_.s.training.micro_batch;
    const double flops = mb * seq * (2 * keys_per_query(layer, seq)) * (q_width() + v_width()) / c_.t;
    const double bytes = 2 * c_.T * (2 * q_width() + 2 * v_width()) / c_.t;
    attention(p, ch, ops::kAttnCore, phase, flops, bytes, backward_pass, false,
              {seq, key_extent(layer, seq), q_width() / heads()});
  }
  // The fused attention core (forward, or its backward kernel): the GPU's measured attention kernels
  // when its profile has them (attention_kernel_seconds, by FLOPs per call and head width), else priced
  // as a GEMM of its shape (compute()).
  int attention(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops, double bytes,
                bool backward_pass, bool backward_kernel, const GemmDims& dims) {
    const double width = (q_width() + v_width()) / heads();
    const ModelSpec& m = c_.s.model;
    const bool grouped_kv = m.attention == AttentionKind::gqa && m.query_groups < m.heads;
    if (const std::optional<double> s =
            attention_kernel_seconds(c_.cp, backward_kernel, flops, width, grouped_kv))
      return kernel_op(p, ch, rec.name, phase, *s, host_ns(rec.launches, backward_pass));
    return compute(p, ch, rec, phase, flops, bytes, backward_pass, dims);
  }

  void router_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
    const double E = c_.s.model.experts;
    int op = kNoOp;
    {
      const GraphRegion graph = te_graph_region();
      op = compute(p, ch, ops::kMoeRouter, phase, 2 * (c_.T / c_.t) * h() * E,
                   2 * (h() * E + (c_.T / c_.t) * (h() + 4 * E)), backward_pass, {c_.T / c_.t, E, h()});
    }
    if (c_.prof.dispatch_host_sync && !alltoall_padded()) {
      // Dropless alltoall: the token counts are all-gathered over the EP group before the host copies
      // them (gather_from_sequence_parallel_region of the [E] int64 counts; the D2H waits for it).
      const int sync = counts_gather(p, ch, phase, backward_pass);
      sync_ops_.push_back(sync != kNoOp ? sync : op);
    }
  }
  // Megatron's alltoall dispatcher with --moe-pad-expert-input-to-capacity: equal splits known on the
  // host, so no counts all-gather, no D2H copy and no host sync (a2a-mechanisms.md section 1).
  bool alltoall_padded() const {
    return c_.s.training.moe_pad_to_capacity && c_.s.dispatcher.transport == DispatcherTransport::nccl;
  }
  int counts_gather(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
    if (c_.s.dispatcher.transport != DispatcherTransport::nccl || c_.s.parallel.ep <= 1 ||
        !c_.prof.counts_allgather)
      return kNoOp;
    const double bytes = 8.0 * c_.s.model.experts * c_.s.parallel.ep * c_.s.parallel.etp;
    // The engine keeps one stream per channel: with A2A overlap the EP channel is the EP comm stream (in
    // Megatron the gather runs on the compute stream; it is a few KiB, so the stream hardly matters).
    return collective(p, ch, ops::kEpCountsAllgather, phase, CollectiveOp::all_gather, bytes, ChannelKind::ep,
                      CommClass::ep, c_.combined ? kStreamEpComm : kStreamCompute, backward_pass);
  }

  void dense_mlp_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
    const double f = c_.s.model.ffn_hidden;
    // TE fc1_fprop (ring exchange) with fc1's gate and up GEMMs, 4 T h f of the op's 6 T h f; fc2_fprop
    // (pipeline) with fc2's 2 T h f.
    const TpSide ag{&ops::kTpAgMlp, CollectiveOp::all_gather, c_.T * h() * 2, TpOverlapMethod::ring_exchange,
                    2.0 / 3.0};
    const TpSide rs{&ops::kTpRsMlp, CollectiveOp::reduce_scatter, c_.T * h() * 2, TpOverlapMethod::pipeline,
                    1.0 / 3.0};
    overlapped_linear(p, ch, &ag, ops::kMlpDense, phase, 6 * c_.T * h() * f / c_.t,
                      2 * (3 * h() * f / c_.t + c_.T * (2 * h() + 3 * f / c_.t)), backward_pass,
                      {c_.T, f / c_.t, h()}, &rs);
  }

  void shared_expert_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
    const double fs = c_.s.model.shared_ffn_hidden;
    if (fs <= 0) return;
    tp_collective(p, ch, ops::kTpAgSharedExpert, phase, CollectiveOp::all_gather, c_.T * h() * 2,
                  backward_pass);
    linear(p, ch, ops::kMoeSharedExpert, phase, 6 * c_.T * h() * fs / c_.t,
           2 * (3 * h() * fs / c_.t + c_.T * (2 * h() + 3 * fs / c_.t)), backward_pass,
           {c_.T, fs / c_.t, h()});
    tp_collective(p, ch, ops::kTpRsSharedExpert, phase, CollectiveOp::reduce_scatter, c_.T * h() * 2,
                  backward_pass);
  }

  // The per-expert cuBLASLt calls TEGroupedMLP's two GroupedLinear ops issue from C++ (grouped_gemm_launch_s
  // each): forward fc1 + fc2, backward dgrad + wgrad of both (the record's gemm_calls_per_expert), ns. Its
  // Python-level ops are the record's launches.
  std::int32_t expert_gemm_host_ns(const LayerOp& rec) const {
    const double calls = static_cast<double>(rec.gemm_calls_per_expert) * local_experts_;
    return static_cast<std::int32_t>(to_ns(calls * c_.prof.grouped_gemm_launch_s));
  }

  // Sequential layer forward (also the full-recompute forward in backward).
  void layer_fwd(Program& p, Chain& ch, int layer, OpPhase phase) {
    const bool bwd = phase == OpPhase::recompute;
    attn_fwd(p, ch, layer, phase, bwd);
    if (!layer_is_moe_any(layer)) {
      dense_mlp_fwd(p, ch, phase, bwd);
      return;
    }
    moe_attn_tail_fwd(p, ch, layer, phase, bwd);
    moe_dispatch_fwd(p, ch, layer, phase, bwd);
    moe_mlp_fwd(p, ch, layer, phase, bwd);
    moe_combine_fwd(p, ch, layer, phase, bwd);
  }

  bool layer_is_moe_any(int layer) const { return moe_index(layer) >= 0; }

  void moe_attn_tail_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
    router_fwd(p, ch, phase, bwd);
    add_layer_host(ch, c_.prof.moe_host_s, false);
    if (!c_.s.dispatcher.fused_permute && !c_.combined) {
      var_op(p, ch, ops::kMoePermute, phase, VarKind::permute, false, layer, bwd);
    }
  }
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
  void moe_combine_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
    if (c_.s.parallel.ep > 1 || c_.combined) {
      var_op(p, ch, ops::kEpCombine, phase, VarKind::combine, c_.combined, layer, bwd);
    }
    if (!c_.s.dispatcher.fused_permute && !c_.combined) {
      var_op(p, ch, ops::kMoeUnpermute, phase, VarKind::unpermute, false, layer, bwd);
    }
  }

  // --- layer parts (backward) ---
  void attn_bwd(Program& p, Chain& ch, int layer) {
    const GraphRegion graph = te_graph_region();
    const double T = c_.T, t = c_.t;
    const ModelSpec& m = c_.s.model;
    const OpPhase ph = OpPhase::backward;
    // TE proj_dgrad: the output gradient's all-gather by ring exchange with the dgrad half of the op.
    const TpSide ag{&ops::kTpAgAttnBwd, CollectiveOp::all_gather, T * h() * 2, TpOverlapMethod::ring_exchange,
                    0.5};
    overlapped_linear(p, ch, &ag, ops::kAttnOutProjBwd, ph, 4 * T * v_width() * h() / t,
                      4 * (v_width() * h() / t + T * (v_width() / t + h())), true, {T, h(), v_width() / t},
                      nullptr);
    if (c_.s.training.recompute == Recompute::selective) core_attn(p, ch, layer, OpPhase::recompute, true);
    {
      const double seq = c_.s.training.seq_length / static_cast<double>(c_.s.parallel.cp);
      const double mb = c_.s.training.micro_batch;
      const double flops = c_.prof.attention_backward_factor * mb * seq * (2 * keys_per_query(layer, seq)) *
                           (q_width() + v_width()) / t;
      attention(p, ch, ops::kAttnCoreBwd, ph, flops, 4 * T * (2 * q_width() + 2 * v_width()) / t, true, true,
                {seq, key_extent(layer, seq), q_width() / heads()});
    }
    if (mla()) {
      const double down_out =
          m.q_lora_rank > 0 ? mla_down_width() : static_cast<double>(m.kv_lora_rank) + m.qk_rope_dim;
      const double up = m.q_lora_rank > 0 ? m.q_lora_rank * q_width() : h() * q_width();
      const double kv_up = static_cast<double>(m.kv_lora_rank) * heads() * (m.qk_head_dim + m.v_head_dim);
      linear(p, ch, ops::kAttnMlaUpBwd, ph, 4 * T * (up + kv_up) / t,
             4 * ((up + kv_up) / t + T * (down_out + (q_width() + v_width()) / t)), true,
             {T, heads() * (m.qk_head_dim + m.v_head_dim) / t, static_cast<double>(m.kv_lora_rank)});
      tp_collective(p, ch, ops::kTpRsMlaLatentBwd, ph, CollectiveOp::reduce_scatter, T * down_out * 2, true);
      linear(p, ch, ops::kAttnMlaDownBwd, ph, 4 * (T / t) * h() * down_out,
             4 * (h() * down_out + (T / t) * (h() + down_out)), true, {T / t, down_out, h()});
    } else {
      const double kv = static_cast<double>(m.query_groups) * m.head_dim;
      const double n_out = q_width() + 2 * kv;
      // TE qkv_wgrad (bulk): the input gradient's reduce-scatter beside the wgrad half of the op.
      const TpSide rs{&ops::kTpRsAttnBwd, CollectiveOp::reduce_scatter, T * h() * 2, TpOverlapMethod::bulk,
                      0.5};
      overlapped_linear(p, ch, nullptr, ops::kAttnQkvBwd, ph, 4 * T * h() * n_out / t,
                        4 * (h() * n_out / t + T * (h() + n_out / t)), true, {T, n_out / t, h()}, &rs);
    }
  }

  // The first backward part of a dense layer: the layer's backward host time.
  void dense_mlp_bwd(Program& p, Chain& ch) {
    add_layer_host(ch, c_.prof.layer_host_s, true);
    const double f = c_.s.model.ffn_hidden;
    // TE fc2_dgrad (ring exchange) with fc2's dgrad, 2 T h f of the op's 12 T h f; fc1_wgrad (bulk): fc1's
    // input-gradient reduce-scatter beside fc1's wgrad, 4 T h f.
    const TpSide ag{&ops::kTpAgMlpBwd, CollectiveOp::all_gather, c_.T * h() * 2,
                    TpOverlapMethod::ring_exchange, 1.0 / 6.0};
    const TpSide rs{&ops::kTpRsMlpBwd, CollectiveOp::reduce_scatter, c_.T * h() * 2, TpOverlapMethod::bulk,
                    1.0 / 3.0};
    overlapped_linear(p, ch, &ag, ops::kMlpDenseBwd, OpPhase::backward, 12 * c_.T * h() * f / c_.t,
                      4 * (3 * h() * f / c_.t + c_.T * (2 * h() + 3 * f / c_.t)), true, {c_.T, f / c_.t, h()},
                      &rs);
  }

  // The first backward part of a MoE layer: the layer's and the MoE block's backward host time.
  void moe_combine_bwd(Program& p, Chain& ch, int layer) {
    add_layer_host(ch, c_.prof.layer_host_s + c_.prof.moe_host_s, true);
    if (!c_.s.dispatcher.fused_permute && !c_.combined) {
      var_op(p, ch, ops::kMoeUnpermuteBwd, OpPhase::backward, VarKind::unpermute, false, layer, true);
    }
    // The gradient of combine is dispatch-shaped.
    if (c_.s.parallel.ep > 1 || c_.combined) {
      var_op(p, ch, ops::kEpCombineBwd, OpPhase::backward, VarKind::dispatch, c_.combined, layer, true);
    }
  }
  void moe_mlp_bwd(Program& p, Chain& ch, int layer) {
    const double fs = c_.s.model.shared_ffn_hidden;
    if (fs > 0) {
      tp_collective(p, ch, ops::kTpAgSharedExpertBwd, OpPhase::backward, CollectiveOp::all_gather,
                    c_.T * h() * 2, true);
      linear(p, ch, ops::kMoeSharedExpertBwd, OpPhase::backward, 12 * c_.T * h() * fs / c_.t,
             4 * (3 * h() * fs / c_.t + c_.T * (2 * h() + 3 * fs / c_.t)), true, {c_.T, fs / c_.t, h()});
      tp_collective(p, ch, ops::kTpRsSharedExpertBwd, OpPhase::backward, CollectiveOp::reduce_scatter,
                    c_.T * h() * 2, true);
    }
    ch.pending_host_ns += expert_gemm_host_ns(ops::kMoeExpertsBwd);
    var_op(p, ch, ops::kMoeExpertsBwd, OpPhase::backward, VarKind::expert_bwd, false, layer, true);
  }
  void moe_dispatch_bwd(Program& p, Chain& ch, int layer) {
    if (c_.s.parallel.ep > 1 || c_.combined) {
      var_op(p, ch, ops::kEpDispatchBwd, OpPhase::backward, VarKind::combine, c_.combined, layer, true);
    }
  }
  void moe_attn_head_bwd(Program& p, Chain& ch, int layer) {
    if (!c_.s.dispatcher.fused_permute && !c_.combined) {
      var_op(p, ch, ops::kMoePermuteBwd, OpPhase::backward, VarKind::permute, false, layer, true);
    }
    const double E = c_.s.model.experts;
    const GraphRegion graph = te_graph_region();
    compute(p, ch, ops::kMoeRouterBwd, OpPhase::backward, 4 * (c_.T / c_.t) * h() * E,
            4 * (h() * E + (c_.T / c_.t) * (h() + 4 * E)), true, {c_.T / c_.t, E, h()});
  }

  void layer_bwd(Program& p, Chain& ch, int layer) {
    if (c_.s.training.recompute == Recompute::full) layer_fwd(p, ch, layer, OpPhase::recompute);
    if (layer_is_moe_any(layer)) {
      moe_combine_bwd(p, ch, layer);
      moe_mlp_bwd(p, ch, layer);
      moe_dispatch_bwd(p, ch, layer);
      moe_attn_head_bwd(p, ch, layer);
    } else {
      dense_mlp_bwd(p, ch);
    }
    attn_bwd(p, ch, layer);
  }

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
  void loss_fwd(Program& p, Chain& ch) {
    const double T = c_.T, V = vocab();
    tp_collective(p, ch, ops::kTpAgOutput, OpPhase::forward, CollectiveOp::all_gather, T * h() * 2, false);
    compute(p, ch, ops::kOutputLayer, OpPhase::forward, 2 * T * h() * V / c_.t,
            2 * (h() * V / c_.t + T * (h() + V / c_.t)), false, {T, V / c_.t, h()});
    // Vocab-parallel cross-entropy: fp32 logits read/written ~3 times; max, sum and target all-reduces.
    compute(p, ch, ops::kLossCrossEntropy, OpPhase::forward, 0, 3 * T * V / c_.t * 4, false);
    tp_collective(p, ch, ops::kTpArCrossEntropy, OpPhase::forward, CollectiveOp::all_reduce, 3 * T * 4,
                  false);
  }
  void loss_bwd(Program& p, Chain& ch) {
    const double T = c_.T, V = vocab();
    compute(p, ch, ops::kLossCrossEntropyBwd, OpPhase::backward, 0, 2 * T * V / c_.t * 4, true);
    compute(p, ch, ops::kOutputLayerBwd, OpPhase::backward, 4 * T * h() * V / c_.t,
            4 * (h() * V / c_.t + T * (h() + V / c_.t)), true, {T, V / c_.t, h()});
    tp_collective(p, ch, ops::kTpRsOutputBwd, OpPhase::backward, CollectiveOp::reduce_scatter, T * h() * 2,
                  true);
  }
  void mtp_pre_fwd(Program& p, Chain& ch, OpPhase phase) {
    // MTP block: embedding of the shifted tokens, enorm/hnorm, eh_proj (2h -> h, TP-split).
    embedding_fwd(p, ch, phase);
    tp_collective(p, ch, ops::kTpAgMtpEh, phase, CollectiveOp::all_gather, c_.T * 2 * h() * 2, false);
    linear(p, ch, ops::kMtpEhProj, phase, 2 * c_.T * 2 * h() * h() / c_.t,
           2 * (2 * h() * h() / c_.t + c_.T * 3 * h()), false, {c_.T, h() / c_.t, 2 * h()});
  }
  void mtp_pre_bwd(Program& p, Chain& ch) {
    linear(p, ch, ops::kMtpEhProjBwd, OpPhase::backward, 4 * c_.T * 2 * h() * h() / c_.t,
           4 * (2 * h() * h() / c_.t + c_.T * 3 * h()), true, {c_.T, h() / c_.t, 2 * h()});
    tp_collective(p, ch, ops::kTpRsMtpEhBwd, OpPhase::backward, CollectiveOp::reduce_scatter,
                  c_.T * 2 * h() * 2, true);
    embedding_bwd(p, ch);
  }
  void post_fwd(Program& p, Chain& ch, const PipelineChunk& chunk) {
    loss_fwd(p, ch);
    for (int i = 0; i < chunk.mtp_layers; ++i) {
      mtp_pre_fwd(p, ch, OpPhase::forward);
      layer_fwd(p, ch, c_.s.model.layers + i, OpPhase::forward);
      loss_fwd(p, ch);
    }
  }
  void post_bwd(Program& p, Chain& ch, const PipelineChunk& chunk) {
    for (int i = chunk.mtp_layers - 1; i >= 0; --i) {
      loss_bwd(p, ch);
      layer_bwd(p, ch, c_.s.model.layers + i);
      mtp_pre_bwd(p, ch);
    }
    loss_bwd(p, ch);
  }

  // --- data parallel ---
  // The per-layer parameter counts and the shares of them one rank holds (TP, EP and ETP splits).
  struct RankShares {
    LayerParams lp;
    double t = 1, etp = 1;
    double experts_local = 0;  // routed experts on this rank
    double attn = 0;           // attention parameters on this rank (TP-split part / tp + replicated part)
  };
  RankShares rank_shares() const {
    const ModelSpec& m = c_.s.model;
    RankShares r;
    r.lp = layer_params(m);
    r.t = c_.t;
    r.etp = c_.s.parallel.etp;
    r.experts_local = m.experts > 0 ? static_cast<double>(m.experts) / c_.s.parallel.ep : 0;
    r.attn = static_cast<double>(r.lp.attention - r.lp.attention_tp_replicated) / r.t +
             static_cast<double>(r.lp.attention_tp_replicated);
    return r;
  }

  // Parameters of decoder layer `index` held by one rank.
  ChunkParams decoder_layer_params(int index) const {
    const ModelSpec& m = c_.s.model;
    const RankShares r = rank_shares();
    const LayerParams& lp = r.lp;
    const double t = r.t, etp = r.etp, experts_local = r.experts_local, attn = r.attn;
    ChunkParams cp;
    cp.dense += attn + static_cast<double>(lp.mlp_norm);
    if (layer_is_moe(m, index)) {
      cp.dense += static_cast<double>(lp.shared_experts) / t + static_cast<double>(lp.router);
      cp.expert += experts_local * static_cast<double>(lp.routed_expert) / etp;
    } else {
      cp.dense += static_cast<double>(lp.dense_mlp) / t;
    }
    return cp;
  }

  std::vector<ChunkParams> chunk_params() const {
    const ModelSpec& m = c_.s.model;
    const RankShares r = rank_shares();
    const LayerParams& lp = r.lp;
    const double t = r.t, etp = r.etp, experts_local = r.experts_local, attn = r.attn;
    std::vector<ChunkParams> out;
    for (const PipelineChunk* ch : chunks_) {
      ChunkParams cp;
      for (int i = 0; i < ch->decoder_layers; ++i) {
        const ChunkParams layer = decoder_layer_params(ch->first_layer + i);
        cp.dense += layer.dense;
        cp.expert += layer.expert;
      }
      const double table = static_cast<double>(padded_vocab(m, c_.t)) * m.hidden / t;
      if (ch->embedding) cp.dense += table;
      if (ch->loss) cp.dense += (m.tied_embeddings ? 0 : table) + m.hidden;
      for (int i = 0; i < ch->mtp_layers; ++i) {
        cp.dense += static_cast<double>(mtp_extra_params(m)) / t;
        if (mtp_is_moe(m)) {
          cp.dense += attn + static_cast<double>(lp.mlp_norm + lp.router) +
                      static_cast<double>(lp.shared_experts) / t;
          cp.expert += experts_local * static_cast<double>(lp.routed_expert) / etp;
        } else {
          cp.dense += attn + static_cast<double>(lp.mlp_norm) + static_cast<double>(lp.dense_mlp) / t;
        }
      }
      out.push_back(cp);
    }
    return out;
  }

  int param_gather(Program& p, int chunk) {
    Chain ch{kNoOp};
    return param_gather_ops(p, ch, chunk);
  }
  int param_gather_ops(Program& p, Chain& ch, int chunk) {
    const ChunkParams& cp = params_[static_cast<std::size_t>(chunk)];
    chunk_ = chunk;
    mb_ = -1;
    if (dp_size() > 1) {
      collective(p, ch, ops::kDpParamAllGather, OpPhase::optimizer, CollectiveOp::all_gather,
                 cp.dense * c_.prof.param_bytes, ChannelKind::dp, CommClass::dp, kStreamDpComm, false);
    }
    if (edp_size() > 1 && cp.expert > 0) {
      collective(p, ch, ops::kEdpParamAllGather, OpPhase::optimizer, CollectiveOp::all_gather,
                 cp.expert * c_.prof.param_bytes, ChannelKind::edp, CommClass::dp, kStreamDpComm, false);
    }
    return ch.last;
  }
  // Reduce-scatters the chunk's gradients not yet reduced by a bucket (all of them without
  // overlap_grad_reduce).
  int grad_reduce(Program& p, int chunk, int after) {
    const ChunkParams& all = params_[static_cast<std::size_t>(chunk)];
    GradBuckets& b = buckets_[static_cast<std::size_t>(chunk)];
    ChunkParams rest;
    rest.dense = std::max(0.0, all.dense - b.reduced.dense);
    rest.expert = std::max(0.0, all.expert - b.reduced.expert);
    b.reduced = all;
    b.pending = {};
    return grad_reduce_params(p, chunk, after, rest);
  }

  // Megatron DDP with overlap_grad_reduce: gradient sync runs in the last microbatch's backward only (the
  // others accumulate under no_sync), and a bucket's reduce-scatter starts as soon as every gradient in it
  // is ready; parameters sit in the buffer in reverse order, so buckets fill layer by layer as the backward
  // proceeds. Bucket: max(40M, 1M x dp) parameters (megatron/core/distributed/distributed_data_parallel.py,
  // the default ddp_config.bucket_size); dense and expert parameters live in separate buffers (the expert
  // one reduced over the expert-data-parallel group). Called after decoder layer `layer`'s backward.
  void layer_grads_ready(Program& p, int after, int layer) {
    if (!c_.s.training.overlap_grad_reduce || mb_ != c_.m - 1 || chunk_ < 0) return;
    GradBuckets& b = buckets_[static_cast<std::size_t>(chunk_)];
    const ChunkParams lp = decoder_layer_params(layer);
    b.pending.dense += lp.dense;
    b.pending.expert += lp.expert;
    const double bucket = std::max(kDdpBucketParams, kDdpBucketParamsPerDpRank * dp_size());
    ChunkParams full;
    if (b.pending.dense >= bucket) std::swap(full.dense, b.pending.dense);
    if (b.pending.expert >= bucket) std::swap(full.expert, b.pending.expert);
    if (full.dense <= 0 && full.expert <= 0) return;
    b.reduced.dense += full.dense;
    b.reduced.expert += full.expert;
    grad_reduce_params(p, chunk_, after, full);
  }

  int grad_reduce_params(Program& p, int chunk, int after, const ChunkParams& cp) {
    Chain ch{after};
    const int saved_chunk = chunk_, saved_mb = mb_;
    chunk_ = chunk;
    mb_ = -1;
    int last = kNoOp;
    if (dp_size() > 1 && cp.dense > 0) {
      last = collective(p, ch, ops::kDpGradReduceScatter, OpPhase::optimizer, CollectiveOp::reduce_scatter,
                        cp.dense * c_.prof.grad_bytes, ChannelKind::dp, CommClass::dp, kStreamDpComm, true);
    }
    if (edp_size() > 1 && cp.expert > 0) {
      last = collective(p, ch, ops::kEdpGradReduceScatter, OpPhase::optimizer, CollectiveOp::reduce_scatter,
                        cp.expert * c_.prof.grad_bytes, ChannelKind::edp, CommClass::dp, kStreamDpComm, true);
    }
    chunk_ = saved_chunk;
    mb_ = saved_mb;
    if (last != kNoOp) last_grad_op_ = last;
    return last;
  }

 public:
  std::vector<int> sync_ops_;          // router ops whose D2H count copy syncs the host
  std::vector<std::int32_t> a2a_ops_;  // the all-to-alls (their SMs come with the MoE costs)

 private:
  const Ctx& c_;
  int stage_;
  mutable GraphState graph_;  // the open TE-scoped CUDA-graph region (host_ns is const)
  bool te_scoped_graphs_ = c_.s.training.cuda_graphs == CudaGraphs::te_scoped;
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
  int extra_dep_ = kNoOp;
  int mb_ = -1;
  int chunk_ = -1;
  int last_compute_ = kNoOp;
  int last_grad_op_ = kNoOp;
  int label_fwd_p2p_ = 0;
  int label_bwd_p2p_ = 0;
};

// Megatron TransformerLayerSchedulePlan.run order for one forward and one backward step.
std::pair<int, int> StageBuilder::forward_backward(Program& p, const StepContext& fs, const StepContext& bs) {
  const PipelineChunk& fc = *chunks_[static_cast<std::size_t>(fs.chunk)];
  const PipelineChunk& bc = *chunks_[static_cast<std::size_t>(bs.chunk)];
  Chain f{fs.input_dep}, b{bs.input_dep};
  int f_extra = first_forward_dep(fs.chunk);  // parameter all-gather: dep of the first forward op
  auto as_f = [&]() {
    mb_ = fs.microbatch;
    chunk_ = fs.chunk;
    extra_dep_ = f_extra;
    f_extra = kNoOp;
  };
  auto as_b = [&]() {
    mb_ = bs.microbatch;
    chunk_ = bs.chunk;
    extra_dep_ = kNoOp;
  };
  as_f();
  if (fc.embedding) embedding_fwd(p, f, OpPhase::forward);
  as_b();
  if (bc.loss) post_bwd(p, b, bc);
  const int nf = fc.decoder_layers, nb = bc.decoder_layers;
  for (int i = 0; i < std::max(nf, nb); ++i) {
    const int fl = i < nf ? fc.first_layer + i : -1;
    const int bl = i < nb ? bc.first_layer + (nb - 1 - i) : -1;
    const bool f_moe = fl >= 0 && layer_is_moe_any(fl);
    const bool b_moe = bl >= 0 && layer_is_moe_any(bl);
    const bool b_full = bl >= 0 && c_.s.training.recompute == Recompute::full;
    if (b_full) {  // the recompute forward precedes the backward as a whole
      as_b();
      layer_fwd(p, b, bl, OpPhase::recompute);
    }
    if (fl >= 0) {
      as_f();
      attn_fwd(p, f, fl, OpPhase::forward, false);
      if (f_moe) moe_attn_tail_fwd(p, f, fl, OpPhase::forward, false);
    }
    if (b_moe) {
      as_b();
      moe_combine_bwd(p, b, bl);
    }
    if (f_moe) {
      as_f();
      moe_dispatch_fwd(p, f, fl, OpPhase::forward, false);
    }
    if (bl >= 0) {
      as_b();
      if (b_moe) {
        moe_mlp_bwd(p, b, bl);
      } else {
        dense_mlp_bwd(p, b);
      }
    }
    if (fl >= 0) {
      as_f();
      if (f_moe) {
        moe_mlp_fwd(p, f, fl, OpPhase::forward, false);
      } else {
        dense_mlp_fwd(p, f, OpPhase::forward, false);
      }
    }
    if (b_moe) {
      as_b();
      moe_dispatch_bwd(p, b, bl);
    }
    if (f_moe) {
      as_f();
      moe_combine_fwd(p, f, fl, OpPhase::forward, false);
    }
    if (bl >= 0) {
      as_b();
      if (b_moe) moe_attn_head_bwd(p, b, bl);
      attn_bwd(p, b, bl);
      layer_grads_ready(p, b.last, bl);
    }
  }
  as_f();
  if (fc.loss) post_fwd(p, f, fc);
  as_b();
  if (bc.embedding) embedding_bwd(p, b);
  last_compute_ = std::max(f.last, b.last);
  return {f.last, b.last};
}

}  // namespace

double host_time_factor(const SimProfile& prof, const InstanceSpec& instance) {
  if (!(prof.host_reference_cpu_score > 0) || !(instance.cpu_single_thread_score > 0)) return 1.0;
  return prof.host_reference_cpu_score / instance.cpu_single_thread_score;
}

SimProfile host_scaled(const SimProfile& prof, const InstanceSpec& instance) {
  const double f = host_time_factor(prof, instance);
  if (f == 1.0) return prof;
  SimProfile p = prof;
  p.launch_s *= f;
  p.backward_launch_s *= f;
  p.grouped_gemm_launch_s *= f;
  p.graph_launch_s *= f;
  p.layer_host_s *= f;
  p.moe_host_s *= f;
  return p;
}

namespace {

// Local ranks of a stage (0 .. S-1) grouped by what their var-slot durations are made of: the per-rank
// values of the non-uniform collective entries and the MoE costs of every (MoE layer, microbatch) that
// the durations read (copies, A2A and permute times). Ranks of one class have equal durations slot by
// slot, so the builder computes and stores one row per class. Classes are numbered by lowest local rank.
std::vector<std::int32_t> duration_classes(const std::vector<CommEntry>& comm,
                                           const std::vector<const MoeRankCost*>& table, int S) {
  const auto n = static_cast<std::size_t>(S);
  std::vector<std::int32_t> cls(n, 0);
  std::size_t classes = n == 0 ? 0 : 1;
  // Partition refinement, one value column at a time (a collective entry's per-rank times, a (MoE layer,
  // microbatch) cell's costs), read in rank order: a column equal on every rank splits nothing and costs
  // one pass; a split renumbers classes by lowest local rank. Stops once every rank is its own class.
  using Row = std::array<std::int64_t, 6>;  // class so far, then the column's values
  std::map<Row, std::int32_t> ids;
  std::vector<std::int32_t> next(n);
  const auto refine = [&](const auto& values) {  // values(local) -> the column's values of that rank
    if (classes == n) return;
    bool uniform = true;
    for (std::size_t local = 1; local < n && uniform; ++local) uniform = values(local) == values(0);
    if (uniform) return;
    ids.clear();
    for (std::size_t local = 0; local < n; ++local) {
      const auto v = values(local);
      Row row{cls[local], 0, 0, 0, 0, 0};
      std::copy(v.begin(), v.end(), row.begin() + 1);
      next[local] = ids.emplace(row, static_cast<std::int32_t>(ids.size())).first->second;
    }
    cls.swap(next);
    classes = ids.size();
  };
  for (const CommEntry& e : comm) {
    if (!e.uniform)
      refine([&](std::size_t local) { return std::array<std::int64_t, 1>{e.per_local[local]}; });
  }
  const std::size_t cells = n == 0 ? 0 : table.size() / n;  // (MoE layer, microbatch) pairs
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const MoeRankCost* const* col = table.data() + cell * n;
    refine([&](std::size_t local) {
      const MoeRankCost& mc = *col[local];
      return std::array<std::int64_t, 5>{mc.tokens, mc.dispatch_ns, mc.combine_ns, mc.permute_ns,
                                         mc.unpermute_ns};
    });
  }
  return cls;
}

// Every stage's program as the builder emits it (StageTemplate), before the MoE costs are priced.
std::vector<StageTemplate> emit_stages(const Ctx& c, const PipelineOptions& popt) {
  const ParallelLayout& par = c.s.parallel;
  std::vector<StageTemplate> out;
  out.reserve(static_cast<std::size_t>(par.pp));
  for (int stage = 0; stage < par.pp; ++stage) {
    StageBuilder b(c, stage);
    StageTemplate t;
    // Stages differ by the embedding and the head only: the previous stage's op count (+1/8) spares the
    // op vector's regrowth (5-13% of a plan's replays, docs/2026-12-04-plan-speed.md).
    if (!out.empty()) t.program.reserve(out.back().program.ops().size() * 9 / 8);
    b.set_labels(t.program);
    // overlap_moe_a2a without a pipeline runs Megatron-Core's combined 1F1B of
    // forward_backward_no_pipelining.
    emit_pipeline(t.program,
                  c.combined && par.pp == 1 ? no_pipelining_combined_schedule(c.m)
                                            : pipeline_schedule(par.pp, par.vpp, c.m, stage, popt.p2p_mode),
                  par.vpp, c.m, b, popt);
    for (int op : b.sync_ops_) t.program.op(op).sync = HostSync::op;
    if (c.s.training.cuda_graphs == CudaGraphs::full_iteration)
      capture_full_iteration(t.program, c.prof.graph_launch_s);
    // The pipeline sends' and receives' flow-model loads, asked in op order as the pricing assigns them.
    std::array<bool, kChannelKinds> asked{};
    for (const OpSpec& o : t.program.ops()) {
      const auto k = static_cast<std::size_t>(o.channel);
      if (o.kind != OpKind::comm || o.net_load >= 0 || !is_pipeline(o.channel) || asked[k]) continue;
      asked[k] = true;
      t.p2p_loads[k] = b.p2p_load(o.channel);
    }
    t.vars = b.vars();
    t.comm = b.comm_entries();
    t.moe_layers = b.moe_layers();
    t.a2a_ops = b.a2a_ops_;
    t.local_experts = b.local_experts();
    out.push_back(std::move(t));
  }
  return out;
}

// What the emission reads (emit_stages), for WorkloadTemplateKey: `prof` (host-scaled) without the
// members only the MoE costs, the engine or the host scaling read.
SimProfile emission_profile(const SimProfile& prof) {
  SimProfile p = prof;
  p.host_reference_cpu_score = 0;  // read by host_scaled, before: the scaled terms carry it
  p.proxy_reference_instance.clear();
  p.network = NetworkMode::closed_form;  // the engine's
  p.a2a_by_dispatcher.clear();           // the MoE cost seam's (ScaledMoeCost) ...
  p.model_params.clear();                // ... the dispatcher model's ...
  p.stack_a2a_scale.clear();
  p.generic_a2a = {};
  return p;
}

WorkloadTemplateKey template_key(const Scenario& s, const SimProfile& prof, const WorkloadSeams& seams) {
  WorkloadTemplateKey k;
  k.model = s.model;
  k.parallel = s.parallel;
  k.training = s.training;
  k.fused_permute = s.dispatcher.fused_permute;
  k.nccl_transport = s.dispatcher.transport == DispatcherTransport::nccl;
  k.gpus_per_node = s.instance.gpus;
  k.overlap_p2p = overlap_p2p_comm(s);
  k.profile = emission_profile(prof);
  k.compute = seams.compute;
  k.comm = seams.comm.get();
  return k;
}

}  // namespace

BuiltWorkload build_workload(const Scenario& s, const SimProfile& fitted, const WorkloadSeams& seams,
                             int threads) {
  const InputLocation where{s.source, 0};
  // Host time per op scales with the instance CPU's single-thread speed relative to the CPU the host
  // terms were fitted (or measured) on.
  const SimProfile prof = host_scaled(fitted, s.instance);
  BuiltWorkload out;
  const ParallelLayout& par = s.parallel;
  out.microbatches = s.training.microbatches(par);
  if (out.microbatches < 1)
    throw InputError(where, "global_batch", std::to_string(s.training.global_batch), ">= mb x dp");
  if (par.vpp > 1 && out.microbatches % par.pp != 0) {
    throw InputError(where, "global_batch", std::to_string(s.training.global_batch),
                     "microbatches (gbs / (mb x dp) = " + std::to_string(out.microbatches) +
                         ") divisible by pp with vpp > 1 (Megatron's interleaved schedule)");
  }
  // Refused before anything is allocated when it would not fit (workload_estimate.hpp).
  check_workload_size(s, estimate_workload(s), workload_limit_bytes());
  out.layout = make_pipeline_layout(s.model, par, where);
  out.groups = megatron_rank_groups(par, s.instance.gpus, a2a_nvlink_reach_gpus(s));
  out.compute = seams.compute != nullptr ? *seams.compute : ComputeProfile::from_gpu(s.gpu);
  if (!(prof.compute_time_scale > 0 && prof.collective_time_scale > 0))
    throw std::logic_error("build_workload: fitted time scales must be > 0");
  // Scales every catalog roofline time (compute- and memory-bound) by the factor; measured GEMM curves
  // keep their times.
  scale_catalog_kernel_time(out.compute, prof.compute_time_scale);
  std::shared_ptr<const CommCostModel> comm = seams.comm;
  if (!comm) comm = std::make_shared<TopologyComm>(s);
  std::shared_ptr<const MoeCostModel> moe = seams.moe;
  if (!moe)
    moe = std::make_shared<BalancedMoeCost>(s, comm, out.compute, static_cast<std::uint16_t>(prof.nccl_sms));
  if (prof.collective_time_scale != 1)
    comm = std::make_shared<ScaledCommCost>(comm, prof.collective_time_scale);
  // The dispatcher's in-training terms carried from the reference instance (and CPU) to this one by the
  // mechanisms they stand for (a2a_transfer.hpp); `fitted`'s host reference, not the scaled copy's.
  const A2aTransfer transfer = a2a_transfer(fitted, s.dispatcher, s.instance);
  SimProfile::A2aFit a2a = transferred(prof.a2a_for(s.dispatcher.name), transfer);
  out.a2a_source = transfer.describe(
      prof.a2a_by_dispatcher.count(s.dispatcher.name) > 0 ? "own fitted" : "generic (no runs of it)",
      s.instance.name);
  if (const auto st = prof.stack_a2a_scale.find(s.stack.spec.name); st != prof.stack_a2a_scale.end())
    a2a.time_scale *= st->second;
  if (!(a2a.time_scale > 0) || !(a2a.latency_s >= 0) || !(a2a.per_copy_s >= 0) || !(a2a.fill_tokens >= 0) ||
      !(a2a.node_latency_s >= 0) || !(a2a.remote_token_s >= 0))
    throw std::logic_error(
        "build_workload: A2A time scale must be > 0, latency, per-copy time, fill, node latency, "
        "remote-token "
        "time >= 0");
  if (a2a.time_scale != 1 || a2a.latency_s != 0 || a2a.per_copy_s != 0 || a2a.fill_tokens != 0 ||
      a2a.node_latency_s != 0 || a2a.remote_token_s != 0)
    moe = std::make_shared<ScaledMoeCost>(moe, a2a.time_scale, a2a.latency_s, a2a.per_copy_s,
                                          a2a_fill_geometry(s, a2a.fill_tokens), a2a.node_latency_s,
                                          a2a.remote_token_s);
  out.comm_model = comm->name();
  out.moe_model = moe->name();

  Ctx c{s,  prof, out.compute, out.groups, out.layout, *comm, *moe, out.microbatches, 0, par.tp, false,
        {}, {},   {},          {},         {},         {},    {}};
  c.T = static_cast<double>(s.training.micro_batch) * s.training.seq_length / par.cp;
  // Megatron-Core pairs a forward with a backward when overlapping the EP A2A: in the interleaved steady
  // state (vpp > 1; it asserts a virtual pipeline when pp > 1) or in forward_backward_no_pipelining (pp 1).
  c.combined = s.training.overlap_moe_a2a && (par.vpp > 1 || par.pp == 1);
  const RankGroups& g = out.groups;
  const auto W = static_cast<std::size_t>(g.world);
  c.tp_of.assign(W, nullptr);
  c.dp_of.assign(W, nullptr);
  c.ep_of.assign(W, nullptr);
  c.etp_of.assign(W, nullptr);
  c.edp_of.assign(W, nullptr);
  c.prev_of.assign(W, 0);
  c.next_of.assign(W, 0);
  auto index = [](std::vector<const std::vector<int>*>& of, const std::vector<std::vector<int>>& groups) {
    for (const auto& grp : groups) {
      for (int r : grp) of[static_cast<std::size_t>(r)] = &grp;
    }
  };
  index(c.tp_of, g.tp);
  index(c.dp_of, g.dp);
  index(c.ep_of, g.ep);
  index(c.etp_of, g.etp);
  index(c.edp_of, g.edp);
  for (const auto& pipe : g.pipelines) {
    const std::size_t n = pipe.size();
    for (std::size_t i = 0; i < n; ++i) {
      c.next_of[static_cast<std::size_t>(pipe[i])] = pipe[(i + 1) % n];
      c.prev_of[static_cast<std::size_t>(pipe[i])] = pipe[(i + n - 1) % n];
    }
  }

  Workload& w = out.workload;
  w.sms = out.compute.sms;
  w.init_ranks(g.world);
  w.stream_names = pipeline_stream_names();
  const int S = g.stage_size;
  std::int64_t var_total = 0;
  std::vector<MoeRankCost> scratch;
  PipelineOptions popt;
  // A full-iteration graph holds no device sync: Megatron's batch_p2p_sync cannot run inside it.
  popt.p2p_device_sync = prof.p2p_device_sync && s.training.cuda_graphs != CudaGraphs::full_iteration;
  // Without a pipeline a single microbatch has no other to pair with (F0 B0 run apart).
  popt.combine_steady_steps = c.combined && !(par.pp == 1 && c.m < 2);
  // overlap_p2p_comm: posted isend/irecv, no batched call, so batch_p2p_sync never runs (schedule.hpp).
  popt.p2p_mode = overlap_p2p_comm(s) ? P2pMode::overlapped : P2pMode::blocking;
  // The stage programs as emitted (before the MoE costs): from the cache when an earlier build emitted the
  // same (workload_template_cache.hpp), else emitted here (and kept for the next build when cached).
  std::shared_ptr<const WorkloadTemplate> shared;
  std::vector<StageTemplate> own;
  if (seams.programs != nullptr && seams.compute != nullptr && seams.comm != nullptr) {
    WorkloadTemplateKey key = template_key(s, prof, seams);
    shared = seams.programs->find(key);
    if (!shared) {
      own = emit_stages(c, popt);
      // Kept only within the cache's bound (workload_template_cache.hpp: a kept template is a second copy
      // of the programs in memory); a larger one is priced in place below, as the plain build's.
      if (seams.programs->admits(template_bytes(own))) {
        auto t = std::make_shared<WorkloadTemplate>();
        t->key = std::move(key);
        t->comm_owner = seams.comm;
        t->stages = std::move(own);
        own.clear();
        shared = t;
        seams.programs->insert(shared);
      } else {
        seams.programs->count_refused();
      }
    }
  } else {
    own = emit_stages(c, popt);
  }
  std::vector<std::shared_ptr<const CompiledProgram>> compiled;  // by stage, when shared
  for (int stage = 0; stage < par.pp; ++stage) {
    const auto si = static_cast<std::size_t>(stage);
    // The plain build prices the program it emitted; a shared template's is copied first.
    const StageTemplate& st = shared ? shared->stages[si] : own[si];
    Program prog = shared ? shared->stages[si].program : std::move(own[si].program);
    // MoE costs of every (MoE layer on this stage, microbatch) for every local rank.
    const auto L = st.moe_layers.size();
    const auto M = static_cast<std::size_t>(out.microbatches);
    // What the cells of a layer share (skewed routing's per-layer statistics), layers spread over the
    // threads before the cells are.
    moe->prepare_layers(st.moe_layers, threads);
    // Pointers into class_costs and answers (stable storage): ranks and cells that share an answer share
    // its entries, 8 bytes a cell instead of a copy.
    static const MoeRankCost kNoCost{};
    std::vector<const MoeRankCost*> table(L * M * static_cast<std::size_t>(S), &kNoCost);
    // Costs by (EP group, cost class): one call per class and group (MoeCostModel::cost_class), made in
    // cell order; the cells without a class (skewed routing: every cell is its own random plan) are
    // priced afterwards on `threads` threads, each into its own slot, so the table does not depend on the
    // thread count.
    struct Cell {
      std::size_t li, mb, gi;
      const std::vector<MoeRankCost>* costs;  // null: unclassed, priced into `answers` below
      std::size_t answer;
    };
    std::vector<Cell> cells;
    std::map<std::pair<std::size_t, std::int64_t>, std::vector<MoeRankCost>> class_costs;
    std::size_t unclassed = 0;
    for (std::size_t li = 0; li < L; ++li) {
      for (std::size_t mb = 0; mb < M; ++mb) {
        for (std::size_t gi = 0; gi < g.ep.size(); ++gi) {
          const auto& members = g.ep[gi];
          if (members.front() / S != stage) continue;
          const int layer = st.moe_layers[li];
          const std::int64_t key = moe->cost_class(layer, static_cast<int>(mb), static_cast<int>(gi));
          if (key < 0) {
            cells.push_back(Cell{li, mb, gi, nullptr, unclassed++});
            continue;
          }
          auto hit = class_costs.find({gi, key});
          if (hit == class_costs.end()) {
            moe->layer_costs(layer, static_cast<int>(mb), static_cast<int>(gi), members, scratch);
            if (scratch.size() != members.size())
              throw std::logic_error("MoeCostModel: wrong number of ranks");
            hit = class_costs.emplace(std::make_pair(gi, key), scratch).first;
          }
          cells.push_back(Cell{li, mb, gi, &hit->second, 0});
        }
      }
    }
    std::vector<std::vector<MoeRankCost>> answers(unclassed);
    {
      std::vector<const Cell*> todo;
      todo.reserve(unclassed);
      for (const Cell& cell : cells) {
        if (cell.costs == nullptr) todo.push_back(&cell);
      }
      parallel_for(todo.size(), threads, [&](std::size_t k) {
        const Cell& cell = *todo[k];
        const auto& members = g.ep[cell.gi];
        std::vector<MoeRankCost>& priced = answers[cell.answer];
        moe->layer_costs(st.moe_layers[cell.li], static_cast<int>(cell.mb), static_cast<int>(cell.gi),
                         members, priced);
        if (priced.size() != members.size()) throw std::logic_error("MoeCostModel: wrong number of ranks");
      });
    }
    std::uint16_t moe_sms = 0;  // the stage's A2A kernels' SMs: the most any cell's costs hold
    for (const Cell& cell : cells) {
      const auto& members = g.ep[cell.gi];
      const std::vector<MoeRankCost>& costs = cell.costs != nullptr ? *cell.costs : answers[cell.answer];
      for (std::size_t k = 0; k < members.size(); ++k) {
        const MoeRankCost& mc = costs[k];
        table[(cell.li * M + cell.mb) * static_cast<std::size_t>(S) +
              static_cast<std::size_t>(members[k] % S)] = &mc;
        moe_sms = std::max(moe_sms, mc.sms);
      }
    }
    for (std::int32_t op : st.a2a_ops) prog.op(op).sms = moe_sms;
    // Flow-model loads of the pipeline P2P and the A2As (collectives got theirs when added); the A2A's from
    // the stage's first rank's MoE costs of that layer and microbatch. An A2A keeps one flow per other node
    // of the EP group on the rails (DeepEP: one RDMA stream per remote node; NCCL: the pair of NVLink
    // domains' copies aggregated per rail), one per other GPU of its NVLink reach on NVLink.
    const std::vector<int>& first_ep = *c.ep_of[static_cast<std::size_t>(stage * S)];
    const int reach = g.a2a_reach_gpus;
    const int a2a_network_flows = nodes_spanned(first_ep, reach) - 1;
    const int a2a_nvlink_flows =
        static_cast<int>(std::count_if(first_ep.begin(), first_ep.end(),
                                       [&](int rank) { return rank / reach == first_ep.front() / reach; })) -
        1;
    for (int i = 0; i < prog.size(); ++i) {
      const OpSpec& o = prog.ops()[static_cast<std::size_t>(i)];
      if (o.kind != OpKind::comm || o.net_load >= 0) continue;
      std::optional<NetLoad> load;
      if (is_pipeline(o.channel)) {
        load = st.p2p_loads[static_cast<std::size_t>(o.channel)];
      } else if (o.var_slot >= 0) {
        const VarReq& r = st.vars[static_cast<std::size_t>(o.var_slot)];
        if (r.kind == VarKind::dispatch || r.kind == VarKind::combine) {
          const MoeRankCost& mc =
              *table[(static_cast<std::size_t>(r.moe) * M + static_cast<std::size_t>(r.mb)) *
                     static_cast<std::size_t>(S)];
          load = r.kind == VarKind::dispatch
                     ? net_load_of(mc.dispatch_ns + (r.fold ? mc.permute_ns : 0), mc.dispatch_latency_ns,
                                   mc.dispatch_nvlink_s, mc.dispatch_network_s, true, true, a2a_network_flows,
                                   a2a_nvlink_flows)
                     : net_load_of(mc.combine_ns + (r.fold ? mc.unpermute_ns : 0), mc.combine_latency_ns,
                                   mc.combine_nvlink_s, mc.combine_network_s, true, true, a2a_network_flows,
                                   a2a_nvlink_flows);
        }
      }
      if (load) prog.op(i).net_load = prog.net_load(*load);
    }
    for (std::size_t i = 0; i < st.vars.size(); ++i) prog.new_var_slot();
    prog.seal(kStreams);
    // A shared template's priced programs compile alike but for the A2A ops' SMs (StageTemplate::compiled):
    // the engine copies the kept compiled form instead of compiling (docs/2026-12-04-plan-speed.md,
    // session 43).
    if (shared) {
      if (!st.compiled) {
        st.compiled = compile_program(prog);
      } else if (!st.a2a_ops.empty() && st.compiled_sms != moe_sms) {
        st.compiled = recompile_sms(*st.compiled, prog, st.a2a_ops);
      }
      st.compiled_sms = moe_sms;
      compiled.push_back(st.compiled);
    }
    // Per-rank durations of the var slots.
    const auto& vars = st.vars;
    const ModelSpec& m = s.model;
    const double hid = m.hidden, fe = m.expert_ffn_hidden, etp = par.etp;
    const double weights = st.local_experts * 3 * hid * fe / etp * 2;
    const bool fp8 = is_fp8(s.training.precision);
    // One row of durations per class of equal ranks (duration_classes): the ranks of a class share it
    // through var_offset, so the work and memory grow with the classes, not with the stage's ranks.
    const std::vector<std::int32_t> cls = duration_classes(st.comm, table, S);
    std::vector<std::int64_t> class_offset;
    for (int local = 0; local < S; ++local) {
      const int rank = stage * S + local;
      w.rank_program[static_cast<std::size_t>(rank)] = static_cast<std::int32_t>(w.programs.size());
      const auto k = static_cast<std::size_t>(cls[static_cast<std::size_t>(local)]);
      if (k < class_offset.size()) {
        w.var_offset[static_cast<std::size_t>(rank)] = class_offset[k];
        continue;
      }
      class_offset.push_back(var_total);
      w.var_offset[static_cast<std::size_t>(rank)] = var_total;
      for (const VarReq& r : vars) {
        TimeNs v = 0;
        if (r.kind == VarKind::comm) {
          const CommEntry& e = st.comm[static_cast<std::size_t>(r.comm)];
          v = e.uniform ? e.value : e.per_local[static_cast<std::size_t>(local)];
        } else {
          const MoeRankCost& mc =
              *table[(static_cast<std::size_t>(r.moe) * M + static_cast<std::size_t>(r.mb)) *
                         static_cast<std::size_t>(S) +
                     static_cast<std::size_t>(local)];
          const double tok = static_cast<double>(mc.tokens);
          // Calibrated GPUs: one expert's GEMM shape (tokens per local expert x expert FFN x hidden); the
          // backward's dgrad and wgrad (k = tokens: the small-k curve) are timed as halves of the op.
          const double per_expert = tok / st.local_experts;
          const double fwd_bytes = weights + tok * (2 * hid + 3 * fe / etp) * 2;
          // FP8 recipes: TE GroupedLinear runs fc1/fc2 (and their dgrad/wgrad) in FP8 and cast-transposes
          // each GEMM input first (fc1: tok x hidden, fc2: tok x ffn; backward the output gradients).
          const double fp8_bytes = 0.5 * fwd_bytes + tok * hid;  // FP8 operands, bf16 outputs
          const double cast_s = fp8 && tok > 0
                                    ? kernel_seconds(out.compute, OpClass::elementwise, 0,
                                                     tok * (hid + fe / etp) * kFp8CastBytesPerElement)
                                    : 0.0;
          switch (r.kind) {
            case VarKind::expert_fwd:
              if (fp8) {
                v = to_ns(fp8_kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                             fp8_bytes, {per_expert, fe / etp, hid}) +
                          cast_s);
                break;
              }
              v = to_ns(kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                       fwd_bytes, {per_expert, fe / etp, hid}));
              break;
            case VarKind::expert_bwd:
              if (fp8) {
                v = to_ns(fp8_kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                             fp8_bytes, {per_expert, hid, fe / etp}) +
                          fp8_kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                             fp8_bytes, {hid, fe / etp, per_expert}) +
                          cast_s);
              } else if (out.compute.calibration) {
                v = to_ns(kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                         fwd_bytes, {per_expert, hid, fe / etp}) +
                          kernel_seconds(out.compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                         fwd_bytes, {hid, fe / etp, per_expert}));
              } else {
                v = to_ns(kernel_seconds(out.compute, OpClass::grouped_gemm, 12 * tok * hid * fe / etp,
                                         2 * fwd_bytes));
              }
              break;
            case VarKind::dispatch:
              v = mc.dispatch_ns + (r.fold ? mc.permute_ns : 0);
              break;
            case VarKind::combine:
              v = mc.combine_ns + (r.fold ? mc.unpermute_ns : 0);
              break;
            case VarKind::permute:
              v = mc.permute_ns;
              break;
            case VarKind::unpermute:
              v = mc.unpermute_ns;
              break;
            case VarKind::comm:
              break;
          }
        }
        w.var_durations.push_back(v);
      }
      var_total += static_cast<std::int64_t>(vars.size());
    }
    w.programs.push_back(std::move(prog));
  }
  w.add_group_channels(ChannelKind::tp, g.tp);
  w.add_group_channels(ChannelKind::dp, g.dp);
  w.add_group_channels(ChannelKind::ep, g.ep);
  w.add_group_channels(ChannelKind::etp, g.etp);
  w.add_group_channels(ChannelKind::edp, g.edp);
  for (const auto& pipe : g.pipelines) w.add_pipeline_channels(pipe);
  w.compiled = std::move(compiled);
  w.validate();
  return out;
}

}  // namespace moetwin
