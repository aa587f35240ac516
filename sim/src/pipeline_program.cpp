#include "moetwin/sim/pipeline_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace moetwin {

std::vector<std::string> pipeline_stream_names() {
  return {"compute",     "ep-comm",     "pp-send-fwd", "pp-recv-fwd",
          "pp-send-bwd", "pp-recv-bwd", "dp-comm",     "offload"};
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

// The zero-length compute-stream op of a req.wait() on `a` and `b` (either may be kNoOp).
int add_wait(Program& program, int a, int b) {
  OpSpec op;
  op.kind = OpKind::compute;
  op.stream = kStreamCompute;
  op.duration = 0;
  op.host_ns = 0;
  op.deps[0] = a;
  op.deps[1] = b;
  op.label = program.label("pp-wait");
  op.phase = OpPhase::other;
  return program.add(op);
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

  const bool overlapped = options.p2p_mode == P2pMode::overlapped;
  // Overlapped mode: the last op of the latest step or wait (what a call's NCCL streams wait on), and
  // the posted send per direction (0 forward, 1 backward) not waited yet.
  int current = kNoOp;
  int outstanding_send[2] = {kNoOp, kNoOp};
  // One call in overlapped mode; `producer` = the op the call's sends wait for (the step before it).
  auto overlapped_call = [&](const PipeAction& a, int producer) {
    const int dir = a.send_fwd.active || a.recv_fwd.active ? 0 : 1;
    int waited = kNoOp;
    if (a.posted && outstanding_send[dir] != kNoOp) {
      waited = add_wait(program, outstanding_send[dir], kNoOp);  // send_*_wait_handle.wait()
      outstanding_send[dir] = kNoOp;
    }
    auto add = [&](bool fwd, const PipeTransfer& t, std::uint8_t stream, ChannelKind ch, bool send) {
      OpSpec op = make_p2p(emitter, fwd, t, stream, ch, send ? producer : current);
      op.deps[1] = waited;
      return program.add(op);
    };
    int sent = kNoOp, received = kNoOp;
    if (a.send_fwd.active) {
      sent = add(true, a.send_fwd, kStreamPpSendFwd, ChannelKind::pp_fwd_out, true);
    }
    if (a.recv_fwd.active) {
      received = add(true, a.recv_fwd, kStreamPpRecvFwd, ChannelKind::pp_fwd_in, false);
      recv_fwd[at(a.recv_fwd.microbatch, a.recv_fwd.chunk)] = received;
    }
    if (a.send_bwd.active) {
      if (sent != kNoOp) throw std::logic_error("emit_pipeline: an overlapped call sends both ways");
      sent = add(false, a.send_bwd, kStreamPpSendBwd, ChannelKind::pp_bwd_out, true);
    }
    if (a.recv_bwd.active) {
      if (received != kNoOp) throw std::logic_error("emit_pipeline: an overlapped call receives both ways");
      received = add(false, a.recv_bwd, kStreamPpRecvBwd, ChannelKind::pp_bwd_in, false);
      recv_bwd[at(a.recv_bwd.microbatch, a.recv_bwd.chunk)] = received;
    }
    if (waited != kNoOp) current = waited;
    if (a.posted) {
      if (sent != kNoOp) outstanding_send[dir] = sent;
    } else {
      current = add_wait(program, sent, received);  // _communicate(wait_on_reqs=True)
    }
  };

  emitter.prologue(program);
  for (std::size_t i = 0; i < actions.size(); ++i) {
    const PipeAction& a = actions[i];
    switch (a.kind) {
      case PipeActionKind::forward: {
        // Overlapped: F, posted [sf rf], B pair up; the call follows the pair (PipelineOptions).
        const bool posted_between = overlapped && i + 2 < actions.size() &&
                                    actions[i + 1].kind == PipeActionKind::p2p && actions[i + 1].posted &&
                                    actions[i + 2].kind == PipeActionKind::backward;
        const std::size_t bi = posted_between ? i + 2 : i + 1;
        const bool pair = options.combine_steady_steps && bi < actions.size() &&
                          actions[bi].kind == PipeActionKind::backward && (bi == i + 1 || posted_between);
        const StepContext f{a.microbatch, a.chunk, recv_fwd[at(a.microbatch, a.chunk)]};
        if (pair) {
          const PipeAction& b = actions[bi];
          const StepContext bc{b.microbatch, b.chunk, recv_bwd[at(b.microbatch, b.chunk)]};
          const auto [lf, lb] = emitter.forward_backward(program, f, bc);
          last_fwd[at(a.microbatch, a.chunk)] = lf;
          after_backward(b.microbatch, b.chunk, lb);
          current = lf;  // the call waits for the forward half only
          if (posted_between) overlapped_call(actions[i + 1], lf);
          current = std::max(current, lb);
          i = bi;
        } else {
          current = last_fwd[at(a.microbatch, a.chunk)] = emitter.forward(program, f);
        }
        break;
      }
      case PipeActionKind::backward: {
        const StepContext b{a.microbatch, a.chunk, recv_bwd[at(a.microbatch, a.chunk)]};
        current = emitter.backward(program, b);
        after_backward(a.microbatch, a.chunk, current);
        break;
      }
      case PipeActionKind::p2p: {
        if (overlapped) {
          const PipeTransfer& s = a.send_fwd.active ? a.send_fwd : a.send_bwd;
          int producer = current;
          if (a.send_fwd.active) producer = last_fwd[at(s.microbatch, s.chunk)];
          if (a.send_bwd.active) producer = last_bwd[at(s.microbatch, s.chunk)];
          overlapped_call(a, producer);
          break;
        }
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
  // The sends still posted are waited before the schedule returns.
  if (outstanding_send[0] != kNoOp || outstanding_send[1] != kNoOp)
    add_wait(program, outstanding_send[0], outstanding_send[1]);
  emitter.epilogue(program);
}

}  // namespace moetwin
