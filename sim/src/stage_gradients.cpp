// The stage builder's data-parallel parts: parameters per chunk and rank, the gradient reduce-scatter
// (Megatron DDP buckets) and the parameter all-gather of the distributed optimizer.
#include <algorithm>
#include <utility>

#include "moetwin/accounting/model_accounting.hpp"
#include "stage_builder.hpp"

namespace moetwin::stage_emission {

// Megatron-Core DDP's default gradient bucket: max(40M, 1M x data-parallel size) parameters
// (megatron/core/distributed/distributed_data_parallel.py: bucket_size = max(40000000, 1000000 *
// dp_group.size()) when ddp_config.bucket_size is unset and overlap_grad_reduce is on).
constexpr double kDdpBucketParams = 40e6;
constexpr double kDdpBucketParamsPerDpRank = 1e6;

StageBuilder::RankShares StageBuilder::rank_shares() const {
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

ChunkParams StageBuilder::decoder_layer_params(int index) const {
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

std::vector<ChunkParams> StageBuilder::chunk_params() const {
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
        cp.dense +=
            attn + static_cast<double>(lp.mlp_norm + lp.router) + static_cast<double>(lp.shared_experts) / t;
        cp.expert += experts_local * static_cast<double>(lp.routed_expert) / etp;
      } else {
        cp.dense += attn + static_cast<double>(lp.mlp_norm) + static_cast<double>(lp.dense_mlp) / t;
      }
    }
    out.push_back(cp);
  }
  return out;
}

int StageBuilder::param_gather_ops(Program& p, Chain& ch, int chunk) {
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

int StageBuilder::grad_reduce(Program& p, int chunk, int after) {
  const ChunkParams& all = params_[static_cast<std::size_t>(chunk)];
  GradBuckets& b = buckets_[static_cast<std::size_t>(chunk)];
  ChunkParams rest;
  rest.dense = std::max(0.0, all.dense - b.reduced.dense);
  rest.expert = std::max(0.0, all.expert - b.reduced.expert);
  b.reduced = all;
  b.pending = {};
  return grad_reduce_params(p, chunk, after, rest);
}

void StageBuilder::layer_grads_ready(Program& p, int after, int layer) {
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

int StageBuilder::grad_reduce_params(Program& p, int chunk, int after, const ChunkParams& cp) {
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

}  // namespace moetwin::stage_emission
