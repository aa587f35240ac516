// Megatron-FSDP in the replay (scenario training.megatron_fsdp; Megatron-Core --use-megatron-fsdp with
// data_parallel_sharding_strategy optim_grads_params, Megatron-Bridge's `megatron_fsdp`, the NVIDIA Llama 3
// 70B recipes on GB200/GB300 and the 8B recipe on H100). Sources: shared/design/nvidia-mechanisms.md
// section 4 (MLM docs/user-guide/features/megatron_fsdp.md, distributed/fsdp/src/megatron_fsdp/
// megatron_fsdp.py, distributed/fsdp/src/docs/runtime_schedule.md).
//
// Units. One FSDP unit per TransformerLayer; the embedding and the output layer (with the final norm) are
// units of their own. A rank holds 1 / (dp x cp) of every unit's parameters, gradients and optimizer
// states.
//
// Per microbatch, forward: unit u's parameters are all-gathered (bf16, SimProfile::param_bytes per
// parameter, over the dp x cp group) before its first kernel; the all-gather of unit u + 1 is issued
// before unit u's kernels (one unit prefetched) and may start only once unit u - 1's kernels are done:
// two persistent buffers alternate between even and odd units (Megatron-FSDP's double buffer, needed for
// NCCL user-buffer registration). Backward mirrors it in reverse order (parameters gathered again, the
// forward's copy was resharded), and after each unit's backward its gradients are reduce-scattered
// (SimProfile::grad_bytes per element) every microbatch. All-gathers and reduce-scatters share the
// data-parallel stream in issue order (Megatron-FSDP's shared-communicator case of runtime_schedule.md:
// AG(i - 1) is issued before RS(i)); their SMs are the stream's NCCL SMs (SimProfile::nccl_sms), taken
// from the compute while they run, as for the distributed optimizer's collectives.
// The optimizer steps over the local shard; there is no separate gradient reduce-scatter or parameter
// all-gather per iteration.
//
// Exposed time: the first unit's all-gather of each forward and backward pass (nothing to prefetch it
// under), and whatever a unit's all-gather (plus the reduce-scatter queued before it) outlasts the
// previous unit's kernels.
//
// Memory (accounting/memory_model.cpp): weights, gradients and optimizer states / (dp x cp), plus the
// two gathered unit buffers (parameters, and their gradients before the reduce-scatter) of the largest
// unit.
//
// Not modelled (refused by the scenario rules): expert parameters (Megatron-FSDP shards them over edp with
// units of their own), pipeline parallelism, FP8 parameter gathers (fp8_param_gather: the gather moves
// bf16 here), suggested_communication_unit_size grouping several layers into one bucket (1e9 elements
// floor: a Llama 3 70B layer holds 0.86e9, so one layer per bucket there).
#pragma once

#include <vector>

namespace moetwin {

// One FSDP unit of a chunk: the parameters one rank gathers (its TP share of the unit, all of dp x cp).
struct FsdpUnit {
  enum class Kind { embedding, layer, output } kind = Kind::layer;
  int layer = -1;     // decoder layer index (Kind::layer)
  double params = 0;  // parameters (elements) of the unit on this TP rank
};

// The buffer an all-gather of unit `u` (in pass order) reuses: the double buffer frees unit u - 2's, so
// the gather must wait for the kernels of the unit two before it. -1: no unit to wait for (u < 2).
inline int fsdp_buffer_wait(int u) {
  return u >= 2 ? u - 2 : -1;
}

}  // namespace moetwin
