#include "moetwin/sim/pipeline_program.hpp"

#include <stdexcept>
#include <vector>

namespace moetwin {

std::vector<std::string> pipeline_stream_names() {
  return {"compute", "ep-comm", "pp-send-fwd", "pp-recv-fwd", "pp-send-bwd", "pp-recv-bwd", "dp-comm"};
}

namespace {

OpSpec make_p2p(StageEmitter& e, bool forward, const PipeTransfer& t, std::uint8_t stream,
                ChannelKind channel, int dep) {
  OpSpec op = e.p2p(forward, t.microbatch, t.chunk);
  op.kind = OpKind::comm;
  op.comm_class = CommClass::pp;
  op.stream = stream;
  op.channel = channel;
  op.deps[0] = dep;
  op.deps[1] = kNoOp;
  op.microbatch = t.microbatch;
  op.chunk = static_cast<std::int16_t>(t.chunk);
  op.sync = HostSync::none;
  return op;
}

}  // namespace

void emit_pipeline(Program& program, const std::vector<PipeAction>& actions, int vpp, int microbatches,
                   StageEmitter& emitter, const PipelineOptions& options) {
  const auto slots = static_cast<std::size_t>(vpp) * static_cast<std::size_t>(microbatches);
  auto at = [&](int mb, int chunk) {
    if (mb < 0 || chunk < 0 || mb >= microbatches || chunk >= vpp)
      throw std::logic_error("emit_pipeline: bad step");
    return static_cast<std::size_t>(chunk) * static_cast<std::size_t>(microbatches) +
           static_cast<std::size_t>(mb);
  };
  std::vector<int> recv_fwd(slots, kNoOp), recv_bwd(slots, kNoOp), last_fwd(slots, kNoOp),
      last_bwd(slots, kNoOp);
  std::vector<int> backwards_done(static_cast<std::size_t>(vpp), 0);

  auto after_backward = [&](int mb, int chunk, int last) {
    last_bwd[at(mb, chunk)] = last;
    if (++backwards_done[static_cast<std::size_t>(chunk)] == microbatches) {
      emitter.chunk_grads_ready(program, chunk, last);
    }
  };

  emitter.prologue(program);
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const PipeAction& a = actions[i];
    switch (a.kind) {
      case PipeActionKind::forward: {
        const bool pair = options.combine_steady_steps && i + 1 < actions.size() &&
                          actions[i + 1].kind == PipeActionKind::backward;
        const StepContext f{a.microbatch, a.chunk, recv_fwd[at(a.microbatch, a.chunk)]};
        if (pair) {
          const PipeAction& b = actions[i + 1];
          const StepContext bc{b.microbatch, b.chunk, recv_bwd[at(b.microbatch, b.chunk)]};
          const auto [lf, lb] = emitter.forward_backward(program, f, bc);
          last_fwd[at(a.microbatch, a.chunk)] = lf;
          after_backward(b.microbatch, b.chunk, lb);
          ++i;
        } else {
          last_fwd[at(a.microbatch, a.chunk)] = emitter.forward(program, f);
        }
        break;
      }
      case PipeActionKind::backward: {
        const StepContext b{a.microbatch, a.chunk, recv_bwd[at(a.microbatch, a.chunk)]};
        after_backward(a.microbatch, a.chunk, emitter.backward(program, b));
        break;
      }
      case PipeActionKind::p2p: {
        int last = kNoOp;
        if (a.send_fwd.active) {
          const int dep = last_fwd[at(a.send_fwd.microbatch, a.send_fwd.chunk)];
          last = program.add(
              make_p2p(emitter, true, a.send_fwd, kStreamPpSendFwd, ChannelKind::pp_fwd_out, dep));
        }
        if (a.recv_fwd.active) {
          last = program.add(
              make_p2p(emitter, true, a.recv_fwd, kStreamPpRecvFwd, ChannelKind::pp_fwd_in, kNoOp));
          recv_fwd[at(a.recv_fwd.microbatch, a.recv_fwd.chunk)] = last;
        }
        if (a.send_bwd.active) {
          const int dep = last_bwd[at(a.send_bwd.microbatch, a.send_bwd.chunk)];
          last = program.add(
              make_p2p(emitter, false, a.send_bwd, kStreamPpSendBwd, ChannelKind::pp_bwd_out, dep));
        }
        if (a.recv_bwd.active) {
          last = program.add(
              make_p2p(emitter, false, a.recv_bwd, kStreamPpRecvBwd, ChannelKind::pp_bwd_in, kNoOp));
          recv_bwd[at(a.recv_bwd.microbatch, a.recv_bwd.chunk)] = last;
        }
        if (options.p2p_device_sync && last != kNoOp) program.op(last).sync = HostSync::device;
        break;
      }
    }
  }
  emitter.epilogue(program);
}

}  // namespace moetwin
