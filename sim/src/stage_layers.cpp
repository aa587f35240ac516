// The stage builder's layer parts: attention (MHA/GQA and MLA), dense MLP, MoE router, dispatch, experts,
// combine and shared expert, embedding, output layer and loss, MTP; forward and backward.
#include <algorithm>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/sim/context_parallel.hpp"
#include "stage_builder.hpp"

namespace moetwin::stage_emission {

void StageBuilder::attn_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass) {
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

void StageBuilder::core_attn(Program& p, Chain& ch, int layer, OpPhase phase, bool backward_pass) {
  // Causal: half of 2 x seq^2 x (qk + v) per sequence and head group on this rank.
  const double seq = c_.s.training.seq_length / static_cast<double>(c_.s.parallel.cp);
  const double mb = c_.s.training.micro_batch;
  const double bytes = 2 * c_.T * (2 * q_width() + 2 * v_width()) / c_.t;
  if (c_.s.parallel.cp > 1) {
    ring_attention(p, ch, ops::kAttnCore, phase, mb * 2 * ring_pairs() * (q_width() + v_width()) / c_.t,
                   bytes, backward_pass, false, {seq, key_extent(layer, seq), q_width() / heads()});
    return;
  }
  const double flops = mb * seq * (2 * keys_per_query(layer, seq)) * (q_width() + v_width()) / c_.t;
  attention(p, ch, ops::kAttnCore, phase, flops, bytes, backward_pass, false,
            {seq, key_extent(layer, seq), q_width() / heads()});
}

int StageBuilder::ring_attention(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops,
                                 double bytes, bool backward_pass, bool backward_kernel,
                                 const GemmDims& dims) {
  // One tile per ring step (context_parallel.hpp): the step's share of the FLOPs and bytes, priced as one
  // attention kernel of that size; the transfers overlap the tiles in closed form.
  const int cp = c_.s.parallel.cp;
  const double tile = attention_seconds(rec, flops / cp, bytes / cp, backward_kernel, dims);
  const double xfer = cp_ring_xfer_s();
  const double total =
      backward_kernel ? ring_attention_backward_s(tile, xfer, cp) : ring_attention_forward_s(tile, xfer, cp);
  return kernel_op(p, ch, rec.name, phase, total, host_ns(rec.launches * cp, backward_pass));
}

double StageBuilder::attention_seconds(const LayerOp& rec, double flops, double bytes, bool backward_kernel,
                                       const GemmDims& dims) const {
  const double width = (q_width() + v_width()) / heads();
  const ModelSpec& m = c_.s.model;
  const bool grouped_kv = m.attention == AttentionKind::gqa && m.query_groups < m.heads;
  if (const std::optional<double> s =
          attention_kernel_seconds(c_.cp, backward_kernel, flops, width, grouped_kv))
    return *s;
  return kernel_seconds(c_.cp, compute_class(rec.cls), flops, bytes, dims);
}

int StageBuilder::attention(Program& p, Chain& ch, const LayerOp& rec, OpPhase phase, double flops,
                            double bytes, bool backward_pass, bool backward_kernel, const GemmDims& dims) {
  const double width = (q_width() + v_width()) / heads();
  const ModelSpec& m = c_.s.model;
  const bool grouped_kv = m.attention == AttentionKind::gqa && m.query_groups < m.heads;
  if (const std::optional<double> s =
          attention_kernel_seconds(c_.cp, backward_kernel, flops, width, grouped_kv))
    return kernel_op(p, ch, rec.name, phase, *s, host_ns(rec.launches, backward_pass));
  return compute(p, ch, rec, phase, flops, bytes, backward_pass, dims);
}

void StageBuilder::router_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
  const double E = c_.s.model.experts;
  int op = kNoOp;
  {
    const GraphRegion graph = te_graph_region(true);
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

int StageBuilder::counts_gather(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
  if (c_.s.dispatcher.transport != DispatcherTransport::nccl || c_.s.parallel.ep <= 1 ||
      !c_.prof.counts_allgather)
    return kNoOp;
  const double bytes = 8.0 * c_.s.model.experts * c_.s.parallel.ep * c_.s.parallel.etp;
  // The engine keeps one stream per channel: with A2A overlap the EP channel is the EP comm stream (in
  // Megatron the gather runs on the compute stream; it is a few KiB, so the stream hardly matters).
  return collective(p, ch, ops::kEpCountsAllgather, phase, CollectiveOp::all_gather, bytes, ChannelKind::ep,
                    CommClass::ep, c_.combined ? kStreamEpComm : kStreamCompute, backward_pass);
}

void StageBuilder::dense_mlp_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
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

void StageBuilder::shared_expert_fwd(Program& p, Chain& ch, OpPhase phase, bool backward_pass) {
  const double fs = c_.s.model.shared_ffn_hidden;
  if (fs <= 0) return;
  tp_collective(p, ch, ops::kTpAgSharedExpert, phase, CollectiveOp::all_gather, c_.T * h() * 2,
                backward_pass);
  linear(p, ch, ops::kMoeSharedExpert, phase, 6 * c_.T * h() * fs / c_.t,
         2 * (3 * h() * fs / c_.t + c_.T * (2 * h() + 3 * fs / c_.t)), backward_pass, {c_.T, fs / c_.t, h()});
  tp_collective(p, ch, ops::kTpRsSharedExpert, phase, CollectiveOp::reduce_scatter, c_.T * h() * 2,
                backward_pass);
}

void StageBuilder::layer_fwd(Program& p, Chain& ch, int layer, OpPhase phase) {
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

void StageBuilder::moe_attn_tail_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
  router_fwd(p, ch, phase, bwd);
  add_layer_host(ch, c_.prof.moe_host_s, false);
  if (!c_.s.dispatcher.fused_permute && !c_.combined) {
    var_op(p, ch, ops::kMoePermute, phase, VarKind::permute, false, layer, bwd);
  }
}

void StageBuilder::moe_combine_fwd(Program& p, Chain& ch, int layer, OpPhase phase, bool bwd) {
  if (c_.s.parallel.ep > 1 || c_.combined) {
    var_op(p, ch, ops::kEpCombine, phase, VarKind::combine, c_.combined, layer, bwd);
  }
  if (!c_.s.dispatcher.fused_permute && !c_.combined) {
    var_op(p, ch, ops::kMoeUnpermute, phase, VarKind::unpermute, false, layer, bwd);
  }
}

void StageBuilder::attn_bwd(Program& p, Chain& ch, int layer) {
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
    const double bytes = 4 * T * (2 * q_width() + 2 * v_width()) / t;
    if (c_.s.parallel.cp > 1) {
      ring_attention(p, ch, ops::kAttnCoreBwd, ph,
                     c_.prof.attention_backward_factor * mb * 2 * ring_pairs() * (q_width() + v_width()) / t,
                     bytes, true, true, {seq, key_extent(layer, seq), q_width() / heads()});
    } else {
      const double flops = c_.prof.attention_backward_factor * mb * seq * (2 * keys_per_query(layer, seq)) *
                           (q_width() + v_width()) / t;
      attention(p, ch, ops::kAttnCoreBwd, ph, flops, bytes, true, true,
                {seq, key_extent(layer, seq), q_width() / heads()});
    }
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

void StageBuilder::dense_mlp_bwd(Program& p, Chain& ch) {
  add_layer_host(ch, c_.prof.layer_host_s, true);
  const double f = c_.s.model.ffn_hidden;
  // TE fc2_dgrad (ring exchange) with fc2's dgrad, 2 T h f of the op's 12 T h f; fc1_wgrad (bulk): fc1's
  // input-gradient reduce-scatter beside fc1's wgrad, 4 T h f.
  const TpSide ag{&ops::kTpAgMlpBwd, CollectiveOp::all_gather, c_.T * h() * 2, TpOverlapMethod::ring_exchange,
                  1.0 / 6.0};
  const TpSide rs{&ops::kTpRsMlpBwd, CollectiveOp::reduce_scatter, c_.T * h() * 2, TpOverlapMethod::bulk,
                  1.0 / 3.0};
  overlapped_linear(p, ch, &ag, ops::kMlpDenseBwd, OpPhase::backward, 12 * c_.T * h() * f / c_.t,
                    4 * (3 * h() * f / c_.t + c_.T * (2 * h() + 3 * f / c_.t)), true, {c_.T, f / c_.t, h()},
                    &rs);
}

void StageBuilder::moe_combine_bwd(Program& p, Chain& ch, int layer) {
  add_layer_host(ch, c_.prof.layer_host_s + c_.prof.moe_host_s, true);
  if (!c_.s.dispatcher.fused_permute && !c_.combined) {
    var_op(p, ch, ops::kMoeUnpermuteBwd, OpPhase::backward, VarKind::unpermute, false, layer, true);
  }
  // The gradient of combine is dispatch-shaped.
  if (c_.s.parallel.ep > 1 || c_.combined) {
    var_op(p, ch, ops::kEpCombineBwd, OpPhase::backward, VarKind::dispatch, c_.combined, layer, true);
  }
}

void StageBuilder::moe_mlp_bwd(Program& p, Chain& ch, int layer, bool delay_wgrad) {
  const double fs = c_.s.model.shared_ffn_hidden;
  if (fs > 0) {
    tp_collective(p, ch, ops::kTpAgSharedExpertBwd, OpPhase::backward, CollectiveOp::all_gather,
                  c_.T * h() * 2, true);
    linear(p, ch, ops::kMoeSharedExpertBwd, OpPhase::backward, 12 * c_.T * h() * fs / c_.t,
           4 * (3 * h() * fs / c_.t + c_.T * (2 * h() + 3 * fs / c_.t)), true, {c_.T, fs / c_.t, h()});
    tp_collective(p, ch, ops::kTpRsSharedExpertBwd, OpPhase::backward, CollectiveOp::reduce_scatter,
                  c_.T * h() * 2, true);
  }
  if (!delay_wgrad) {
    ch.pending_host_ns += expert_gemm_host_ns(ops::kMoeExpertsBwd);
    var_op(p, ch, ops::kMoeExpertsBwd, OpPhase::backward, VarKind::expert_bwd, false, layer, true);
    return;
  }
  // delay_wgrad_compute: the dgrad continues the chain (what the dispatch-backward all-to-all waits for);
  // the wgrad follows it on the compute stream, off the chain.
  ch.pending_host_ns += expert_gemm_host_ns(ops::kMoeExpertsDgrad);
  var_op(p, ch, ops::kMoeExpertsDgrad, OpPhase::backward, VarKind::expert_dgrad, false, layer, true);
  Chain wgrad{ch.last};
  wgrad.pending_host_ns = expert_gemm_host_ns(ops::kMoeExpertsWgrad);
  var_op(p, wgrad, ops::kMoeExpertsWgrad, OpPhase::backward, VarKind::expert_wgrad, false, layer, true);
}

void StageBuilder::moe_attn_head_bwd(Program& p, Chain& ch, int layer) {
  if (!c_.s.dispatcher.fused_permute && !c_.combined) {
    var_op(p, ch, ops::kMoePermuteBwd, OpPhase::backward, VarKind::permute, false, layer, true);
  }
  const double E = c_.s.model.experts;
  const GraphRegion graph = te_graph_region(true);
  compute(p, ch, ops::kMoeRouterBwd, OpPhase::backward, 4 * (c_.T / c_.t) * h() * E,
          4 * (h() * E + (c_.T / c_.t) * (h() + 4 * E)), true, {c_.T / c_.t, E, h()});
}

void StageBuilder::layer_bwd(Program& p, Chain& ch, int layer) {
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

void StageBuilder::loss_fwd(Program& p, Chain& ch) {
  const double T = c_.T, V = vocab();
  tp_collective(p, ch, ops::kTpAgOutput, OpPhase::forward, CollectiveOp::all_gather, T * h() * 2, false);
  compute(p, ch, ops::kOutputLayer, OpPhase::forward, 2 * T * h() * V / c_.t,
          2 * (h() * V / c_.t + T * (h() + V / c_.t)), false, {T, V / c_.t, h()});
  // Vocab-parallel cross-entropy: fp32 logits read/written ~3 times; max, sum and target all-reduces.
  compute(p, ch, ops::kLossCrossEntropy, OpPhase::forward, 0, 3 * T * V / c_.t * 4, false);
  tp_collective(p, ch, ops::kTpArCrossEntropy, OpPhase::forward, CollectiveOp::all_reduce, 3 * T * 4, false);
}

void StageBuilder::loss_bwd(Program& p, Chain& ch) {
  const double T = c_.T, V = vocab();
  compute(p, ch, ops::kLossCrossEntropyBwd, OpPhase::backward, 0, 2 * T * V / c_.t * 4, true);
  compute(p, ch, ops::kOutputLayerBwd, OpPhase::backward, 4 * T * h() * V / c_.t,
          4 * (h() * V / c_.t + T * (h() + V / c_.t)), true, {T, V / c_.t, h()});
  tp_collective(p, ch, ops::kTpRsOutputBwd, OpPhase::backward, CollectiveOp::reduce_scatter, T * h() * 2,
                true);
}

void StageBuilder::mtp_pre_fwd(Program& p, Chain& ch, OpPhase phase) {
  // MTP block: embedding of the shifted tokens, enorm/hnorm, eh_proj (2h -> h, TP-split).
  embedding_fwd(p, ch, phase);
  tp_collective(p, ch, ops::kTpAgMtpEh, phase, CollectiveOp::all_gather, c_.T * 2 * h() * 2, false);
  linear(p, ch, ops::kMtpEhProj, phase, 2 * c_.T * 2 * h() * h() / c_.t,
         2 * (2 * h() * h() / c_.t + c_.T * 3 * h()), false, {c_.T, h() / c_.t, 2 * h()});
}

void StageBuilder::mtp_pre_bwd(Program& p, Chain& ch) {
  linear(p, ch, ops::kMtpEhProjBwd, OpPhase::backward, 4 * c_.T * 2 * h() * h() / c_.t,
         4 * (2 * h() * h() / c_.t + c_.T * 3 * h()), true, {c_.T, h() / c_.t, 2 * h()});
  tp_collective(p, ch, ops::kTpRsMtpEhBwd, OpPhase::backward, CollectiveOp::reduce_scatter,
                c_.T * 2 * h() * 2, true);
  embedding_bwd(p, ch);
}

void StageBuilder::post_fwd(Program& p, Chain& ch, const PipelineChunk& chunk) {
  loss_fwd(p, ch);
  for (int i = 0; i < chunk.mtp_layers; ++i) {
    mtp_pre_fwd(p, ch, OpPhase::forward);
    layer_fwd(p, ch, c_.s.model.layers + i, OpPhase::forward);
    loss_fwd(p, ch);
  }
}

void StageBuilder::post_bwd(Program& p, Chain& ch, const PipelineChunk& chunk) {
  for (int i = chunk.mtp_layers - 1; i >= 0; --i) {
    loss_bwd(p, ch);
    layer_bwd(p, ch, c_.s.model.layers + i);
    mtp_pre_bwd(p, ch);
  }
  loss_bwd(p, ch);
}

}  // namespace moetwin::stage_emission
