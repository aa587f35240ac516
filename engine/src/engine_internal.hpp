// Internal to the engine library: the compiled form of a Program that the op-by-op engine (replay_engine.hpp)
// and the lane replay (lane_replay.cpp) both walk, and what a replay is given. Not installed.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "moetwin/engine/engine.hpp"
#include "moetwin/engine/program.hpp"

namespace moetwin::engine_detail {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kPast = std::numeric_limits<TimeNs>::min();

enum EventType : std::uint32_t {
  kComputeFinish = 0,
  kChannelFinish = 1,
  kWake = 2,
  kTransferStart = 3,   // a transfer's latency has elapsed: it starts to use its links
  kTransferFinish = 4,  // a transfer's bytes are through (if its version is current)
  kChannelStart = 5,    // every member is in by now (early arrivals: if its version is current)
};
enum StreamState : std::uint8_t { kIdle = 0, kRunning = 1, kRendezvous = 2 };
// Categories of a rank's time line; 0..3 are the comm classes.
enum Category : std::uint8_t { kCatCompute = 4, kCatHostWait = 5, kCatBubble = 6, kCatIdle = 7 };

// Adds `dt` to the time-line category `cat` of `s` (a comm class index below kCatCompute is exposed comm).
inline void add_category_time(RankStats& s, int cat, TimeNs dt) {
  switch (cat) {
    case kCatCompute:
      s.compute += dt;
      break;
    case kCatHostWait:
      s.host_wait += dt;
      break;
    case kCatBubble:
      s.bubble += dt;
      break;
    case kCatIdle:
      s.idle += dt;
      break;
    default:
      s.exposed[cat] += dt;
      break;
  }
}

// Streams of a program the engine tracks in one 64-bit mask per rank.
constexpr int kMaxStreams = 64;
// A dependency packs (stream, position in stream + 1) into 32 bits; 0 = none.
constexpr int kDepPosBits = 24;
constexpr std::uint32_t kDepPosMask = (1u << kDepPosBits) - 1;

// EngineOp::flags.
constexpr std::uint8_t kOpComm = 1;  // a communication op
// Something besides its own stream's next op waits for this op to finish: an op of another stream depends
// on it, the host syncs on it, or it is its stream's last op before a device sync. A run of compute ops
// replayed as one event (compute chains, below) ends at such an op, and only after such an op ends are
// the rank's other streams and its host retried (advance_stream).
constexpr std::uint8_t kOpWatched = 2;

// One op compiled for the engine: everything starting and finishing it needs, in 32 bytes, stored in
// stream order so that a stream's head advances through contiguous memory. (The engine is bound by
// cache misses: the Program's separate index arrays cost a miss each per event on large workloads.)
struct EngineOp {
  TimeNs issue_prefix = 0;        // Program::issue_prefix of the op
  TimeNs dur = 0;                 // >= 0: duration; < 0: the rank's var slot -dur - 1
  std::int32_t index = 0;         // program index
  std::uint32_t dep[2] = {0, 0};  // (stream << kDepPosBits) | (position in stream + 1), 0 = none
  std::uint16_t sms = 0;
  std::uint8_t flags = 0;    // kOpComm | kOpWatched
  std::uint8_t channel = 0;  // ChannelKind; comm class in the high nibble
};
static_assert(sizeof(EngineOp) == 32, "EngineOp is meant to be half a cache line");

// A host sync point of a program (an op with HostSync != none), in program order; a sentinel with
// index = program size ends the list.
struct SyncPoint {
  std::int32_t index = 0;
  std::int32_t stream = 0;  // the op's stream and position (HostSync::op waits for it)
  std::int32_t pos = 0;
  bool device = false;  // HostSync::device: wait for every op issued so far
  TimeNs issue_prefix = 0;
  std::int64_t drain = 0;  // device: offset into EngineProgram::drain (per stream, ops with index <= k)
};

struct EngineProgram {
  const Program* prog = nullptr;
  std::int32_t size = 0;
  std::uint64_t stream_mask = 0;           // streams that hold ops
  std::vector<std::int32_t> stream_begin;  // stream -> first record in ops
  std::vector<std::int32_t> stream_count;  // stream -> ops
  std::vector<EngineOp> ops;               // by stream, in issue order
  std::vector<SyncPoint> syncs;            // + sentinel
  std::vector<std::int32_t> drain;         // device syncs: per stream, ops of the stream issued up to it
};

// The program compiled for the engine (stream-ordered records, sync points, kOpWatched flags).
EngineProgram compile(const Program& p);

// Program `p` of `w` compiled: a copy of w.compiled[p] when the workload carries it (pointing at `w`'s
// program), else compile(w.programs[p]).
EngineProgram compiled_for(const Workload& w, std::size_t p);

// The ranks one run replays: all of the workload's, or one representative per symmetry class with the
// reduced channels (symmetry.hpp).
struct Replay {
  std::vector<std::int32_t> ranks;                          // replayed rank -> workload rank
  const std::int32_t* channels = nullptr;                   // replayed rank * kChannelKinds + kind -> channel
  const std::vector<std::int32_t>* channel_size = nullptr;  // channel -> members
};

// Lockstep lanes (lane_replay.cpp): the replayed ranks of each program as lanes of one replay. The
// result, exactly the op-by-op replay's, or nullopt when the lanes' event orders diverge (then
// `*divergence` says where) or the workload is outside what lanes handle (wide durations).
// Where lanes disagree the group splits and the replay starts again, up to `max_splits` times.
std::optional<EngineResult> run_lanes(const Workload& w, const Replay& rp, int max_splits,
                                      std::string* divergence);

}  // namespace moetwin::engine_detail

namespace moetwin {

// compiled_program.hpp: the compiled form, its `prog` null (the engine points the copy at its program).
class CompiledProgram {
 public:
  engine_detail::EngineProgram program;
};

}  // namespace moetwin
