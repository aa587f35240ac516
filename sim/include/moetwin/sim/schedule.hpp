// Pipeline schedules in Megatron-Core's order (megatron/core/pipeline_parallel/schedules.py, 0.17):
//  - vpp == 1: forward_backward_pipelining_without_interleaving (1F1B): warm-up
//    min(pp - stage - 1, m) forwards, then 1F1B pairs, then the cool-down backwards; pp == 1 degenerates
//    to forward_backward_no_pipelining's order (F0 B0 F1 B1 ...).
//  - vpp > 1: forward_backward_pipelining_with_interleaving without overlap_p2p_comm: warm-up
//    (pp - stage - 1) * 2 + (vpp - 1) * pp virtual microbatches capped at m * vpp (then all forwards run
//    first), the (microbatch, chunk) order of get_schedule_table with microbatch groups of pp
//    (microbatch_group_size_per_vp_stage = pp), backward chunks reversed.
//  - vpp > 1 with overlap_p2p_comm (P2pMode::overlapped): the same steps in the same order; the P2P calls
//    move to where Megatron posts them (see P2pMode).
// P2P calls become P2P actions holding the sends and receives of one _communicate call.
// Stages form a ring: the last stage sends chunk c's output to stage 0's chunk c + 1.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace moetwin {

enum class PipeActionKind { forward, backward, p2p };

// How the interleaved schedule's P2P calls synchronise (Megatron-Core ModelParallelConfig overlap_p2p_comm
// and batch_p2p_comm; megatron/core/pipeline_parallel/schedules.py
// forward_backward_pipelining_with_interleaving, UNVERIFIED against a file under /work/shared: no
// Megatron source is there).
//  blocking    overlap_p2p_comm False (Megatron-Core's default): every call is one batched _communicate
//              that returns when its transfers are done; in steady state one call after each forward +
//              backward pair ([sf rf sb rb]).
//  overlapped  overlap_p2p_comm True, batch_p2p_comm False, overlap_p2p_comm_warmup_flush False: the
//              warm-up and steady-state calls post isend/irecv and return at once (PipeAction::posted):
//              after each forward [sf rf] (send_forward_recv_forward), after each steady-state backward
//              [sb rb]; the last warm-up step also posts the first backward's receive [rb]. A posted
//              receive is waited (req.wait(): the compute stream waits) right before the step that
//              consumes it; a posted send right before the next call of its direction is posted
//              (send_next_wait_handle / send_prev_wait_handle) and at the end. The first recv_forward,
//              the all-warm-up recv_backward and the cool-down send_backward_recv_backward stay blocking
//              calls (wait_on_reqs). No call syncs the host (batch_p2p_sync acts on batched calls only).
// With vpp == 1 the mode is ignored: Megatron sets overlap_p2p_comm False without interleaving
// (megatron/training/arguments.py: "non-interleaved schedule does not support overlapping p2p
// communication", printed in /work/shared/data/real-logs/megatron_lm_2024-07_qwen2-0.5b_dp2_msswift.log).
enum class P2pMode { blocking, overlapped };
const char* to_string(P2pMode mode);

// One transfer of a P2P batch: which (microbatch, chunk) of the data it carries, in this stage's chunk
// numbering (for a receive: the consumer on this stage; for a send: the producer on this stage).
struct PipeTransfer {
  bool active = false;
  int microbatch = -1;
  int chunk = -1;
};

struct PipeAction {
  PipeActionKind kind = PipeActionKind::forward;
  int microbatch = -1;  // forward/backward
  int chunk = -1;       // virtual chunk on this stage, 0 .. vpp-1
  // p2p: sends/receives of one batched call, issued in this order: send_fwd, recv_fwd, send_bwd,
  // recv_bwd (NCCL groups them; the order only fixes trace order).
  PipeTransfer send_fwd, recv_fwd, send_bwd, recv_bwd;
  // p2p under P2pMode::overlapped: posted (isend/irecv, returns at once) rather than a blocking call.
  bool posted = false;

  bool empty_p2p() const {
    return !send_fwd.active && !recv_fwd.active && !send_bwd.active && !recv_bwd.active;
  }
};

// Megatron's get_schedule_table: forward virtual microbatch k -> (microbatch, chunk).
std::vector<std::pair<int, int>> interleaved_schedule_table(int microbatches, int vpp, int group_size);

// Warm-up forwards of `stage` (virtual microbatches when vpp > 1). `combined_1f1b`
// (overlap_moe_expert_parallel_comm): one more when vpp > 1, as Megatron-Core's schedules.py adds.
int warmup_microbatches(int pp, int vpp, int microbatches, int stage, bool combined_1f1b = false);

// The ordered actions of one stage for one iteration. Empty P2P batches are omitted. Throws
// std::invalid_argument for pp, vpp, microbatches < 1, stage out of range, vpp > 1 with pp == 1, or
// vpp > 1 with microbatches not a multiple of pp (Megatron's older assertion; ragged groups unmodelled).
// `mode` applies to vpp > 1 only; so does `combined_1f1b` (the EP overlap's extra warm-up forward).
std::vector<PipeAction> pipeline_schedule(int pp, int vpp, int microbatches, int stage,
                                          P2pMode mode = P2pMode::blocking, bool combined_1f1b = false);

// forward_backward_no_pipelining with overlap_moe_expert_parallel_comm (pp == 1, Megatron-Core's combined
// 1F1B without pipelining): F0, then F(i) beside B(i - 1) for i = 1 .. m - 1, then B(m - 1). The workload
// pairs each forward with the backward that follows it (PipelineOptions::combine_steady_steps), so one
// microbatch's A2As overlap the other's compute as in the interleaved steady state; Megatron-Core only
// requires a virtual pipeline for that overlap when pipeline_model_parallel_size > 1. Throws
// std::invalid_argument for microbatches < 1.
std::vector<PipeAction> no_pipelining_combined_schedule(int microbatches);

// "F0.0 P[sf rf] B0.0 ..." for tests and debugging; a posted call reads "A[...]".
std::string describe(const std::vector<PipeAction>& actions);

}  // namespace moetwin
