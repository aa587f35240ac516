// Lockstep lanes: the replayed ranks of one program (a pipeline stage whose ranks differ only in their
// var-slot durations, as under skewed routing) replayed as lanes of one program. Every event is handled
// once for the whole group, with per-lane times; the discrete state (stream heads, host segment, running
// op, stolen SMs, rendezvous) is the group's.
//
// Exact against the op-by-op replay (EngineOptions::shortcuts = false; docs/2026-12-04-skew-lanes.md):
//  - Decisions. Every branch the op-by-op replay takes on a time (an op issued yet, a wake needed) is taken
//    per lane; when the lanes disagree the replay stops (LanesDiverge). What only feeds the statistics (a
//    lane's host wait against bubble) is per lane.
//  - Order. A lane must see its events in time order, as the op-by-op replay hands them to its rank. The
//    group's events are ordered by their earliest lane; each lane keeps the time of the last event that
//    touched it (clock_), and an event earlier than that on any lane stops the replay. Events at one
//    instant may come in another order: the op-by-op replay gives the same times for either order (a rate
//    change at the instant an op ends leaves it no work), only `stale_events` may differ.
//  - Channels. The channels the lanes of a group hold for one kind form one lane channel with the channels
//    of the other groups they share members with (union-find): it completes when every group is in, and
//    each lane's op starts at the latest arrival and lasts the longest duration of its own channel's
//    members, as the op-by-op rendezvous does. A start later than the arrival on some lane of the group
//    that arrived last is an event of its own (the other streams of that group are tried first, as the
//    op-by-op replay tries them while the lane waits).
//  - Splits. A stopped replay starts again from time 0 with the group split along the disagreement
//    (run_lanes); where no split helps, or after the splits allowed, the per-rank engine runs.
// Closed form only (the flow model shares links between transfers of all ranks). The op-by-op semantics:
// none of the engine's event shortcuts (compute chains, early arrivals).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_internal.hpp"

