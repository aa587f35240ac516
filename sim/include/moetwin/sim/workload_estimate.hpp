// The size of a prediction's workload, estimated from the scenario before build_workload allocates it, and
// the limit above which a prediction is refused with the estimate and what to change.
//
// What grows (workload.cpp): each pipeline stage's op program (microbatches x layers on the stage x the
// ops a layer pass emits), the per-rank duration rows (one per class of equal ranks, at most one per
// rank), the MoE cost table of the stage being built (MoE layers x microbatches x ranks of the stage, one
// pointer each) and the engine's events (every rank runs its stage's ops). A scenario inside every
// documented range (100,000 nodes, dp 12,500, micro_batch 1, global_batch 1e9: 80,000 microbatches)
// needs terabytes: refused with exit 2 instead of ending in std::bad_alloc after minutes.
#pragma once

#include <cstdint>
#include <string>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

struct WorkloadEstimate {
  std::int64_t microbatches = 0;  // global_batch / (micro_batch x dp)
  std::int64_t ranks = 0;         // GPUs
  std::int64_t stage_ranks = 0;   // ranks per pipeline stage
  double ops = 0;                 // ops of all stage programs
  double durations = 0;           // duration entries: classes of equal ranks x their var slots, at most
  double moe_cells = 0;           // MoE cost-table entries of the largest stage (layer x microbatch x rank)
  double events = 0;              // engine events, at most (each rank's program once; symmetry does less)
  double bytes = 0;               // peak memory of the workload, bytes (an upper estimate)
};

// Measured per-op and per-entry sizes (see workload_estimate.cpp for the sources). Throws nothing: a
// scenario that make_pipeline_layout would refuse is estimated with layers spread evenly.
WorkloadEstimate estimate_workload(const Scenario& scenario);

// The memory limit a prediction may use, bytes: $MOETWIN_MAX_WORKLOAD_GIB GiB when set (a positive
// number), else kDefaultWorkloadLimitGiB. Throws InputError for a malformed value.
inline constexpr double kDefaultWorkloadLimitGiB = 16;
double workload_limit_bytes();

// Throws InputError at the scenario's source (key "workload") when estimate.bytes exceeds `limit_bytes`:
// the estimate (ops, durations, MoE cells, events, GiB), the limit and what to change (fewer microbatches:
// a smaller global_batch or a larger micro_batch x dp; fewer nodes; or raise $MOETWIN_MAX_WORKLOAD_GIB).
void check_workload_size(const Scenario& scenario, const WorkloadEstimate& estimate, double limit_bytes);

// "ops 1.2e+06, durations 3.4e+05, MoE cells 8.9e+04, events 5.6e+08, 0.12 GiB": for inspect and errors.
std::string describe(const WorkloadEstimate& estimate);

}  // namespace moetwin
