// Chrome / Perfetto trace (JSON "traceEvents") of a replayed iteration: one process per rank, one thread
// per stream (compute, ep-comm, pp-send-fwd, ...), one complete event ("ph":"X") per op with its label,
// phase, microbatch and chunk. Timestamps are microseconds printed from integer ns (3 decimals), events in
// (rank, stream, start, op) order: the same prediction always writes the same bytes.
#pragma once

#include <string>

#include "moetwin/sim/engine.hpp"
#include "moetwin/sim/program.hpp"

namespace moetwin {

// `max_ranks` < 0: every rank; else only ranks [0, max_ranks) (traces of 4096 ranks are gigabytes).
// `rank_names` (optional, by rank) name the processes.
std::string chrome_trace_json(const Workload& workload, const EngineResult& result, int max_ranks = -1,
                              const std::vector<std::string>& rank_names = {});

}  // namespace moetwin
