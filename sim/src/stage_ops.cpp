// The stage builder's op primitives: kernels, linear layers (FP8 casts), collectives with their memoised
// per-rank times and flow-model loads, TP communication overlap, the MoE ops' var slots.
#include <algorithm>
#include <map>

#include "stage_builder.hpp"

namespace moetwin::stage_emission {

// net_load_of: see stage_builder.hpp.
std::optional<NetLoad> net_load_of(TimeNs total_ns, TimeNs latency_ns, double nvlink_s, double network_s,
                                   bool tx, bool rx, int network_flows, int nvlink_flows) {
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

int StageBuilder::first_forward_dep(int chunk) {
  auto idx = static_cast<std::size_t>(chunk);
  if (first_fwd_done_[idx]) return kNoOp;
  first_fwd_done_[idx] = true;
  return ag_op_[idx];
}

int StageBuilder::kernel_op(Program& p, Chain& ch, const char* name, OpPhase phase, double seconds,
                            std::int32_t host) {
  OpSpec op;
  op.duration = to_ns(seconds);
  op.host_ns = host;
  op.label = label_id(p, name);
  op.phase = phase;
  return add(p, ch, op);
}

double StageBuilder::linear_seconds(const LayerOp& rec, OpPhase phase, double flops, double bytes,
                                    const GemmDims& dims) const {
  if (!is_fp8(c_.s.training.precision))
    return kernel_seconds(c_.cp, compute_class(rec.cls), flops, bytes, dims);
  const bool bwd_op = phase == OpPhase::backward;
  const double cast_elements = bwd_op ? dims.m * dims.n : dims.m * dims.k;
  if (is_nvfp4(c_.s.training.precision)) {
    // As the FP8 bytes below: every element of `bytes` (counted at 2 B) at the NVFP4 operand size, one m x n
    // output added back at bf16; then the GEMM input's quantization (both copies; compute_model.hpp).
    const double fp4_bytes =
        bytes / 2 * kNvfp4OperandBytesPerElement + (2 - kNvfp4OperandBytesPerElement) * dims.m * dims.n;
    return fp4_kernel_seconds(c_.cp, compute_class(rec.cls), flops, fp4_bytes) +
           quantize_input_seconds(cast_elements);
  }
  // Operands in FP8 (1 B), the output in bf16 (2 B): half the bf16 operand-and-output bytes plus one byte
  // per output element back (the measured FP8 curves' memory term counts bytes this way).
  const double fp8_bytes = 0.5 * bytes + dims.m * dims.n;
  return fp8_kernel_seconds(c_.cp, quant_recipe(c_.s.training.precision), compute_class(rec.cls), flops,
                            fp8_bytes, dims) +
         quantize_input_seconds(cast_elements);
}

int StageBuilder::linear_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double seconds,
                            bool backward) {
  if (!is_fp8(c_.s.training.precision))
    return kernel_op(p, ch, rec.name, phase, seconds, host_ns(rec.launches, backward));
  return kernel_op(p, ch, rec.name, phase, seconds,
                   static_cast<std::int32_t>(host_ns(rec.launches, backward) + cpp_call_ns()));
}

int StageBuilder::collective_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, int entry,
                                ChannelKind kind, CommClass cls, std::uint8_t stream, bool backward) {
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

int StageBuilder::exposed_entry(int base, TpOverlapMethod method, double gemm_s) {
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

void StageBuilder::overlapped_linear(Program& p, Chain& ch, const TpSide* before, const LayerOp& rec,
                                     OpPhase phase, double flops, double bytes, bool backward,
                                     const GemmDims& dims, const TpSide* after) {
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
    tp_overlapped(p, ch, *before->rec, phase, before->cop, before->bytes, backward, before->method, before_s);
  linear_op(p, ch, rec, phase, g * rest + before_s + after_s, backward);
  if (after != nullptr)
    tp_overlapped(p, ch, *after->rec, phase, after->cop, after->bytes, backward, after->method, after_s);
}

std::optional<NetLoad> StageBuilder::entry_load(int entry, ChannelKind kind) const {
  const CommEntry& e = comm_entries_[static_cast<std::size_t>(entry)];
  if (!e.usage.known) return std::nullopt;
  return net_load_of(e.first, to_ns(e.usage.latency_s), e.usage.nvlink_s, e.usage.network_s, sends(kind),
                     receives(kind), e.usage.network_flows, e.usage.nvlink_flows);
}

std::optional<NetLoad> StageBuilder::p2p_load(ChannelKind kind) {
  const bool forward = kind == ChannelKind::pp_fwd_out || kind == ChannelKind::pp_fwd_in;
  const int entry = comm_entry(CollectiveOp::send_recv, p2p_bytes(),
                               forward ? ChannelKind::pp_fwd_out : ChannelKind::pp_bwd_out);
  return entry_load(entry, kind);
}

void StageBuilder::set_comm_duration(OpSpec& op, int entry) {
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

int StageBuilder::new_var(const VarReq& r) {
  const auto key = std::make_tuple(static_cast<int>(r.kind), r.fold, r.moe, r.mb, r.comm);
  const auto [it, fresh] = var_index_.try_emplace(key, static_cast<int>(vars_.size()));
  if (fresh) vars_.push_back(r);
  return it->second;
}

int StageBuilder::var_op(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, VarKind kind, bool fold,
                         int layer, bool backward) {
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

int StageBuilder::comm_entry(CollectiveOp cop, double bytes, ChannelKind kind) {
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
      case ChannelKind::host:
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

double StageBuilder::cp_ring_xfer_s() {
  if (cp_xfer_s_ >= 0) return cp_xfer_s_;
  const TrainingConfig& t = c_.s.training;
  const double bytes = cp_kv_bytes(c_.s.model, t.micro_batch, t.seq_length, c_.s.parallel.cp, c_.t);
  const int S = c_.groups.stage_size;
  double worst = 0;
  for (int local = 0; local < S; ++local) {
    const int rank = stage_ * S + local;
    const int next = c_.cp_next_of[static_cast<std::size_t>(rank)];
    worst = std::max(worst, c_.comm.seconds(CollectiveOp::send_recv, bytes, {rank, next}));
  }
  cp_xfer_s_ = worst;
  return worst;
}

}  // namespace moetwin::stage_emission
