// The stage builder's Megatron-FSDP passes (fsdp.hpp): per-unit parameter all-gathers with one unit
// prefetched and two buffers, per-unit gradient reduce-scatters after each backward, on the data-parallel
// stream.
#include <algorithm>

#include "moetwin/accounting/model_accounting.hpp"
#include "stage_builder.hpp"

namespace moetwin::stage_emission {

std::vector<FsdpUnit> StageBuilder::fsdp_units(int chunk) const {
  const PipelineChunk& pc = *chunks_[static_cast<std::size_t>(chunk)];
  std::vector<FsdpUnit> out;
  double rest = params_[static_cast<std::size_t>(chunk)].dense;
  if (pc.embedding) {
    const double table = static_cast<double>(padded_vocab(c_.s.model, c_.t)) * h() / c_.t;
    out.push_back({FsdpUnit::Kind::embedding, -1, table});
    rest -= table;
  }
  for (int i = 0; i < pc.decoder_layers; ++i) {
    const double lp = decoder_layer_params(pc.first_layer + i).dense;
    out.push_back({FsdpUnit::Kind::layer, pc.first_layer + i, lp});
    rest -= lp;
  }
  // The output layer, the final norm and any MTP layers: what the chunk holds beyond the above.
  if (pc.loss || pc.mtp_layers > 0) out.push_back({FsdpUnit::Kind::output, -1, std::max(0.0, rest)});
  return out;
}

int StageBuilder::fsdp_gather(Program& p, Chain& dp, const FsdpUnit& unit, bool backward, int after) {
  extra_dep_ = after;
  return collective(p, dp, ops::kFsdpParamAllGather, backward ? OpPhase::backward : OpPhase::forward,
                    CollectiveOp::all_gather, unit.params * c_.prof.param_bytes, ChannelKind::dp,
                    CommClass::dp, kStreamDpComm, backward);
}

void StageBuilder::fsdp_pass(Program& p, Chain& ch, int chunk, bool backward) {
  const PipelineChunk& pc = *chunks_[static_cast<std::size_t>(chunk)];
  std::vector<FsdpUnit> units = fsdp_units(chunk);
  if (backward) std::reverse(units.begin(), units.end());  // pass order
  const int n = static_cast<int>(units.size());
  std::vector<int> ag(static_cast<std::size_t>(n), kNoOp), end(static_cast<std::size_t>(n), kNoOp);
  Chain dp{kNoOp};
  const auto gather = [&](int u) {
    const int wait = fsdp_buffer_wait(u);
    ag[static_cast<std::size_t>(u)] = fsdp_gather(p, dp, units[static_cast<std::size_t>(u)], backward,
                                                  wait >= 0 ? end[static_cast<std::size_t>(wait)] : kNoOp);
  };
  if (n > 0) gather(0);
  for (int u = 0; u < n; ++u) {
    if (u + 1 < n) gather(u + 1);
    extra_dep_ = ag[static_cast<std::size_t>(u)];
    const FsdpUnit& unit = units[static_cast<std::size_t>(u)];
    switch (unit.kind) {
      case FsdpUnit::Kind::embedding:
        if (backward) {
          embedding_bwd(p, ch);
        } else {
          embedding_fwd(p, ch, OpPhase::forward);
        }
        break;
      case FsdpUnit::Kind::layer:
        if (backward) {
          offload_backward_commit(p, ch, unit.layer);
          layer_bwd(p, ch, unit.layer);
        } else {
          layer_fwd(p, ch, unit.layer, OpPhase::forward);
          offload_forward_commit(p, ch, unit.layer);
        }
        break;
      case FsdpUnit::Kind::output:
        if (backward) {
          post_bwd(p, ch, pc);
        } else {
          post_fwd(p, ch, pc);
        }
        break;
    }
    end[static_cast<std::size_t>(u)] = ch.last;
    if (!backward) continue;
    // The unit's gradients, reduce-scattered once its backward is done (every microbatch).
    extra_dep_ = ch.last;
    last_grad_op_ =
        collective(p, dp, ops::kFsdpGradReduceScatter, OpPhase::backward, CollectiveOp::reduce_scatter,
                   unit.params * c_.prof.grad_bytes, ChannelKind::dp, CommClass::dp, kStreamDpComm, true);
  }
}

}  // namespace moetwin::stage_emission
