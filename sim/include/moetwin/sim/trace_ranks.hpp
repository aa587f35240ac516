// Which ranks a trace records, from the user's --trace-ranks value and the layout (the engine's trace
// writer takes the list; it knows nothing of pipeline stages or TP groups).
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"

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

}  // namespace moetwin
