// A scenario at another scale: the same model, instance, dispatcher, tp, cp, ep, etp, vpp and global batch
// on another node count, pipeline size and micro-batch, with dp derived as Megatron derives it. One rule
// for every place that moves a scenario to N nodes (recommend's grid, a plan's settling runs, sweep
// points) and for a scenario file without a dp key.
#pragma once

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// dp = nodes x GPUs per node / (tp x cp x pp) of `s`, or 0 when the GPUs are not a multiple of
// tp x cp x pp (the caller says why in its own terms: a scenario key, a command-line flag).
int derived_dp(const Scenario& s);

// `scenario` on `nodes` nodes with `pp` pipeline stages and micro-batch `micro_batch`, dp = derived_dp
// (0 when not derivable). Not validated (validate_scenario): at a new scale a layout may break a rule, e.g.
// EP wider than the ranks of a stage.
Scenario rescale(Scenario scenario, int nodes, int pp, int micro_batch);

}  // namespace moetwin
