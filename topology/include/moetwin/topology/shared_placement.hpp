// A Placement shared between the predictions that ask for the same one. A plan predicts each layout with
// every dispatcher and replays its bands again (up to eight predictions of one layout in a row), and each
// prediction needed the placement twice (the workload's rank groups, the routing plan's node grouping):
// building its groups was 2.5% of a plan's CPU (docs/2026-12-04-plan-speed.md, session 44).
#pragma once

#include <memory>

#include "moetwin/topology/placement.hpp"

namespace moetwin {

// The placement Placement(layout, gpus_per_node, domain_gpus) builds, built once per distinct arguments
// among the last kSharedPlacements asked (the placement is a pure function of them; it is immutable).
// Thread-safe. Throws what the constructor throws (nothing is kept then).
std::shared_ptr<const Placement> shared_placement(const ParallelLayout& layout, int gpus_per_node,
                                                  int domain_gpus = 0);

// How many distinct placements are kept (least recently asked dropped first): a plan's two threads each
// work on one layout at a time, with two domain sizes (the node, the dispatcher's NVLink reach).
inline constexpr int kSharedPlacements = 8;

}  // namespace moetwin
