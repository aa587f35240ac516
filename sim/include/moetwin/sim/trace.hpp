// Chrome / Perfetto trace (JSON "traceEvents") of a replayed iteration: one process per rank, one thread
// per stream (compute, ep-comm, pp-send-fwd, ...), one complete event ("ph":"X") per op with its label,
// phase and microbatch (and its model chunk with vpp > 1). Timestamps are microseconds printed from
// integer ns (3 decimals), events in (rank, stream, start, op) order: the same prediction always writes
// the same bytes. Zero-length spans (ops that took no time) are left out.
//
// Size: an event is about 118 bytes; DeepSeek-V3 on 256 ranks (scenarios/default.toml) has 1.5 M of them,
// so a trace of every rank is 176 MB of JSON (14 MB gzipped). The default records one rank per pipeline
// stage (5.5 MB there), which shows the pipeline schedule, bubbles and exposed communication.
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/engine.hpp"
#include "moetwin/sim/program.hpp"

namespace moetwin {

// The ranks a trace records (ascending), from the --trace-ranks value:
//   "stages" (the default): one rank per pipeline stage, the critical rank's pipeline (its tp/cp/dp
//            position in every stage);
//   "stages+tp": those and the critical rank's TP peer group (every tp position of its stage and dp);
//   "all": every rank;
//   N (a count): N ranks, one per stage in turn: the critical rank's pipeline first, then position 0, 1,
//            ... of every stage (so 16 on pp 8 is two pipelines, not the TP peers of stage 0);
//   LIST: ranks and ranges separated by commas, e.g. "0,64,128-131".
// Throws InputError naming --trace-ranks for anything else or a rank outside [0, world).
std::vector<int> select_trace_ranks(const std::string& spec, const ParallelLayout& layout, int critical_rank);

// `ranks`: the ranks to record (empty: every rank). `rank_names` (optional, by rank) name the processes.
std::string chrome_trace_json(const Workload& workload, const EngineResult& result,
                              const std::vector<int>& ranks = {},
                              const std::vector<std::string>& rank_names = {});

}  // namespace moetwin
