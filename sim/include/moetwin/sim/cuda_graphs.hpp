// CUDA graphs in the replay (scenario training.cuda_graphs; NVIDIA's Megatron-Bridge perf recipes,
// shared/design/nvl72-and-infiniband.md section D). What a graph removes is host time: a captured region
// replays with one graph launch (SimProfile::graph_launch_s) instead of its kernels' eager launches
// (launch_s / backward_launch_s per launch, grouped_gemm_launch_s per C++-issued call). GPU kernel times do
// not change: the replay prices kernels by their device time, which a graph does not shorten.
//  - te-scoped: each layer's attention block (forward, backward, a recompute of it) and MoE router forward
//  and
//    backward are captured regions (TE make_graphed_callables, scope [attn, moe_router, ...]). The layer's
//    Python (layer_host_s, moe_host_s) still runs: TransformerLayer calls the graphed callables from Python
//    and the MLP, dispatcher and its host syncs stay eager. The scope's moe_preprocess part is left eager:
//    the dropless dispatchers' preprocess follows the host sync on the token counts, which a graph cannot
//    hold.
//  - te-router: TE graphs scoped [moe_router, moe_preprocess] (NVIDIA's MoE recipes on Blackwell, 19 of the
//    131 layouts of nvidia-moe-layouts.csv): only the router's forward and backward are captured regions; the
//    attention block is eager. moe_preprocess stays eager as under te-scoped.
//  - full-iteration: every op of the forward-backward pass (phases forward, backward, recompute) is captured,
//    the layer and MoE host times included; one graph launch per iteration and rank. The optimizer-phase ops
//    (DP gradient reduce-scatters, parameter all-gathers, the Adam step) keep their host time: Megatron's
//    full-iteration graph wraps forward_backward_func, not the optimizer step. No host or device sync can
//    be inside: the scenario rules require padded dispatch for MoE models and the P2P device sync is dropped.
#pragma once

#include <cstdint>

#include "moetwin/engine/program.hpp"

namespace moetwin {

// The open TE-scoped region of a stage builder: whether one is open and whether its graph launch was paid.
struct GraphState {
  bool capturing = false;
  bool charged = false;
  double launch_s = 0;
  // Host time of the next op of the open region, ns: the graph launch for its first op, 0 after.
  std::int32_t replay_ns();
};

// Opens a TE-scoped region on `state` for its lifetime when `on` (a nested region joins the open one).
class GraphRegion {
 public:
  GraphRegion(GraphState& state, bool on, double launch_s);
  ~GraphRegion();
  GraphRegion(const GraphRegion&) = delete;
  GraphRegion& operator=(const GraphRegion&) = delete;

 private:
  GraphState* owned_ = nullptr;
};

// Full-iteration capture of a stage's program: every non-optimizer op's host time goes, and the first such op
// pays one graph launch of `graph_launch_s`.
void capture_full_iteration(Program& program, double graph_launch_s);

}  // namespace moetwin
