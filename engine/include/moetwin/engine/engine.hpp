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
//  - Links (EngineOptions::network = flow): a comm op with a NetLoad is a transfer after its latency. Its
//    members' links (NVLink port and EFA rails of each GPU, each direction: Workload::net_link) are shared
//    with every other transfer on them, max-min fair on the transfers' progress rates, a transfer never
//    faster than alone (SimGrid's parallel-task model, ptask_L07: one rate per transfer, which consumes
//    use[role] of each of its links per unit of rate; Casanova et al., "Versatile, scalable and accurate
//    simulation of distributed applications and platforms", JPDC 74(10), 2014). Rates are re-solved when a
//    transfer starts or ends, for the transfers that share links with it, directly or through others; a
//    transfer whose rate changed gets a new finish event (the SM-sharing path's version counter; SimGrid's
//    Model::next_occurring_event / update_actions_state). Alone, a transfer runs at rate 1 and the op
//    takes exactly its closed-form duration; `closed_form` (the default) never shares.
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
// cache misses, not by arithmetic. Events that would change nothing but the next op of one stream are
// skipped (EngineOptions::shortcuts, replay_engine.hpp): a run of compute ops that start back to back is one
// event (compute chains); after an op that nothing else waits for ends only its stream is retried; and a
// chain followed by a collective on the compute stream joins that collective's channel when it starts,
// with the time it will end (early arrivals), so a collective of n ranks costs one event instead of n.
// Ops nothing else waits for are found when the programs are compiled (kOpWatched: ops another stream
// depends on, host syncs, each stream's last op before a device sync). The shortcuts give every op the
// start and end of the plain replay; tests compare the two on random and on every live-run workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moetwin/engine/program.hpp"

namespace moetwin {

// How comm ops use the network: each for its closed-form duration regardless of other traffic, or as
// transfers that share their links (see the header comment).
enum class NetworkMode : std::uint8_t { closed_form, flow };
const char* to_string(NetworkMode mode);  // "closed-form", "flow"
// The mode named `text` ("closed-form" or "flow"); nullopt otherwise.
std::optional<NetworkMode> network_mode_from_string(const std::string& text);

// When the engine replays the ranks of a program as lanes (EngineOptions::lanes). Lanes keep in step while
// the ranks' durations order their events alike: near-balanced routing (token remainders spread over the
// experts: Kimi-K2's 384 experts, every rank a token apart) replays a stage as one group, 2x faster than
// rank by rank; under skewed routing (zipf, group-limited) the lanes split and restart, slower than the
// per-rank engine (docs/2026-12-04-skew-lanes.md).
enum class LaneMode : std::uint8_t {
  off,
  // Where every var slot's durations over the ranks of its program are close (engine.cpp, kLaneSpread).
  near_balanced,
  always,  // wherever a program has two or more ranks to replay (tests, benchmarks)
};

struct EngineOptions {
  bool trace = false;  // record every op's span (TraceSpan) for the timeline; implies full_replay
  // Replay every rank. By default ranks that provably share a time line (symmetry.hpp) are replayed once
  // and their stats copied: the same iteration time and per-rank stats, fewer events.
  bool full_replay = false;
  NetworkMode network = NetworkMode::closed_form;
  // Event shortcuts (replay_engine.hpp): a run of compute ops that start back to back, none watched by
  // anything but its successor, is one event (compute chains), and after an unwatched op ends only its own
  // stream is retried. The same times, stats and events less stale ones (EngineResult::stale_events) as
  // without; off with `trace`. false: the plain op-by-op replay (tests compare the two).
  bool shortcuts = true;
  // Lockstep lanes (lane_replay.cpp): the replayed ranks of one program (the ranks of a pipeline stage
  // whose routing differs, which differ only in their per-rank durations) replayed as lanes of one
  // program: one handler per event for all of them, with a time per lane. Used when the replay holds a
  // program with two or more ranks to replay, under the closed form, with shortcuts and without trace or
  // full_replay. Exact: where the lanes' decisions or event orders disagree, the group splits along the
  // disagreement and the replay starts again (EngineResult::lane_splits, lane_divergence); where a split
  // cannot help the per-rank engine runs. The same iteration time, per-rank stats and `events` as the
  // op-by-op replay (`stale_events` may differ: the order of events at one instant). LaneMode says when.
  LaneMode lanes = LaneMode::near_balanced;
  // Periodic steady state (periodic_jump.cpp; replay_engine.hpp, "Periodic steady state"): when the whole
  // replay's state at the start of a microbatch's forward equals its state some microbatches earlier, moved
  // by whole ops and a time shift, and the ops ahead repeat with the same shift, the replay jumps over the
  // periods that would repeat, adding their time and stats. The same iteration time, per-rank stats and
  // events (counted for the periods jumped) as the op-by-op replay. Part of the shortcuts (off without them,
  // with `trace`, and under the flow model); EngineResult::periods_skipped says how many periods were jumped.
  bool periodic = true;
};

struct RankStats {
  TimeNs compute = 0;
  TimeNs exposed[kCommClasses] = {};  // by CommClass
  TimeNs host_wait = 0;
  TimeNs bubble = 0;
  TimeNs idle = 0;
  TimeNs comm_total[kCommClasses] = {};  // time comm ops of the class ran, overlapped or not
  // Flow model: how much longer comm ops of the class ran than they would have alone (link sharing), ns.
  TimeNs shared_delay[kCommClasses] = {};
  TimeNs finish = 0;  // end of the rank's last op
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
  TimeNs alone =
      -1;  // comm: its duration alone (end - start - alone = time lost to link sharing); -1 compute
};

struct EngineResult {
  TimeNs iteration = 0;  // latest finish over all ranks (all start at 0)
  std::vector<RankStats> ranks;
  // Events of the replay that ran, op by op: popped ones (incl. stale ones, below) plus one per
  // compute op that ended inside a chain (EngineOptions::shortcuts).
  std::uint64_t events = 0;
  // Of `events`, the superseded ones: compute and transfer finish events a rate change superseded, and
  // wakes after which the rank had asked for an earlier one (a rank keeps one pending wake; a stream that
  // waits for its host asks again each time it is tried). How many go stale depends on the order of
  // simultaneous events (a rate change and an op's end on the same ns; transfers that start together,
  // re-solved one by one) and on how often streams are retried, which the shortcuts
  // (EngineOptions::shortcuts) change: events - stale_events does not depend on them (the tests compare
  // it), and the shipped scenarios' counts came out the same (closed form and flow, 2026-12-02).
  std::uint64_t stale_events = 0;
  int replayed_ranks = 0;              // ranks replayed: all, or one per symmetry class
  std::uint64_t rate_solves = 0;       // flow model: link-sharing solves (one per transfer start or end)
  std::uint64_t shared_transfers = 0;  // flow model: transfers that ran slower than alone
  std::vector<TraceSpan> trace;        // in finish order (deterministic)
  int lane_groups = 0;  // groups of ranks replayed as lanes (EngineOptions::lanes); 0: rank by rank
  int lane_splits = 0;  // groups split where their lanes disagreed (each a restart of the lane replay)
  std::string lane_divergence;        // lanes tried and given up: where; empty otherwise
  std::uint64_t periods_skipped = 0;  // EngineOptions::periodic: periods jumped over (0: none)
};

// Runs the workload (must pass Workload::validate()). Throws std::logic_error on deadlock, naming the
// stuck rank, stream and op.
EngineResult run_engine(const Workload& workload, const EngineOptions& options = {});

}  // namespace moetwin
