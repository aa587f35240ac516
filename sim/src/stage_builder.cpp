// The stage builder's schedule callbacks: a forward or backward step of one chunk and microbatch, the
// combined 1F1B step of overlap_moe_a2a (Megatron TransformerLayerSchedulePlan.run), P2P, epilogue.
#include "stage_builder.hpp"

#include <algorithm>

namespace moetwin::stage_emission {

StageBuilder::StageBuilder(const Ctx& c, int stage) : c_(c), stage_(stage) {
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

int StageBuilder::forward(Program& p, const StepContext& st) {
  Chain ch{st.input_dep};
  extra_dep_ = first_forward_dep(st.chunk);
  const PipelineChunk& chunk = *chunks_[static_cast<std::size_t>(st.chunk)];
  mb_ = st.microbatch;
  chunk_ = st.chunk;
  if (fsdp()) {
    fsdp_pass(p, ch, st.chunk, false);
  } else {
    if (chunk.embedding) embedding_fwd(p, ch, OpPhase::forward);
    for (int i = 0; i < chunk.decoder_layers; ++i) {
      layer_fwd(p, ch, chunk.first_layer + i, OpPhase::forward);
      offload_forward_commit(p, ch, chunk.first_layer + i);
    }
    if (chunk.loss) post_fwd(p, ch, chunk);
  }
  last_compute_ = ch.last;
  return ch.last;
}

int StageBuilder::backward(Program& p, const StepContext& st) {
  Chain ch{st.input_dep};
  const PipelineChunk& chunk = *chunks_[static_cast<std::size_t>(st.chunk)];
  mb_ = st.microbatch;
  chunk_ = st.chunk;
  if (fsdp()) {
    fsdp_pass(p, ch, st.chunk, true);
    last_compute_ = ch.last;
    return ch.last;
  }
  if (chunk.loss) post_bwd(p, ch, chunk);
  for (int i = chunk.decoder_layers - 1; i >= 0; --i) {
    offload_backward_commit(p, ch, chunk.first_layer + i);
    layer_bwd(p, ch, chunk.first_layer + i);
    layer_grads_ready(p, ch.last, chunk.first_layer + i);
  }
  if (chunk.embedding) embedding_bwd(p, ch);
  last_compute_ = ch.last;
  return ch.last;
}

void StageBuilder::epilogue(Program& p) {
  int last = kNoOp;
  if (fsdp()) {
    last = last_grad_op_;  // the last unit's reduce-scatter
  } else if (!c_.s.training.overlap_grad_reduce) {
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
  if (!c_.s.training.overlap_param_gather && !fsdp()) {
    for (int v = 0; v < c_.layout.vpp; ++v) {
      Chain g{opt};
      param_gather_ops(p, g, v);
    }
  }
}

OpSpec StageBuilder::p2p(bool forward, int microbatch, int chunk) {
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
        moe_mlp_bwd(p, b, bl, c_.s.training.delay_wgrad_compute);
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

}  // namespace moetwin::stage_emission
