// Expands a stage's pipeline schedule (schedule.hpp) into its Program: the ops of every forward and
// backward step come from a StageEmitter (the workload builder's layer ops, or a unit step in tests);
// this file adds the P2P sends/receives with their data dependencies:
//  - a receive's data feeds the first op of the step that consumes it (dep);
//  - a send waits for the last op of the step that produced its data (dep);
//  - the last op of a batched P2P call syncs the host (Megatron batch_p2p_sync: torch.cuda.synchronize()
//    after batch_isend_irecv) when PipelineOptions::p2p_device_sync is set.
// Sends and receives rendezvous with the peer stage's matching op on the pp_* channels; each direction
// has its own stream so that a send never queues behind a receive.
// Under P2pMode::overlapped (Megatron overlap_p2p_comm, batch_p2p_comm False; schedule.hpp) no call syncs
// the host; instead:
//  - every send and receive of a call starts after the compute-stream work issued before it (PyTorch's
//    ProcessGroupNCCL makes its NCCL stream wait on the current stream before a P2P: dep), so a receive
//    posted after a forward is ready only once that forward ran;
//  - Megatron's req.wait() is a compute-stream op of no duration ("pp-wait": cudaStreamWaitEvent, its
//    host cost inside the call's own issue time) that waits for the transfers: after a blocking call on
//    all of its transfers; before a posted call on the previous posted send of its direction; at the end
//    on the sends still outstanding. A posted receive is waited by the step that consumes it (its data
//    dep), not by the next step;
//  - with combine_steady_steps, a forward, its posted [sf rf] and the next backward form one pair; the
//    call's ops follow the pair and wait for its forward half only (the combined 1F1B schedule posts it
//    between the halves; its exact placement inside the pair is not modelled).
#pragma once

#include <string>
#include <vector>

#include "moetwin/engine/program.hpp"
#include "moetwin/sim/schedule.hpp"

namespace moetwin {

// Streams of a rank. Compute and, without overlap, TP/EP collectives run on stream 0.
enum Stream : std::uint8_t {
  kStreamCompute = 0,
  kStreamEpComm = 1,  // A2A when overlap_moe_expert_parallel_comm puts it on its own stream
  kStreamPpSendFwd = 2,
  kStreamPpRecvFwd = 3,
  kStreamPpSendBwd = 4,
  kStreamPpRecvBwd = 5,
  kStreamDpComm = 6,  // distributed-optimizer reduce-scatter / all-gather
  // CPU offload: activations to and from host memory (TE's d2h_stream and h2d_stream; one stream here, as
  // a microbatch's copies to the host all end before its first reload starts: cpu_offload.hpp).
  kStreamOffload = 7,
  kStreams = 8,
};
// Their names, by stream id (the trace's thread names): "compute", "ep-comm", "pp-send-fwd", ...
std::vector<std::string> pipeline_stream_names();

struct StepContext {
  int microbatch = 0;
  int chunk = 0;
  int input_dep = kNoOp;  // op the step's first op must wait for (its receive), or kNoOp
};

class StageEmitter {
 public:
  virtual ~StageEmitter() = default;
  // Ops before the first step (e.g. DP parameter all-gather).
  virtual void prologue(Program& program) { (void)program; }
  // Emit one step; return the program index of its last op (what a send depends on).
  virtual int forward(Program& program, const StepContext& step) = 0;
  virtual int backward(Program& program, const StepContext& step) = 0;
  // Forward of one microbatch and backward of another in one step (overlap_moe_expert_parallel_comm);
  // returns {last forward op, last backward op}. Default: forward then backward.
  virtual std::pair<int, int> forward_backward(Program& program, const StepContext& fwd,
                                               const StepContext& bwd) {
    const int f = forward(program, fwd);
    const int b = backward(program, bwd);
    return {f, b};
  }
  // Called after a backward step finished the last microbatch of `chunk` (gradient buckets are ready).
  virtual void chunk_grads_ready(Program& program, int chunk, int last_op) {
    (void)program, (void)chunk, (void)last_op;
  }
  // Ops after the last step (e.g. DP reduce-scatter, optimizer step).
  virtual void epilogue(Program& program) { (void)program; }
  // A P2P op carrying the activation (forward) or gradient (!forward) of (microbatch, chunk): duration,
  // host cost, SMs. The caller sets kind, stream, channel, deps and sync.
  virtual OpSpec p2p(bool forward, int microbatch, int chunk) = 0;
};

struct PipelineOptions {
  bool p2p_device_sync = true;        // Megatron batch_p2p_sync (default True); blocking mode only
  bool combine_steady_steps = false;  // pass adjacent forward+backward steps to forward_backward()
  // How the actions' P2P calls synchronise; must be the mode the actions were scheduled with.
  P2pMode p2p_mode = P2pMode::blocking;
};

void emit_pipeline(Program& program, const std::vector<PipeAction>& actions, int vpp, int microbatches,
                   StageEmitter& emitter, const PipelineOptions& options);

}  // namespace moetwin