namespace moetwin::engine_detail {

namespace {

// The lanes of a group disagree; this replay stops (run_lanes catches it). `split`: per lane of `group`,
// 1 for the lanes on one side of the disagreement (empty: no split helps).
struct LanesDiverge {
  std::string where;
  std::int32_t group = -1;
  std::vector<std::uint8_t> split;
  std::vector<std::int32_t> replayed;  // lane -> replayed rank
};

struct LaneStream {
  std::int32_t pos = 0;
  std::int32_t head_index = 0;
  std::uint8_t state = kIdle;
  std::uint8_t cls = 0;
};

// The replayed ranks of one program. Per-lane values live in the replay's lane arrays at lane0 + lane.
struct Group {
  const EngineProgram* prog = nullptr;
  std::int32_t program = 0;            // workload program index (for messages)
  std::int32_t index = 0;              // in LaneReplay::groups_
  std::vector<std::int32_t> replayed;  // lane -> replayed rank
  std::int32_t lanes = 0;
  std::int64_t lane0 = 0;
  std::vector<std::int32_t> var;              // durations, slot-major: slot s of lane l at [s * lanes + l]
  std::vector<LaneStream> streams;            // by stream
  std::vector<TimeNs> start;                  // stream s, lane l at [s * lanes + l]: arrival, then start
  std::int32_t channels[kChannelKinds] = {};  // lane channel per kind, -1 none
  std::vector<std::int32_t> lane_channel[kChannelKinds];  // lane -> its channel within the lane channel
  std::uint64_t live = 0;
  std::int32_t seg_start = 0;
  std::int32_t seg_end = 0;
  std::int32_t sync = 0;
  std::int32_t compute_op = -1;
  std::int32_t rate = 0;
  std::uint32_t version = 0;
  std::int32_t stolen = 0;
  std::uint8_t clock_by = 6;  // the handler that last entered the group (LaneReplay::kHandlerNames)
};

struct LaneMember {
  std::int32_t group = 0;
  std::int32_t stream = 0;
  std::int32_t kind = 0;
};

// Channels of the replay joined by the groups that hold them (see the header comment).
struct LaneChannel {
  std::int32_t size = 0;              // (group, kind) members
  std::int32_t channels = 0;          // channels of the replay in it
  std::vector<LaneMember> members;    // arrived, in arrival order
  std::vector<LaneMember> finishing;  // on_channel_finish scratch
  std::vector<TimeNs> amax, dmax;     // per channel: latest arrival, longest duration
  std::vector<TimeNs> fin;            // on_channel_finish scratch: member lanes' finish times
};

class LaneReplay {
 public:
  // `part`: replayed rank -> its group's key (ranks of one key run one program); `programs`: the workload's
  // programs compiled, by program index (empty where no replayed rank runs it).
  LaneReplay(const Workload& w, const Replay& rp, const std::vector<std::int32_t>& part,
             const std::vector<EngineProgram>& programs)
      : w_(w) {
    // Groups: replayed ranks by key, in replay order.
    const auto n = rp.ranks.size();
    std::vector<std::int32_t> group_of_key(n + w.programs.size(), -1);
    std::vector<std::int32_t> group_of(n), lane_of(n);
    for (std::size_t r = 0; r < n; ++r) {
      const auto p = static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(rp.ranks[r])]);
      std::int32_t& gk = group_of_key[static_cast<std::size_t>(part[r])];
      if (gk < 0) {
        gk = static_cast<std::int32_t>(groups_.size());
        groups_.emplace_back();
        groups_.back().program = static_cast<std::int32_t>(p);
        groups_.back().index = gk;
        groups_.back().prog = &programs[p];
      }
      Group& g = groups_[static_cast<std::size_t>(gk)];
      group_of[r] = gk;
      lane_of[r] = g.lanes++;
      g.replayed.push_back(static_cast<std::int32_t>(r));
    }
    std::int64_t lanes = 0;
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      Group& g = groups_[gi];
      g.lane0 = lanes;
      lanes += g.lanes;
      max_lanes_ = std::max(max_lanes_, g.lanes);
      const int streams = g.prog->prog->streams();
      g.streams.resize(static_cast<std::size_t>(streams));
      g.start.assign(static_cast<std::size_t>(streams) * static_cast<std::size_t>(g.lanes), 0);
      g.live = g.prog->stream_mask;
      for (std::uint64_t m = g.live; m != 0; m &= m - 1) {
        const int s = __builtin_ctzll(m);
        g.streams[static_cast<std::size_t>(s)].head_index = head(g, s).index;
      }
      g.seg_end = g.prog->syncs.front().index;
      g.var.assign(static_cast<std::size_t>(g.prog->prog->var_slots()) * static_cast<std::size_t>(g.lanes),
                   0);
      for (std::int32_t k = 0; k < kChannelKinds; ++k) {
        g.lane_channel[k].assign(static_cast<std::size_t>(g.lanes), -1);
      }
    }
    lane_of_replayed_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      const Group& g = groups_[static_cast<std::size_t>(group_of[r])];
      lane_of_replayed_[r] = g.lane0 + lane_of[r];
    }
    // Durations, slot-major per group (the lanes of a group read one slot together).
    w.var_durations.with_data([&](const auto* durations) {
      for (std::size_t r = 0; r < n; ++r) {
        Group& g = groups_[static_cast<std::size_t>(group_of[r])];
        const auto* from = durations + w.var_offset[static_cast<std::size_t>(rp.ranks[r])];
        const std::int64_t slots = g.prog->prog->var_slots();
        for (std::int64_t s = 0; s < slots; ++s)
          g.var[static_cast<std::size_t>(s * g.lanes + lane_of[r])] = static_cast<std::int32_t>(from[s]);
      }
    });
    build_lane_channels(rp, group_of, lane_of);
    for (Group& g : groups_) {
      for (std::int32_t k = 0; k < kChannelKinds; ++k) {
        if (g.channels[k] >= 0) ++lane_channels_[static_cast<std::size_t>(g.channels[k])].size;
      }
    }
    seg_base_.assign(static_cast<std::size_t>(lanes), 0);
    work_left_.assign(static_cast<std::size_t>(lanes), 0);
    last_update_.assign(static_cast<std::size_t>(lanes), 0);
    pending_wake_.assign(static_cast<std::size_t>(lanes), kNever);
    last_change_.assign(static_cast<std::size_t>(lanes), 0);
    clock_.assign(static_cast<std::size_t>(lanes), 0);
    compute_end_.assign(static_cast<std::size_t>(lanes), 0);
    cat_.assign(static_cast<std::size_t>(lanes), kCatBubble);
    stats_.resize(static_cast<std::size_t>(lanes));
    now_.assign(static_cast<std::size_t>(max_lanes_), 0);
    queue_.reserve(groups_.size() * 8 + 16);
  }

  EngineResult run() {
    handling_ = kStartUp;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      std::fill(now_.begin(), now_.end(), 0);
      advance(static_cast<std::int32_t>(g), now_.data());
    }
    while (!queue_.empty()) {
      const SimEvent ev = queue_.pop();
      handling_ = static_cast<std::uint8_t>(ev.type);
      switch (ev.type) {
        case kComputeFinish:
          on_compute_finish(static_cast<std::int32_t>(ev.a), static_cast<std::int32_t>(ev.b), ev.c);
          break;
        case kChannelFinish:
          on_channel_finish(static_cast<std::int32_t>(ev.a));
          break;
        case kWake:
          on_wake(static_cast<std::int32_t>(ev.a), ev.b);
          break;
        case kChannelStart:
          start_channel(static_cast<std::int32_t>(ev.a));
          break;
        default:
          throw std::logic_error("lane replay: bad event type");
      }
    }
    TimeNs end = 0;
    for (const Group& g : groups_) {
      // A deadlock: the per-rank engine reports it with the stuck rank, stream and op.
      if (g.live != 0) throw LanesDiverge{"a program that does not finish", -1, {}, {}};
    }
    for (const RankStats& s : stats_) end = std::max(end, s.finish);
    for (std::size_t l = 0; l < stats_.size(); ++l) add_time(static_cast<std::int64_t>(l), end);
    EngineResult out;
    out.iteration = end;
    out.events = events_;
    out.stale_events = stale_;
    out.replayed_ranks = static_cast<int>(lane_of_replayed_.size());
    out.lane_groups = static_cast<int>(groups_.size());
    out.ranks.reserve(lane_of_replayed_.size());
    for (const std::int64_t l : lane_of_replayed_) out.ranks.push_back(stats_[static_cast<std::size_t>(l)]);
    return out;
  }

 private:
  // Lane channels: the replay's channels joined by group (one lane channel per (group, kind) holding them).
  void build_lane_channels(const Replay& rp, const std::vector<std::int32_t>& group_of,
                           const std::vector<std::int32_t>& lane_of) {
    const std::size_t channels = rp.channel_size->size();
    std::vector<std::int32_t> parent(channels);
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&](std::int32_t c) {
      while (parent[static_cast<std::size_t>(c)] != c) {
        parent[static_cast<std::size_t>(c)] =
            parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(c)])];
        c = parent[static_cast<std::size_t>(c)];
      }
      return c;
    };
    // first[g * K + k]: a channel of the group's kind k (-2 unseen, -1 none).
    std::vector<std::int32_t> first(groups_.size() * kChannelKinds, -2);
    for (std::size_t r = 0; r < group_of.size(); ++r) {
      for (std::int32_t k = 0; k < kChannelKinds; ++k) {
        const std::int32_t ch = rp.channels[r * kChannelKinds + static_cast<std::size_t>(k)];
        std::int32_t& f =
            first[static_cast<std::size_t>(group_of[r]) * kChannelKinds + static_cast<std::size_t>(k)];
        if (f == -2) {
          f = ch;
        } else if ((f < 0) != (ch < 0)) {
          throw LanesDiverge{"ranks of one program that hold different channel kinds", -1, {}, {}};
        } else if (ch >= 0) {
          parent[static_cast<std::size_t>(find(ch))] = find(f);
        }
      }
    }
    std::vector<std::int32_t> lane_channel_of_root(channels, -1), local(channels, -1);
    for (std::size_t r = 0; r < group_of.size(); ++r) {
      Group& g = groups_[static_cast<std::size_t>(group_of[r])];
      for (std::int32_t k = 0; k < kChannelKinds; ++k) {
        const std::int32_t ch = rp.channels[r * kChannelKinds + static_cast<std::size_t>(k)];
        if (ch < 0) {
          g.channels[k] = -1;
          continue;
        }
        std::int32_t& lc = lane_channel_of_root[static_cast<std::size_t>(find(ch))];
        if (lc < 0) {
          lc = static_cast<std::int32_t>(lane_channels_.size());
          lane_channels_.emplace_back();
        }
        g.channels[k] = lc;
        LaneChannel& c = lane_channels_[static_cast<std::size_t>(lc)];
        std::int32_t& loc = local[static_cast<std::size_t>(ch)];
        if (loc < 0) loc = c.channels++;
        g.lane_channel[k][static_cast<std::size_t>(lane_of[r])] = loc;
      }
    }
    for (LaneChannel& c : lane_channels_) {
      c.amax.assign(static_cast<std::size_t>(c.channels), 0);
      c.dmax.assign(static_cast<std::size_t>(c.channels), 0);
    }
  }

  static const EngineOp& head(const Group& g, int s) {
    return g.prog->ops[static_cast<std::size_t>(g.prog->stream_begin[static_cast<std::size_t>(s)] +
                                                g.streams[static_cast<std::size_t>(s)].pos)];
  }

  bool done(const Group& g, std::uint32_t dep) const {
    return g.streams[dep >> kDepPosBits].pos >= static_cast<std::int32_t>(dep & kDepPosMask);
  }

  TimeNs duration(const Group& g, const EngineOp& op, std::int32_t lane) const {
    if (op.dur >= 0) return op.dur;
    return g.var[static_cast<std::size_t>((-op.dur - 1) * g.lanes + lane)];
  }

  // Which handler touched a lane last (LanesDiverge's message).
  static constexpr const char* kHandlerNames[] = {"compute finish", "channel finish", "wake", "", "",
                                                  "channel start",  "start"};
  static constexpr std::uint8_t kStartUp = 6;

  // `split(l)`: the lanes on one side of the disagreement.
  template <class Split>
  [[noreturn]] void diverge(const Group& g, const std::string& what, std::int32_t op_index,
                            Split split) const {
    const Program& p = *g.prog->prog;
    std::string label = "unlabelled";
    if (op_index >= 0) {
      const OpSpec& op = p.ops()[static_cast<std::size_t>(op_index)];
      if (static_cast<std::size_t>(op.label) < p.labels().size())
        label = p.labels()[static_cast<std::size_t>(op.label)];
    }
    LanesDiverge d{what + " (program " + std::to_string(g.program) + ", op " + std::to_string(op_index) +
                       " " + label + ")",
                   g.index, std::vector<std::uint8_t>(static_cast<std::size_t>(g.lanes)), g.replayed};
    for (std::int32_t l = 0; l < g.lanes; ++l) d.split[static_cast<std::size_t>(l)] = split(l) ? 1 : 0;
    throw d;
  }

  // The group's lanes are handled at `now` (one time per lane): no lane may have seen a later event.
  void enter(std::int32_t gi, const TimeNs* now) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    TimeNs* clock = clock_.data() + g.lane0;
    bool late = false;
    for (std::int32_t l = 0; l < g.lanes; ++l) {
      late = late || now[l] < clock[l];
      clock[l] = std::max(clock[l], now[l]);
    }
    if (late) {
      // clock keeps the latest time: the lanes that were late are those where now is below it.
      std::int32_t l = 0;
      while (now[l] >= clock[l]) ++l;
      diverge(g,
              "event order: " + std::string(kHandlerNames[handling_]) + " at " + std::to_string(now[l]) +
                  " ns on lane " + std::to_string(l) + " after " + kHandlerNames[g.clock_by] + " at " +
                  std::to_string(clock[l]) + " ns",
              g.compute_op, [&](std::int32_t k) { return now[k] < clock[k]; });
    }
    g.clock_by = handling_;
  }

  static TimeNs min_of(const TimeNs* v, std::int32_t n) { return *std::min_element(v, v + n); }

  void advance(std::int32_t gi, const TimeNs* now) {
    const std::int32_t outer = current_group_;
    current_group_ = gi;
    enter(gi, now);
    check_host(gi, now);
    Group& g = groups_[static_cast<std::size_t>(gi)];
    for (std::uint64_t m = g.live; m != 0; m &= m - 1) try_start(gi, __builtin_ctzll(m), now);
    current_group_ = outer;
    touch(gi, now);
  }

  void check_host(std::int32_t gi, const TimeNs* now) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    const EngineProgram& p = *g.prog;
    if (g.seg_end >= p.size) return;
    const SyncPoint& sp = p.syncs[static_cast<std::size_t>(g.sync)];
    if (sp.device) {
      const std::int32_t* drain = p.drain.data() + sp.drain;
      for (std::uint64_t m = g.live; m != 0; m &= m - 1) {
        const int s = __builtin_ctzll(m);
        if (g.streams[static_cast<std::size_t>(s)].pos < drain[s]) return;
      }
    } else if (g.streams[static_cast<std::size_t>(sp.stream)].pos <= sp.pos) {
      return;
    }
    TimeNs* base = seg_base_.data() + g.lane0;
    for (std::int32_t l = 0; l < g.lanes; ++l)
      base[l] = std::max(now[l], base[l] + sp.issue_prefix) - sp.issue_prefix;
    g.seg_start = sp.index + 1;
    ++g.sync;
    g.seg_end = p.syncs[static_cast<std::size_t>(g.sync)].index;
  }

  void try_start(std::int32_t gi, int s, const TimeNs* now) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    LaneStream& st = g.streams[static_cast<std::size_t>(s)];
    if (st.state != kIdle || st.head_index > g.seg_end) return;  // busy, or not issued yet
    const EngineOp& op = head(g, s);
    if (op.index >= g.seg_start) {  // issued at seg_base + issue_prefix: on every lane by now, or on none
      const TimeNs* base = seg_base_.data() + g.lane0;
      std::int32_t later = 0;
      for (std::int32_t l = 0; l < g.lanes; ++l) later += base[l] + op.issue_prefix > now[l] ? 1 : 0;
      if (later == g.lanes) {
        schedule_wake(gi, op);
        return;
      }
      if (later > 0)
        diverge(g, "host issue", op.index,
                [&](std::int32_t k) { return base[k] + op.issue_prefix > now[k]; });
    }
    if ((op.dep[0] != 0 && !done(g, op.dep[0])) || (op.dep[1] != 0 && !done(g, op.dep[1]))) return;
    TimeNs* start = g.start.data() + static_cast<std::size_t>(s) * static_cast<std::size_t>(g.lanes);
    std::copy_n(now, g.lanes, start);
    if ((op.flags & kOpComm) == 0) {  // compute ops run on stream 0 (Program::seal)
      st.state = kRunning;
      g.compute_op = op.index;
      std::int64_t* work = work_left_.data() + g.lane0;
      TimeNs* last = last_update_.data() + g.lane0;
      for (std::int32_t l = 0; l < g.lanes; ++l) {
        work[l] = duration(g, op, l) * static_cast<std::int64_t>(w_.sms);
        last[l] = now[l];
      }
      g.rate = std::max<std::int32_t>(1, w_.sms - g.stolen);
      ++g.version;
      push_compute_finish(gi);
      return;
    }
    const std::int32_t lc = g.channels[op.channel & 0x0f];
    LaneChannel& c = lane_channels_[static_cast<std::size_t>(lc)];
    st.state = kRendezvous;
    c.members.push_back(LaneMember{gi, s, op.channel & 0x0f});
    if (static_cast<std::int32_t>(c.members.size()) == c.size) complete(lc, gi, now);
  }

  // Every group is in: each lane starts at its own channel's latest arrival and lasts its longest duration.
  void complete(std::int32_t lc, std::int32_t current, const TimeNs* now) {
    LaneChannel& c = lane_channels_[static_cast<std::size_t>(lc)];
    std::fill(c.amax.begin(), c.amax.end(), 0);
    std::fill(c.dmax.begin(), c.dmax.end(), 0);
    for (const LaneMember& m : c.members) {
      const Group& g = groups_[static_cast<std::size_t>(m.group)];
      const TimeNs* arrival =
          g.start.data() + static_cast<std::size_t>(m.stream) * static_cast<std::size_t>(g.lanes);
      const std::int32_t* local = g.lane_channel[m.kind].data();
      const EngineOp& op = head(g, m.stream);
      for (std::int32_t l = 0; l < g.lanes; ++l) {
        const auto k = static_cast<std::size_t>(local[l]);
        c.amax[k] = std::max(c.amax[k], arrival[l]);
        c.dmax[k] = std::max(c.dmax[k], duration(g, op, l));
      }
    }
    bool now_everywhere = true;  // the group that came in last starts on every lane at once
    TimeNs first = kNever;
    for (const LaneMember& m : c.members) {
      Group& g = groups_[static_cast<std::size_t>(m.group)];
      TimeNs* start = g.start.data() + static_cast<std::size_t>(m.stream) * static_cast<std::size_t>(g.lanes);
      const std::int32_t* local = g.lane_channel[m.kind].data();
      for (std::int32_t l = 0; l < g.lanes; ++l) {
        start[l] = c.amax[static_cast<std::size_t>(local[l])];
        first = std::min(first, start[l]);
        if (m.group == current) now_everywhere = now_everywhere && start[l] == now[l];
      }
    }
    if (now_everywhere) {
      start_channel(lc);
    } else {
      queue_.push(first, kChannelStart, static_cast<std::uint32_t>(lc), 0, 0);
    }
  }

  void start_channel(std::int32_t lc) {
    LaneChannel& c = lane_channels_[static_cast<std::size_t>(lc)];
    TimeNs first = kNever;
    for (const LaneMember& m : c.members) {
      Group& g = groups_[static_cast<std::size_t>(m.group)];
      const TimeNs* start =
          g.start.data() + static_cast<std::size_t>(m.stream) * static_cast<std::size_t>(g.lanes);
      enter(m.group, start);
      const EngineOp& op = head(g, m.stream);
      LaneStream& st = g.streams[static_cast<std::size_t>(m.stream)];
      st.state = kRunning;
      st.cls = static_cast<std::uint8_t>(op.channel >> 4);
      if (op.sms > 0) change_steal(m.group, op.sms, start);
      if (m.group != current_group_) touch(m.group, start);
      const std::int32_t* local = g.lane_channel[m.kind].data();
      for (std::int32_t l = 0; l < g.lanes; ++l) {
        first = std::min(first, start[l] + c.dmax[static_cast<std::size_t>(local[l])]);
      }
    }
    queue_.push(first, kChannelFinish, static_cast<std::uint32_t>(lc), 0, 0);
  }

  void on_channel_finish(std::int32_t lc) {
    LaneChannel& c = lane_channels_[static_cast<std::size_t>(lc)];
    events_ += static_cast<std::uint64_t>(c.channels);  // the op-by-op replay: one event per channel
    c.finishing.swap(c.members);
    c.members.clear();
    c.fin.clear();
    for (const LaneMember& m : c.finishing) {
      const Group& g = groups_[static_cast<std::size_t>(m.group)];
      const TimeNs* start =
          g.start.data() + static_cast<std::size_t>(m.stream) * static_cast<std::size_t>(g.lanes);
      const std::int32_t* local = g.lane_channel[m.kind].data();
      for (std::int32_t l = 0; l < g.lanes; ++l)
        c.fin.push_back(start[l] + c.dmax[static_cast<std::size_t>(local[l])]);
    }
    std::size_t off = 0;
    for (const LaneMember& m : c.finishing) {
      Group& g = groups_[static_cast<std::size_t>(m.group)];
      const TimeNs* now = c.fin.data() + off;
      off += static_cast<std::size_t>(g.lanes);
      enter(m.group, now);
      const EngineOp& op = head(g, m.stream);
      if (op.sms > 0) change_steal(m.group, -static_cast<std::int32_t>(op.sms), now);
      finish_op(g, m.stream, now);
    }
    // Members are advanced once all have finished: a member's next op may be on this channel.
    off = 0;
    for (const LaneMember& m : c.finishing) {
      const TimeNs* now = c.fin.data() + off;
      off += static_cast<std::size_t>(groups_[static_cast<std::size_t>(m.group)].lanes);
      advance(m.group, now);
    }
  }

  void on_compute_finish(std::int32_t gi, std::int32_t op, std::uint32_t version) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    events_ += static_cast<std::uint64_t>(g.lanes);
    if (g.compute_op != op || g.version != version) {  // superseded by a rate change
      stale_ += static_cast<std::uint64_t>(g.lanes);
      return;
    }
    std::copy_n(compute_end_.data() + g.lane0, g.lanes, now_.data());
    enter(gi, now_.data());
    g.compute_op = -1;
    finish_op(g, 0, now_.data());
    advance(gi, now_.data());
  }

  void schedule_wake(std::int32_t gi, const EngineOp& op) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    const TimeNs* base = seg_base_.data() + g.lane0;
    TimeNs* pending = pending_wake_.data() + g.lane0;
    std::int32_t later = 0;  // lanes whose pending wake comes first
    for (std::int32_t l = 0; l < g.lanes; ++l) later += base[l] + op.issue_prefix >= pending[l] ? 1 : 0;
    if (later == g.lanes) return;
    if (later > 0)
      diverge(g, "wake", op.index, [&](std::int32_t k) { return base[k] + op.issue_prefix >= pending[k]; });
    std::uint32_t slot = 0;
    if (!free_wakes_.empty()) {
      slot = free_wakes_.back();
      free_wakes_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(wakes_.size());
      wakes_.emplace_back();
    }
    std::vector<TimeNs>& t = wakes_[slot];
    t.resize(static_cast<std::size_t>(g.lanes));
    for (std::int32_t l = 0; l < g.lanes; ++l)
      pending[l] = t[static_cast<std::size_t>(l)] = base[l] + op.issue_prefix;
    queue_.push(min_of(t.data(), g.lanes), kWake, static_cast<std::uint32_t>(gi), slot, 0);
  }

  void on_wake(std::int32_t gi, std::uint32_t slot) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    events_ += static_cast<std::uint64_t>(g.lanes);
    std::copy(wakes_[slot].begin(), wakes_[slot].end(), now_.begin());
    free_wakes_.push_back(slot);
    TimeNs* pending = pending_wake_.data() + g.lane0;
    for (std::int32_t l = 0; l < g.lanes; ++l) {
      if (pending[l] == now_[static_cast<std::size_t>(l)]) {
        pending[l] = kNever;
      } else {
        ++stale_;  // superseded on this lane, as the op-by-op replay counts it (Engine::on_wake)
      }
    }
    advance(gi, now_.data());
  }

  void push_compute_finish(std::int32_t gi) {
    const Group& g = groups_[static_cast<std::size_t>(gi)];
    const std::int64_t* work = work_left_.data() + g.lane0;
    const TimeNs* last = last_update_.data() + g.lane0;
    TimeNs* end = compute_end_.data() + g.lane0;
    for (std::int32_t l = 0; l < g.lanes; ++l) end[l] = last[l] + (work[l] + g.rate - 1) / g.rate;
    queue_.push(min_of(end, g.lanes), kComputeFinish, static_cast<std::uint32_t>(gi),
                static_cast<std::uint32_t>(g.compute_op), g.version);
  }

  void change_steal(std::int32_t gi, std::int32_t delta, const TimeNs* now) {
    Group& g = groups_[static_cast<std::size_t>(gi)];
    g.stolen += delta;
    if (g.compute_op < 0) return;
    // The op's finish event is superseded: on a lane where it came before `now` the op-by-op replay had
    // ended the op already (that event, now stale, never reaches enter()).
    const TimeNs* end = compute_end_.data() + g.lane0;
    bool ended = false;
    for (std::int32_t l = 0; l < g.lanes; ++l) ended = ended || end[l] < now[l];
    if (ended) {
      diverge(g, "event order: an SM steal after the end of the op it would slow", g.compute_op,
              [&](std::int32_t k) { return end[k] < now[k]; });
    }
    std::int64_t* work = work_left_.data() + g.lane0;
    TimeNs* last = last_update_.data() + g.lane0;
    for (std::int32_t l = 0; l < g.lanes; ++l) {
      const TimeNs elapsed = std::max<TimeNs>(0, now[l] - last[l]);
      work[l] = std::max<std::int64_t>(0, work[l] - elapsed * g.rate);
      last[l] = now[l];
    }
    g.rate = std::max<std::int32_t>(1, w_.sms - g.stolen);
    ++g.version;
    push_compute_finish(gi);
  }

  void finish_op(Group& g, int s, const TimeNs* now) {
    LaneStream& st = g.streams[static_cast<std::size_t>(s)];
    const EngineOp& op = head(g, s);
    const TimeNs* start = g.start.data() + static_cast<std::size_t>(s) * static_cast<std::size_t>(g.lanes);
    RankStats* stats = stats_.data() + g.lane0;
    const bool comm = (op.flags & kOpComm) != 0;
    for (std::int32_t l = 0; l < g.lanes; ++l) {
      if (comm) stats[l].comm_total[op.channel >> 4] += now[l] - start[l];
      ++stats[l].ops_run;
      stats[l].finish = std::max(stats[l].finish, now[l]);
    }
    st.state = kIdle;
    ++st.pos;
    if (st.pos >= g.prog->stream_count[static_cast<std::size_t>(s)]) {
      g.live &= ~(std::uint64_t{1} << s);
    } else {
      st.head_index = (&op)[1].index;
    }
  }

  // The group's time-line category (the op-by-op replay's, replay_engine.hpp), one for all lanes but for
  // host_wait against bubble: kCatHostWait here means "host_wait where the head of stream 0 is issued later
  // than now".
  std::uint8_t category(const Group& g) const {
    if (g.compute_op >= 0) return kCatCompute;
    if (g.live == 0) return kCatIdle;
    for (std::uint64_t m = g.live; m != 0; m &= m - 1) {
      const LaneStream& st = g.streams[static_cast<std::size_t>(__builtin_ctzll(m))];
      if (st.state == kRunning) return st.cls;
    }
    if ((g.live & 1u) != 0 && g.streams[0].state == kIdle) {
      const EngineOp& op = head(g, 0);
      if (op.index <= g.seg_end && op.index >= g.seg_start) return kCatHostWait;
    }
    return kCatBubble;
  }

  // Closes each lane's time-line interval at its `now` and opens the next with its category then.
  void touch(std::int32_t gi, const TimeNs* now) {
    enter(gi, now);
    const Group& g = groups_[static_cast<std::size_t>(gi)];
    const std::uint8_t cat = category(g);
    const std::int64_t prefix = cat == kCatHostWait ? head(g, 0).issue_prefix : 0;
    const TimeNs* base = seg_base_.data() + g.lane0;
    std::uint8_t* lane_cat = cat_.data() + g.lane0;
    for (std::int32_t l = 0; l < g.lanes; ++l) {
      add_time(g.lane0 + l, now[l]);
      const std::uint8_t wait = base[l] + prefix > now[l] ? kCatHostWait : kCatBubble;
      lane_cat[l] = cat != kCatHostWait ? cat : wait;
    }
  }

  void add_time(std::int64_t lane, TimeNs now) {
    const auto l = static_cast<std::size_t>(lane);
    RankStats& s = stats_[l];
    const TimeNs dt = now - last_change_[l];
    add_category_time(s, cat_[l], dt);
    last_change_[l] = now;
  }

  const Workload& w_;
  std::vector<Group> groups_;
  std::vector<LaneChannel> lane_channels_;
  std::vector<std::int64_t> lane_of_replayed_;
  std::int32_t max_lanes_ = 0;
  std::int32_t current_group_ = -1;  // the group advance() is handling (it touches it at the end)
  // Per lane.
  std::vector<TimeNs> seg_base_, last_update_, pending_wake_, last_change_, clock_, compute_end_;
  std::vector<std::int64_t> work_left_;  // SM-ns
  std::vector<std::uint8_t> cat_;
  std::uint8_t handling_ = 0;  // the event type being handled
  std::vector<RankStats> stats_;
  std::vector<TimeNs> now_;                 // the time of the event being handled, per lane
  std::vector<std::vector<TimeNs>> wakes_;  // wake times per lane, by event (kWake's b)
  std::vector<std::uint32_t> free_wakes_;
  std::uint64_t events_ = 0;
  std::uint64_t stale_ = 0;
  EventQueue queue_;
};

}  // namespace

