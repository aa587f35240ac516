// Chrome / Perfetto trace (JSON "traceEvents") of a replayed iteration: one process per rank, one thread
// per stream (named by the workload's stream_names: compute, ep-comm, pp-send-fwd, ...), one complete event
// ("ph":"X") per op with its label, phase and microbatch (and its model chunk with vpp > 1). Timestamps are
// microseconds printed from integer ns (3 decimals), events in (rank, stream, start, op) order: the same
// prediction always writes the same bytes. Zero-length spans (ops that took no time) are left out.
//
// Size: an event is about 118 bytes; DeepSeek-V3 on 256 ranks (scenarios/default.toml) has 1.5 M of them,
// so a trace of every rank is 176 MB of JSON (14 MB gzipped). The default records one rank per pipeline
// stage (5.5 MB there), which shows the pipeline schedule, bubbles and exposed communication.
#pragma once

#include <string>
#include <vector>

#include "moetwin/engine/engine.hpp"
#include "moetwin/engine/program.hpp"

namespace moetwin {

// `ranks`: the ranks to record (empty: every rank). `rank_names` (optional, by rank) name the processes.
std::string chrome_trace_json(const Workload& workload, const EngineResult& result,
                              const std::vector<int>& ranks = {},
                              const std::vector<std::string>& rank_names = {});

}  // namespace moetwin
