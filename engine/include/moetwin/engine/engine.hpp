// The discrete-event engine: replays one iteration of a sealed Workload over per-rank resources and
// says when every op ran and where each rank's time went.
//
// Resources of a rank (all deterministic, integer ns):
//  - Host thread: issues the rank's ops in program order; op i is issued at the cumulative host cost of
//    ops 0..i (OpSpec::host_ns, launches x per-launch cost) after the last host release. An op with
//    HostSync::op makes the host wait for that op to finish, HostSync::device for every op issued so far
//    (torch.cuda.synchronize()). PyTorch eager launch-bound behaviour emerges from this resource.
//  - Streams: FIFO in issue order. An op starts when it is issued, its stream is free and its deps have
//    finished. Stream 0 is the compute stream.
//  - SM share: a compute op's work is duration x sms SM-ns; while communication kernels occupying k SMs
//    run on the rank it progresses at (sms - k) SMs per ns (processor sharing, at least 1 SM). Remaining
//    work is integer SM-ns; finish = now + ceil(work / rate): exact, deterministic rounding.
//  - Channels: a comm op is a rendezvous of all members of its channel (collective or P2P pair): it
//    starts when every member's op is ready and runs for the largest member duration (the slowest
//    member gates a collective).
//
// Per rank the time line is classified at every instant, first that applies: compute (a compute op runs),
// exposed comm of a class (a comm op runs, no compute), host_wait (compute stream idle because its next
// op is not issued yet), bubble (idle, waiting for data or peers), idle (after the rank's last op). The
// classes sum to the iteration time exactly.
//
// By default ranks that provably share a time line (same program, durations and channel-partner classes;
// symmetry.hpp) are replayed once and their stats copied: exact, and with balanced routing (the live
// runs) a stage of hundreds of ranks replays as one. EngineResult::events then counts the events of the
// reduced replay. Traces and EngineOptions::full_replay replay every rank.
//
// Speed: ops are compiled per stream into 32-byte records (the head of a stream walks contiguous
// memory), per-rank durations are kept slot-major per program (ranks of a stage read neighbouring
// values), and the next event's rank state is prefetched: on thousands of ranks the engine is bound by
// cache misses, not by arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "moetwin/engine/program.hpp"

namespace moetwin {

struct EngineOptions {
  bool trace = false;  // record every op's span (TraceSpan) for the timeline; implies full_replay
  // Replay every rank. By default ranks that provably share a time line (symmetry.hpp) are replayed once
  // and their stats copied: the same iteration time and per-rank stats, fewer events.
  bool full_replay = false;
};

struct RankStats {
  TimeNs compute = 0;
  TimeNs exposed[kCommClasses] = {};  // by CommClass
  TimeNs host_wait = 0;
  TimeNs bubble = 0;
  TimeNs idle = 0;
  TimeNs comm_total[kCommClasses] = {};  // time comm ops of the class ran, overlapped or not
  TimeNs finish = 0;                     // end of the rank's last op
  std::int64_t ops_run = 0;

  TimeNs exposed_total() const;
  TimeNs accounted() const;  // sum of all classes; == iteration time
};

struct TraceSpan {
  std::int32_t rank = 0;
  std::int32_t op = 0;  // program index
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint8_t stream = 0;
};

struct EngineResult {
  TimeNs iteration = 0;  // latest finish over all ranks (all start at 0)
  std::vector<RankStats> ranks;
  std::uint64_t events = 0;      // events popped (incl. stale rate-change events) by the replay that ran
  int replayed_ranks = 0;        // ranks replayed: all, or one per symmetry class
  std::vector<TraceSpan> trace;  // in finish order (deterministic)
};

// Runs the workload (must pass Workload::validate()). Throws std::logic_error on deadlock, naming the
// stuck rank, stream and op.
EngineResult run_engine(const Workload& workload, const EngineOptions& options = {});

}  // namespace moetwin