std::optional<EngineResult> run_lanes(const Workload& w, const Replay& rp, int max_splits,
                                      std::string* divergence) {
  if (w.var_durations.wide()) {
    if (divergence != nullptr) *divergence = "durations over 2.1 s (64-bit)";
    return std::nullopt;
  }
  std::vector<EngineProgram> programs(w.programs.size());
  std::vector<std::int32_t> part(rp.ranks.size());  // replayed rank -> group key: first by program
  for (std::size_t r = 0; r < rp.ranks.size(); ++r) {
    const auto p = static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(rp.ranks[r])]);
    if (programs[p].prog == nullptr) programs[p] = compiled_for(w, p);
    part[r] = static_cast<std::int32_t>(p);
  }
  auto keys = static_cast<std::int32_t>(w.programs.size());
  // Where lanes disagree, the group splits along the disagreement and the replay starts again: lanes on
  // both sides then run apart (a fallback per lane rather than for the whole replay), up to max_splits.
  for (int splits = 0;; ++splits) {
    try {
      LaneReplay replay(w, rp, part, programs);
      EngineResult out = replay.run();
      out.lane_splits = splits;
      if (divergence != nullptr) out.lane_divergence = *divergence;
      return out;
    } catch (const LanesDiverge& d) {
      const auto ones = std::count(d.split.begin(), d.split.end(), std::uint8_t{1});
      if (ones == 0 || ones == static_cast<std::ptrdiff_t>(d.split.size()) || splits >= max_splits) {
        if (divergence != nullptr) *divergence = d.where + " after " + std::to_string(splits) + " splits";
        return std::nullopt;
      }
      if (divergence != nullptr) *divergence = d.where;
      for (std::size_t l = 0; l < d.split.size(); ++l) {
        if (d.split[l] != 0) part[static_cast<std::size_t>(d.replayed[l])] = keys;
      }
      ++keys;
    }
  }
}

}  // namespace moetwin::engine_detail
