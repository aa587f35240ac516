// CPU offload of activations (cpu_offload.hpp): the window map, the copy time, and the stage builder's
// commits that put each offloaded layer's copies on the offload stream and the compute stream's waits.
#include <algorithm>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/sim/cpu_offload.hpp"
#include "stage_builder.hpp"

namespace moetwin {

double offload_copy_seconds(double bytes, double link_bytes_per_s) {
  return bytes > 0 && link_bytes_per_s > 0 ? bytes / link_bytes_per_s : 0.0;
}

namespace stage_emission {

double StageBuilder::offload_bytes(int layer) const {
  const TrainingConfig& t = c_.s.training;
  return layer_activation_bytes(c_.s.model, layer_is_moe(c_.s.model, layer), c_.s.parallel, t.micro_batch,
                                t.seq_length, t.recompute)
      .total();
}

int StageBuilder::offload_copy(Program& p, int after, int layer, bool reload) {
  const LayerOp& rec = reload ? ops::kCpuOffloadH2d : ops::kCpuOffloadD2h;
  OpSpec op;
  op.kind = OpKind::comm;
  op.comm_class = CommClass::pp;  // offload needs pp = 1: the class carries nothing else (cpu_offload.hpp)
  op.channel = ChannelKind::host;
  op.stream = kStreamOffload;
  op.duration = to_ns(offload_copy_seconds(offload_bytes(layer), c_.s.instance.host_link_bandwidth));
  op.host_ns = host_ns(rec.launches, reload);
  op.label = label_id(p, rec.name);
  op.phase = rec.phase;
  op.deps[0] = after;
  op.microbatch = mb_;
  op.chunk = static_cast<std::int16_t>(chunk_);
  return p.add(op);
}

void StageBuilder::offload_wait(Program& p, Chain& ch, int on, OpPhase phase) {
  if (on == kNoOp) return;
  const int keep = extra_dep_;  // a dependency already set for the next op of the chain stays its own
  extra_dep_ = on;
  kernel_op(p, ch, ops::kCpuOffloadWait.name, phase, 0.0,
            host_ns(ops::kCpuOffloadWait.launches, phase == OpPhase::backward));
  extra_dep_ = keep;
}

void StageBuilder::offload_forward_commit(Program& p, Chain& ch, int layer) {
  const int n = c_.s.training.cpu_offload_layers;
  if (n <= 0) return;
  if (offload_window_.empty()) offload_window_ = offload_window_map(c_.s.model.layers, n);
  if (layer == 0) {  // group 0's copy starts once layer 0's forward is done
    offload_next_ = 0;
    offload_last_ = offload_copy(p, ch.last, 0, false);
  }
  if (offload_next_ >= n || offload_window_[static_cast<std::size_t>(offload_next_)] != layer) return;
  offload_wait(p, ch, offload_last_, OpPhase::forward);  // group offload_next_'s copy done, buffers freed
  if (offload_next_ + 1 < n) offload_last_ = offload_copy(p, ch.last, offload_next_ + 1, false);
  ++offload_next_;
}

void StageBuilder::offload_backward_commit(Program& p, Chain& ch, int layer) {
  const int n = c_.s.training.cpu_offload_layers;
  if (n <= 0) return;
  if (offload_window_.empty()) offload_window_ = offload_window_map(c_.s.model.layers, n);
  if (layer == c_.s.model.layers - 1) {  // the backward pass starts: every group is on the host
    offload_next_ = n;
    offload_reload_ = kNoOp;
  }
  if (offload_next_ > 0 && offload_window_[static_cast<std::size_t>(offload_next_ - 1)] == layer) {
    offload_wait(p, ch, offload_reload_, OpPhase::backward);
    offload_reload_ = offload_copy(p, ch.last, offload_next_ - 1, true);
    --offload_next_;
  }
  if (layer == 0) offload_wait(p, ch, offload_reload_, OpPhase::backward);  // every reload done
}

}  // namespace stage_emission
}  // namespace moetwin
