#include "moetwin/sim/cuda_graphs.hpp"

#include "moetwin/common/time.hpp"

namespace moetwin {

std::int32_t GraphState::replay_ns() {
  if (charged) return 0;
  charged = true;
  return static_cast<std::int32_t>(to_ns(launch_s));
}

GraphRegion::GraphRegion(GraphState& state, bool on, double launch_s) {
  if (!on || state.capturing) return;
  state.capturing = true;
  state.charged = false;
  state.launch_s = launch_s;
  owned_ = &state;
}

GraphRegion::~GraphRegion() {
  if (owned_ != nullptr) owned_->capturing = false;
}

void capture_full_iteration(Program& program, double graph_launch_s) {
  bool charged = false;
  for (int i = 0; i < program.size(); ++i) {
    OpSpec& op = program.op(i);
    if (op.phase == OpPhase::optimizer) continue;
    op.host_ns = charged ? 0 : static_cast<std::int32_t>(to_ns(graph_launch_s));
    charged = true;
  }
}

}  // namespace moetwin
