// Internal to the engine library: the per-rank replay (Engine) that run_engine runs, its runtime state and
// its event handlers (engine.cpp runs it). The flow model's transfers are defined in flow_model.cpp and the
// periodic steady state in periodic_jump.cpp, each its own concern. Not installed.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_internal.hpp"
#include "moetwin/engine/engine.hpp"

namespace moetwin::engine_detail {

struct StreamRt {
  std::int32_t pos = 0;         // position of the head op in the stream
  std::int32_t head_index = 0;  // program index of the head op: skips loading it while not issued
  std::uint8_t state = kIdle;
  std::uint8_t cls = 0;  // comm class of the running comm op (for the time-line category)
  TimeNs start = 0;
};

struct RankRt {
  const EngineProgram* prog = nullptr;
  // This rank's var slot s is var32[s * var_stride] (or var64[...] when the durations are wide).
  const std::int32_t* var32 = nullptr;
  const TimeNs* var64 = nullptr;
  std::int64_t var_stride = 0;
  StreamRt* streams = nullptr;
  std::int32_t channels[kChannelKinds] = {};
  std::uint64_t live = 0;  // streams with ops left
  // Host: ops in [seg_start, seg_end] are issued at seg_base + issue_prefix; seg_end is the next sync
  // op (syncs[sync]) or the program size.
  TimeNs seg_base = 0;
  std::int32_t seg_start = 0;
  std::int32_t seg_end = 0;
  std::int32_t sync = 0;
  // Running compute chain (stream 0): the ops at stream positions chain_pos..chain_last run back to back;
  // chain_pos is the one in progress (found lazily: see catch_up), compute_op the last one's program index
  // (its finish event ends the chain), work_left / last_update the one in progress.
  std::int32_t compute_op = -1;
  std::int32_t chain_pos = 0;
  std::int32_t chain_last = 0;
  std::int64_t work_left = 0;  // SM-ns
  TimeNs last_update = 0;
  std::int32_t rate = 0;  // SMs
  std::uint32_t version = 0;
  std::int32_t stolen = 0;  // SMs held by running comm kernels
  TimeNs pending_wake = kNever;
  std::uint8_t cat = kCatBubble;
  TimeNs last_change = 0;
  // Early arrival (try_arrive_early): the chain ends at arrive_at and the comm op after it is already a
  // member of channel arrive_channel (its members_ entry arrive_member); kNever when none.
  TimeNs arrive_at = kNever;
  std::int32_t arrive_channel = -1;
  std::int32_t arrive_member = -1;
};

struct ChannelRt {
  std::int32_t arrived = 0;
  std::int64_t offset = 0;  // into pending members
  TimeNs dur_max = 0;
  TimeNs start = 0;                 // when the running op started
  std::uint32_t start_version = 0;  // kChannelStart events of older versions are stale
};

// A link one transfer crosses and the fraction of it the transfer holds at rate 1.
struct LinkUse {
  std::int32_t link = 0;
  double use = 0;
};

// A comm op in the flow model (engine.hpp): after its latency, `work` ns of transfer at rate 1, progressing
// at `rate` (<= 1) while it shares links with other transfers.
struct Transfer {
  std::int32_t channel = -1;
  std::uint32_t version = 0;  // finish events of older versions are stale
  bool active = false;        // transferring (latency over, not finished)
  double work = 0;            // ns left at rate 1
  double rate = 0;            // current rate, (0, 1]
  double next_rate = 0;       // solver scratch
  double weight = 1;          // share weight: the members' flows on their busiest link (NetLoad::flows)
  TimeNs last_update = 0;
  std::int32_t mark = 0;       // solver scratch: component stamp
  std::vector<LinkUse> loads;  // by link id, one entry per link
};

struct Member {
  std::int32_t rank = 0;
  std::int32_t stream = 0;  // the member's op is the head of this stream
  bool watched = false;     // on_channel_finish: the op was kOpWatched
  TimeNs arrival = 0;       // when the member is in (later than now for an early arrival)
};

class Engine {
 public:
  Engine(const Workload& w, const Replay& rp, const EngineOptions& o)
      : w_(w),
        opt_(o),
        ids_(rp.ranks),
        channel_size_(*rp.channel_size),
        shortcuts_(o.shortcuts && !o.trace),
        flow_(o.network == NetworkMode::flow) {
    const int n = static_cast<int>(rp.ranks.size());
    max_streams_ = 1;
    for (const Program& p : w.programs) max_streams_ = std::max(max_streams_, p.streams());
    // Compile only the programs this replay runs.
    std::vector<std::int32_t> compiled(w.programs.size(), -1);
    std::vector<std::int32_t> lane(
        static_cast<std::size_t>(n));  // replayed rank -> index among its program's
    std::vector<std::int64_t> lanes;   // compiled program -> its ranks
    for (std::size_t r = 0; r < ids_.size(); ++r) {
      const auto p = static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(ids_[r])]);
      if (compiled[p] < 0) {
        compiled[p] = static_cast<std::int32_t>(programs_.size());
        programs_.push_back(compiled_for(w, p));
        lanes.push_back(0);
      }
      lane[r] = static_cast<std::int32_t>(lanes[static_cast<std::size_t>(compiled[p])]++);
    }
    wide_ = w.var_durations.wide();
    w.var_durations.with_data([&](const auto* durations) {
      if constexpr (sizeof(*durations) == sizeof(std::int32_t)) {
        transpose_var_durations(w, durations, var32_, compiled, lane, lanes);
      } else {
        transpose_var_durations(w, durations, var64_, compiled, lane, lanes);
      }
    });
    ranks_.resize(static_cast<std::size_t>(n));
    streams_.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(max_streams_));
    stats_.resize(static_cast<std::size_t>(n));
    channels_.resize(channel_size_.size());
    std::int64_t off = 0;
    for (std::size_t c = 0; c < channels_.size(); ++c) {
      channels_[c].offset = off;
      off += channel_size_[c];
    }
    members_.resize(static_cast<std::size_t>(off));
    for (int r = 0; r < n; ++r) {
      RankRt& rt = ranks_[static_cast<std::size_t>(r)];
      const auto id = static_cast<std::size_t>(ids_[static_cast<std::size_t>(r)]);
      const auto p = static_cast<std::size_t>(w.rank_program[id]);
      rt.prog = &programs_[static_cast<std::size_t>(compiled[p])];
      const auto cp = static_cast<std::size_t>(compiled[p]);
      // A program without variable slots has an empty table: no pointer into it (offsetting the null
      // data() of an empty vector is undefined, and clang's UBSan says so).
      const auto lane_offset = lane[static_cast<std::size_t>(r)];
      if (wide_) {
        rt.var64 = var64_[cp].empty() ? nullptr : var64_[cp].data() + lane_offset;
      } else {
        rt.var32 = var32_[cp].empty() ? nullptr : var32_[cp].data() + lane_offset;
      }
      rt.var_stride = lanes[cp];
      std::copy_n(rp.channels + static_cast<std::size_t>(r) * kChannelKinds, kChannelKinds, rt.channels);
      rt.streams = streams_.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(max_streams_);
      rt.live = rt.prog->stream_mask;
      for (std::uint64_t m = rt.live; m != 0; m &= m - 1) {
        const int s = __builtin_ctzll(m);
        rt.streams[s].head_index = head(rt, s).index;
      }
      rt.seg_end = rt.prog->syncs.front().index;
    }
    queue_.reserve(static_cast<std::size_t>(n) * 4 + 16);
    if (flow_) {
      std::int32_t links = w.ranks() * kNetRoles;
      for (const std::int32_t l : w.net_links) links = std::max(links, l + 1);
      link_transfers_.resize(static_cast<std::size_t>(links));
      link_mark_.assign(static_cast<std::size_t>(links), 0);
      link_left_.assign(static_cast<std::size_t>(links), 0);
      link_weight_.assign(static_cast<std::size_t>(links), 0);
    }
    if (o.periodic && shortcuts_ && !flow_ && n > 0) init_periodic();
  }

  // Per program, var durations slot-major: slot s of the program's k-th replayed rank at
  // [s * ranks + k]. Ranks of a stage move through their slots nearly in lockstep (collectives couple
  // them), so the durations read at any moment share a few cache lines and pages; the workload's
  // rank-major layout cost a cache and TLB miss per read on thousands of ranks.
  // `durations`: the workload's, in their stored width (DurationTable), which the copy keeps.
  template <class T>
  void transpose_var_durations(const Workload& w, const T* durations, std::vector<std::vector<T>>& out,
                               const std::vector<std::int32_t>& compiled,
                               const std::vector<std::int32_t>& lane,
                               const std::vector<std::int64_t>& lanes) {
    out.resize(programs_.size());
    for (std::size_t cp = 0; cp < programs_.size(); ++cp) {
      out[cp].assign(static_cast<std::size_t>(programs_[cp].prog->var_slots() * lanes[cp]), 0);
    }
    // Copied in tiles of 64 ranks x 64 slots: a plain strided copy writes a new page per value.
    constexpr std::int64_t kTile = 64;
    std::vector<std::vector<const T*>> src(programs_.size());  // per program, per lane
    for (std::size_t cp = 0; cp < programs_.size(); ++cp) src[cp].resize(static_cast<std::size_t>(lanes[cp]));
    for (std::size_t r = 0; r < ids_.size(); ++r) {
      const auto id = static_cast<std::size_t>(ids_[r]);
      const auto cp = static_cast<std::size_t>(compiled[static_cast<std::size_t>(w.rank_program[id])]);
      src[cp][static_cast<std::size_t>(lane[r])] = durations + w.var_offset[id];
    }
    for (std::size_t cp = 0; cp < programs_.size(); ++cp) {
      const std::int64_t slots = programs_[cp].prog->var_slots();
      const std::int64_t n = lanes[cp];
      T* dst = out[cp].data();
      for (std::int64_t l0 = 0; l0 < n; l0 += kTile) {
        for (std::int64_t s0 = 0; s0 < slots; s0 += kTile) {
          for (std::int64_t l = l0; l < std::min(n, l0 + kTile); ++l) {
            const T* from = src[cp][static_cast<std::size_t>(l)];
            for (std::int64_t s = s0; s < std::min(slots, s0 + kTile); ++s) dst[s * n + l] = from[s];
          }
        }
      }
    }
  }

  // Starts loading the state the next event will touch while this one is handled: on thousands of ranks
  // every event's rank state is a cache miss, and the handlers are long enough to hide it.
  void prefetch_for(const SimEvent& ev) const {
    auto lines = [](const void* p, std::size_t bytes) {
      const char* c = static_cast<const char*>(p);
      for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
    };
    if (ev.type == kTransferStart || ev.type == kTransferFinish) return;
    if (ev.type == kChannelFinish || ev.type == kChannelStart) {
      // The channel, and the state of each member it will touch (a collective of 8 or 32 ranks: a
      // cache miss each, taken together instead of one after another).
      const ChannelRt& c = channels_[ev.a];
      lines(&c, sizeof(ChannelRt));
      const Member* m = members_.data() + c.offset;
      for (std::int32_t k = 0; k < c.arrived; ++k) {
        const auto r = static_cast<std::size_t>(m[k].rank);
        lines(&ranks_[r], sizeof(RankRt));
        __builtin_prefetch(ranks_[r].streams + m[k].stream);
        __builtin_prefetch(&stats_[r]);
      }
      return;
    }
    const RankRt& rt = ranks_[ev.a];
    lines(&rt, sizeof(RankRt));
    lines(rt.streams, sizeof(StreamRt) * static_cast<std::size_t>(max_streams_));
    lines(&stats_[ev.a], sizeof(RankStats));
  }

  EngineResult run() {
    const int n = static_cast<int>(ranks_.size());
    for (int r = 0; r < n; ++r) advance(r, 0);
    TimeNs now = 0;
    while (!queue_.empty()) {
      const SimEvent ev = queue_.pop();
      if (!queue_.empty()) prefetch_for(queue_.top());
      ++events_;
      now = ev.time;
      switch (ev.type) {
        case kComputeFinish:
          on_compute_finish(static_cast<int>(ev.a), static_cast<int>(ev.b), ev.c, now);
          break;
        case kChannelFinish:
          on_channel_finish(static_cast<int>(ev.a), now);
          break;
        case kWake:
          on_wake(static_cast<int>(ev.a), now);
          break;
        case kTransferStart:
          on_transfer_start(static_cast<std::int32_t>(ev.a), now);
          break;
        case kTransferFinish:
          on_transfer_finish(static_cast<std::int32_t>(ev.a), ev.c, now);
          break;
        case kChannelStart:
          on_channel_start(static_cast<std::int32_t>(ev.a), ev.c, now);
          break;
        default:
          throw std::logic_error("engine: bad event type");
      }
      if (ranks_[0].streams[0].pos >= next_anchor_pos_) on_anchor(now);
    }
    EngineResult result;
    // The op-by-op replay's count: one finish event per chained op and per chain that arrived early, one
    // stale finish event per rate change of such a chain; its channels start inside other events.
    result.events = events_ + chained_ + early_finishes_ + early_stale_ - channel_starts_;
    result.periods_skipped = periods_skipped_;
    result.stale_events = stale_ + early_stale_;
    result.rate_solves = rate_solves_;
    result.shared_transfers = shared_transfers_;
    TimeNs end = 0;
    for (int r = 0; r < n; ++r) {
      check_finished(r);
      end = std::max(end, stats_[static_cast<std::size_t>(r)].finish);
    }
    for (int r = 0; r < n; ++r) {
      touch(r, end);  // closes the last interval (idle tail)
    }
    result.iteration = end;
    result.ranks = std::move(stats_);
    result.trace = std::move(trace_);
    return result;
  }

 private:
  static const EngineOp& head(const RankRt& rt, int s) {
    return rt.prog->ops[static_cast<std::size_t>(rt.prog->stream_begin[static_cast<std::size_t>(s)] +
                                                 rt.streams[s].pos)];
  }

  static bool done(const RankRt& rt, std::uint32_t dep) {
    return rt.streams[dep >> kDepPosBits].pos >= static_cast<std::int32_t>(dep & kDepPosMask);
  }

  static TimeNs issue_time(const RankRt& rt, const EngineOp& op) {
    if (op.index < rt.seg_start) return kPast;
    if (op.index > rt.seg_end) return kNever;
    return rt.seg_base + op.issue_prefix;
  }

  // Releases the host when the sync op it waits on is satisfied.
  static void check_host(RankRt& rt, TimeNs now) {
    const EngineProgram& p = *rt.prog;
    if (rt.seg_end >= p.size) return;
    const SyncPoint& sp = p.syncs[static_cast<std::size_t>(rt.sync)];
    if (sp.device) {
      const std::int32_t* drain = p.drain.data() + sp.drain;
      for (std::uint64_t m = rt.live; m != 0; m &= m - 1) {
        const int s = __builtin_ctzll(m);
        if (rt.streams[s].pos < drain[s]) return;
      }
    } else if (rt.streams[sp.stream].pos <= sp.pos) {
      return;
    }
    const TimeNs t = std::max(now, rt.seg_base + sp.issue_prefix);
    rt.seg_base = t - sp.issue_prefix;
    rt.seg_start = sp.index + 1;
    ++rt.sync;
    rt.seg_end = p.syncs[static_cast<std::size_t>(rt.sync)].index;
  }

  void schedule_wake(int r, TimeNs t) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (t >= rt.pending_wake) return;
    rt.pending_wake = t;
    queue_.push(t, kWake, static_cast<std::uint32_t>(r), 0, 0);
  }

  // The duration of `op` on the rank (its var slot resolved), ns.
  TimeNs duration(const RankRt& rt, const EngineOp& op) const {
    if (op.dur >= 0) return op.dur;
    const std::int64_t at = (-op.dur - 1) * rt.var_stride;
    return wide_ ? rt.var64[at] : rt.var32[at];
  }

  // The work of compute op `op` on the rank, SM-ns at the full SM count.
  std::int64_t work_of(const RankRt& rt, const EngineOp& op) const {
    return duration(rt, op) * static_cast<std::int64_t>(w_.sms);
  }

  // Stream 0's op at position `pos` (stream 0's records come first in EngineProgram::ops).
  static const EngineOp& compute_record(const RankRt& rt, std::int32_t pos) {
    return rt.prog->ops[static_cast<std::size_t>(pos)];
  }

  // The end of the running chain: the op in progress, then each later op of the chain at the current rate,
  // every op rounded up to whole ns as the op-by-op replay rounds it.
  void push_compute_finish(int r, const RankRt& rt, TimeNs now) {
    queue_.push(chain_end(rt, now), kComputeFinish, static_cast<std::uint32_t>(r),
                static_cast<std::uint32_t>(rt.compute_op), rt.version);
  }

  // Compute chains: a compute op whose successor on stream 0 is a compute op already issued, with its
  // dependencies on other streams done, starts that successor the instant it ends, and when nothing else
  // waits for it (kOpWatched unset) its end changes nothing else on the rank or beyond: no event is
  // needed there. The chain is extended from its first op, just started at `now`, over such successors;
  // one finish event ends it. Every op keeps the start, end and rounding of the op-by-op replay (a rate
  // change first finds the op in progress: catch_up), the time-line categories are the same (compute
  // throughout), and EngineResult::events counts the events the op-by-op replay pops.
  void extend_chain(RankRt& rt, TimeNs now) {
    const EngineOp* first = &compute_record(rt, rt.chain_pos);
    const EngineOp* end = rt.prog->ops.data() + rt.prog->stream_count[0];
    const EngineOp* last = first;
    while ((last->flags & kOpWatched) == 0 && last + 1 < end) {
      const EngineOp& next = last[1];
      if ((next.flags & kOpComm) != 0 || !ready_after_chain(rt, next, now)) break;
      ++last;
    }
    const auto added = static_cast<std::int32_t>(last - first);
    rt.chain_last = rt.chain_pos + added;
    chained_ += static_cast<std::uint64_t>(added);
  }

  // Whether stream 0's op `next`, after the chain running since `now`, can start the instant the chain
  // ends: issued by now, and its dependencies done now (one on stream 0 is an earlier op of the stream,
  // done by the time its successors run).
  static bool ready_after_chain(const RankRt& rt, const EngineOp& next, TimeNs now) {
    if (next.index > rt.seg_end || issue_time(rt, next) > now) return false;
    const auto dep_done = [&](std::uint32_t dep) { return dep < (1u << kDepPosBits) || done(rt, dep); };
    return dep_done(next.dep[0]) && dep_done(next.dep[1]);
  }

  // Moves a chain to the op in progress at `now`: ops that end at or before `now` are over, and an op that
  // ends exactly at `now` has started its successor (the op-by-op replay reaches the same state whichever
  // of its two events at `now` it handles first). The last op of the chain is left to its finish event.
  void catch_up(RankRt& rt, TimeNs now) const {
    while (rt.chain_pos < rt.chain_last) {
      const TimeNs end = rt.last_update + (rt.work_left + rt.rate - 1) / rt.rate;
      if (end > now) return;
      rt.last_update = end;
      ++rt.chain_pos;
      rt.work_left = work_of(rt, compute_record(rt, rt.chain_pos));
    }
  }

  void change_steal(int r, std::int32_t delta, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    settle(r, rt, now);
    rt.stolen += delta;
    if (rt.compute_op < 0) return;
    catch_up(rt, now);  // at the old rate
    const TimeNs elapsed = std::max<TimeNs>(0, now - rt.last_update);
    rt.work_left = std::max<std::int64_t>(0, rt.work_left - elapsed * rt.rate);
    rt.last_update = now;
    rt.rate = std::max<std::int32_t>(1, w_.sms - rt.stolen);
    ++rt.version;
    if (rt.arrive_at == kNever) {
      push_compute_finish(r, rt, now);
      return;
    }
    // An early arrival moves with its chain's end.
    ++early_stale_;
    rt.arrive_at = chain_end(rt, now);
    ChannelRt& c = channels_[static_cast<std::size_t>(rt.arrive_channel)];
    members_[static_cast<std::size_t>(c.offset + rt.arrive_member)].arrival = rt.arrive_at;
    if (c.arrived == channel_size_[static_cast<std::size_t>(rt.arrive_channel)])
      schedule_start(rt.arrive_channel, now);
  }

  // Early arrivals: a chain whose last op is unwatched and is followed on stream 0 by a comm op that is
  // issued with its dependencies done reaches that op's channel the instant the chain ends (the op-by-op
  // replay's finish event there does nothing else: advance_stream). The op joins its channel now, with
  // its arrival time; the chain ends without an event of its own (settle), and the channel starts at its
  // members' latest arrival (schedule_start), which the chain's rate changes move (change_steal).
  bool try_arrive_early(int r, RankRt& rt, TimeNs now) {
    const EngineOp& last = compute_record(rt, rt.chain_last);
    if ((last.flags & kOpWatched) != 0 || rt.chain_last + 1 >= rt.prog->stream_count[0]) return false;
    const EngineOp& next = (&last)[1];
    if ((next.flags & kOpComm) == 0 || !ready_after_chain(rt, next, now)) return false;
    const std::int32_t ch = rt.channels[next.channel & 0x0f];
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    rt.arrive_at = chain_end(rt, now);
    rt.arrive_channel = ch;
    rt.arrive_member = c.arrived;
    members_[static_cast<std::size_t>(c.offset + c.arrived)] = Member{r, 0, false, rt.arrive_at};
    ++c.arrived;
    c.dur_max = std::max(c.dur_max, duration(rt, next));
    if (c.arrived == channel_size_[static_cast<std::size_t>(ch)]) schedule_start(ch, now);
    return true;
  }

  // A channel whose members are all in: it starts at their latest arrival, now or at an event then.
  void schedule_start(std::int32_t ch, TimeNs now) {
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    TimeNs at = now;
    for (std::int32_t m = 0; m < c.arrived; ++m)
      at = std::max(at, members_[static_cast<std::size_t>(c.offset + m)].arrival);
    ++c.start_version;
    if (at == now) {
      start_channel(ch, now);
    } else {
      queue_.push(at, kChannelStart, static_cast<std::uint32_t>(ch), 0, c.start_version);
    }
  }

  void on_channel_start(std::int32_t ch, std::uint32_t version, TimeNs now) {
    ++channel_starts_;
    if (channels_[static_cast<std::size_t>(ch)].start_version != version) return;  // an arrival moved
    start_channel(ch, now);
  }

  // Ends a chain that arrived early once its end is reached (at or before `now`): the op-by-op replay's
  // finish event at arrive_at, whose only effect was the comm op's arrival, already made. Called before
  // anything reads the rank's state.
  void settle(int r, RankRt& rt, TimeNs now) {
    if (rt.arrive_at > now) return;
    const TimeNs t = rt.arrive_at;
    rt.arrive_at = kNever;
    ++early_finishes_;
    add_time(r, rt, t);  // compute until the end
    end_chain(r, rt, t);
    rt.streams[0].state = kRendezvous;
    rt.cat = category(rt, t);
  }

  // When the running chain ends at the current rate (push_compute_finish's event time).
  TimeNs chain_end(const RankRt& rt, TimeNs now) const {
    TimeNs end = now + (rt.work_left + rt.rate - 1) / rt.rate;
    for (std::int32_t pos = rt.chain_pos + 1; pos <= rt.chain_last; ++pos) {
      end += (work_of(rt, compute_record(rt, pos)) + rt.rate - 1) / rt.rate;
    }
    return end;
  }

  void try_start(int r, RankRt& rt, int s, TimeNs now) {
    StreamRt& st = rt.streams[s];
    if (st.state != kIdle || st.head_index > rt.seg_end) return;  // busy, or not issued yet
    const EngineOp& op = head(rt, s);
    const TimeNs t = issue_time(rt, op);
    if (t == kNever) return;
    if (t > now) {
      schedule_wake(r, t);
      return;
    }
    if ((op.dep[0] != 0 && !done(rt, op.dep[0])) || (op.dep[1] != 0 && !done(rt, op.dep[1]))) return;
    const TimeNs dur = duration(rt, op);
    if ((op.flags & kOpComm) == 0) {  // compute ops run on stream 0 (Program::seal)
      st.state = kRunning;
      st.start = now;
      rt.chain_pos = rt.chain_last = st.pos;
      if (shortcuts_) extend_chain(rt, now);
      rt.compute_op = compute_record(rt, rt.chain_last).index;
      rt.work_left = dur * static_cast<std::int64_t>(w_.sms);
      rt.last_update = now;
      rt.rate = std::max<std::int32_t>(1, w_.sms - rt.stolen);
      ++rt.version;
      if (!shortcuts_ || !try_arrive_early(r, rt, now)) push_compute_finish(r, rt, now);
      return;
    }
    const std::int32_t ch = rt.channels[op.channel & 0x0f];
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    st.state = kRendezvous;
    members_[static_cast<std::size_t>(c.offset + c.arrived)] = Member{r, s, false, now};
    ++c.arrived;
    c.dur_max = std::max(c.dur_max, dur);
    if (c.arrived == channel_size_[static_cast<std::size_t>(ch)]) schedule_start(ch, now);
  }

  void start_channel(std::int32_t ch, TimeNs now) {
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    for (std::int32_t m = 0; m < c.arrived; ++m) {
      const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
      RankRt& rt = ranks_[static_cast<std::size_t>(mem.rank)];
      settle(mem.rank, rt, now);
      const EngineOp& op = head(rt, mem.stream);
      StreamRt& st = rt.streams[mem.stream];
      st.state = kRunning;
      st.start = now;
      st.cls = static_cast<std::uint8_t>(op.channel >> 4);
      if (op.sms > 0) change_steal(mem.rank, op.sms, now);
      if (mem.rank != current_rank_) touch(mem.rank, now);
    }
    c.start = now;
    if (flow_ && start_transfer(ch, c, now)) return;
    queue_.push(now + c.dur_max, kChannelFinish, static_cast<std::uint32_t>(ch), 0, 0);
  }

  // --- flow model (engine.hpp) ---

  // Makes the channel's op a transfer when its members' ops carry net loads: latency first, then the rest
  // of the longest member duration as shared work. False when it has nothing to share (closed form).
  bool start_transfer(std::int32_t ch, const ChannelRt& c, TimeNs now);

  void on_transfer_start(std::int32_t t, TimeNs now);

  void on_transfer_finish(std::int32_t t, std::uint32_t version, TimeNs now);

  // Re-solves the rates of the active transfers connected to `seed`'s links (through shared links,
  // transitively) by weighted max-min fairness on progress rates with a cap of 1 (a transfer is never
  // faster than alone), and moves the finish events of those whose rate changed. Progressive filling
  // (Bertsekas & Gallager, Data Networks, 6.5.2, weighted): unfixed transfers run at weight x level; a
  // link's level is its remaining capacity over the weight x use of its unfixed transfers; the smallest
  // level (or a transfer's cap, 1 / weight, if smaller) fixes its transfers; repeat. Links and transfers are
  // visited in id order: deterministic.
  void share_links(std::int32_t seed, TimeNs now);

  void finish_op(int r, RankRt& rt, int s, TimeNs now, TimeNs alone = -1) {
    StreamRt& st = rt.streams[s];
    RankStats& stats = stats_[static_cast<std::size_t>(r)];
    const EngineOp& op = head(rt, s);
    if (opt_.trace) {
      trace_.push_back(TraceSpan{ids_[static_cast<std::size_t>(r)], op.index, st.start, now,
                                 static_cast<std::uint8_t>(s), alone});
    }
    if ((op.flags & kOpComm) != 0) {
      stats.comm_total[op.channel >> 4] += now - st.start;
      if (alone >= 0 && now - st.start > alone) stats.shared_delay[op.channel >> 4] += now - st.start - alone;
    }
    ++stats.ops_run;
    stats.finish = std::max(stats.finish, now);
    st.state = kIdle;
    ++st.pos;
    if (st.pos >= rt.prog->stream_count[static_cast<std::size_t>(s)]) {
      rt.live &= ~(std::uint64_t{1} << s);
    } else {
      st.head_index = (&op)[1].index;  // the stream's next op is the next record
    }
  }

  void on_compute_finish(int r, int i, std::uint32_t version, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    settle(r, rt, now);
    if (rt.compute_op != i || rt.version != version) {  // superseded by a rate change
      ++stale_;
      return;
    }
    const bool watched = (compute_record(rt, rt.chain_last).flags & kOpWatched) != 0;
    end_chain(r, rt, now);
    if (watched || !shortcuts_) {
      advance(r, now);
    } else {
      advance_stream(r, 0, now);
    }
  }

  // The running chain's ops, from the first (stream 0's head) to the last, end at `t` as far as the stats
  // go: ops_run counts each, and `finish` is the latest end.
  void end_chain(int r, RankRt& rt, TimeNs t) {
    rt.compute_op = -1;
    for (std::int32_t left = rt.chain_last - rt.streams[0].pos; left >= 0; --left) finish_op(r, rt, 0, t);
  }

  // advance() after an unwatched op of stream `s` ended: nothing but the stream's next op waited for it,
  // so no host sync was released and no other stream became ready (one that is ready at `now` for another
  // reason, its issue time or another op's end, has an event at `now` of its own): only `s` is tried.
  void advance_stream(int r, int s, TimeNs now) {
    current_rank_ = r;
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    settle(r, rt, now);
    if ((rt.live >> s & 1u) != 0) try_start(r, rt, s, now);
    current_rank_ = -1;
    touch(r, now);
  }

  void on_channel_finish(std::int32_t ch, TimeNs now) {
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    const std::int32_t count = c.arrived;
    for (std::int32_t m = 0; m < count; ++m) {
      const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
      RankRt& rt = ranks_[static_cast<std::size_t>(mem.rank)];
      settle(mem.rank, rt, now);
      const EngineOp& op = head(rt, mem.stream);
      members_[static_cast<std::size_t>(c.offset + m)].watched = (op.flags & kOpWatched) != 0;
      if (op.sms > 0) change_steal(mem.rank, -static_cast<std::int32_t>(op.sms), now);
      finish_op(mem.rank, rt, mem.stream, now, c.dur_max);
    }
    c.arrived = 0;
    c.dur_max = 0;
    // Members are advanced after the channel is reset: a member's next op may be on this channel.
    for (std::int32_t m = 0; m < count; ++m) {
      const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
      if (mem.watched || !shortcuts_) {
        advance(mem.rank, now);
      } else {
        advance_stream(mem.rank, mem.stream, now);
      }
    }
  }

  void on_wake(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (rt.pending_wake == now) {
      rt.pending_wake = kNever;
    } else {
      ++stale_;  // superseded: the rank asked for an earlier wake after this one (EngineResult::stale_events)
    }
    advance(r, now);
  }

  void advance(int r, TimeNs now) {
    current_rank_ = r;
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    settle(r, rt, now);
    check_host(rt, now);
    // Ascending stream order, as a plain loop over every stream would visit them.
    for (std::uint64_t m = rt.live; m != 0; m &= m - 1) try_start(r, rt, __builtin_ctzll(m), now);
    current_rank_ = -1;
    touch(r, now);
  }

  std::uint8_t category(const RankRt& rt, TimeNs now) const {
    if (rt.compute_op >= 0) return kCatCompute;
    if (rt.live == 0) return kCatIdle;
    for (std::uint64_t m = rt.live; m != 0; m &= m - 1) {
      const StreamRt& st = rt.streams[__builtin_ctzll(m)];
      if (st.state == kRunning) return st.cls;
    }
    if ((rt.live & 1u) != 0 && rt.streams[0].state == kIdle) {
      const TimeNs t = issue_time(rt, head(rt, 0));
      // Host blocked on a sync (e.g. a P2P waiting for its peer) is waiting for data: a bubble.
      if (t != kNever && t > now) return kCatHostWait;
    }
    return kCatBubble;
  }

  // Closes the rank's time-line interval at `now` and opens the next with its category then.
  void touch(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    settle(r, rt, now);
    add_time(r, rt, now);
    rt.cat = category(rt, now);
  }

  // Adds [last_change, now) to the rank's current category.
  void add_time(int r, RankRt& rt, TimeNs now) {
    RankStats& s = stats_[static_cast<std::size_t>(r)];
    const TimeNs dt = now - rt.last_change;
    add_category_time(s, rt.cat, dt);
    rt.last_change = now;
  }

  void check_finished(int r) {
    const RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (rt.live == 0) return;
    const int s = __builtin_ctzll(rt.live);
    const Program& p = *rt.prog->prog;
    const int i = head(rt, s).index;
    const OpSpec& op = p.ops()[static_cast<std::size_t>(i)];
    throw std::logic_error("engine: deadlock: rank " + std::to_string(ids_[static_cast<std::size_t>(r)]) +
                           " stream " + std::to_string(s) + " stuck at op " + std::to_string(i) + " (" +
                           (static_cast<std::size_t>(op.label) < p.labels().size()
                                ? p.labels()[static_cast<std::size_t>(op.label)]
                                : std::string("unlabelled")) +
                           ", microbatch " + std::to_string(op.microbatch) + ", chunk " +
                           std::to_string(op.chunk) + ")" +
                           (rt.streams[s].state == kRendezvous ? " waiting for its channel peers" : ""));
  }

  // --- periodic steady state (EngineOptions::periodic) ---
  // Periodic steady state. In the steady state of a pipeline schedule every microbatch repeats the ops of
  // the one before it at a later time: the replay's whole state (every stream's position and state, the
  // hosts, the compute chains, the channels' arrivals, the queued events) at the start of a microbatch's
  // forward is the state of an earlier one moved by whole ops and a time shift. From two such states A and
  // B the replay is periodic for as long as the ops each rank reads next repeat with the same shift (the
  // same durations, SMs, channels, dependencies, host costs and syncs): a deterministic replay from a state
  // equal up to the shift, over equal ops, takes the same steps shifted (the order of simultaneous events
  // is by insertion, and every event inserted later comes after every queued one in both). So the state
  // J periods after B is B's moved J times, and every stat and event counter adds J times what it gained
  // from A to B. Anchors: the first op of each microbatch's forward (per virtual chunk) on the compute
  // stream of the first replayed rank; the replay compares its state there with the states at the last
  // anchors (a ring) and jumps on the first that matches. Everything a later step reads is compared or
  // bounded; where in doubt no jump is made (never a wrong one).
  struct PeriodSnapshot {
    TimeNs time = 0;
    std::vector<RankRt> ranks;
    std::vector<StreamRt> streams;
    std::vector<ChannelRt> channels;
    std::vector<Member> members;
    std::vector<RankStats> stats;
    std::vector<SimEvent> queue;  // in pop order
    std::array<std::uint64_t, 6> counters{};
  };
  // What one period moves a rank by (match()).
  struct RankShift {
    std::int32_t index = 0;  // program indices
    std::int32_t sync = 0;   // sync points
    TimeNs issue = 0;        // host issue prefix (Program::issue_prefix)
    bool host_done = false;  // no sync left and every op issued: issue times no longer matter
  };
  static constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();
  // Memory for the ring of snapshots; replays whose state is too large for a few keep no ring.
  static constexpr std::size_t kPeriodRingBytes = std::size_t{32} << 20;
  static constexpr std::size_t kPeriodRingMax = 64;

  std::array<std::uint64_t*, 6> counters() {
    return {&events_, &chained_, &stale_, &early_finishes_, &early_stale_, &channel_starts_};
  }

  void init_periodic();

  // Moves next_anchor_ (and next_anchor_pos_) past the first replayed rank's compute-stream position.
  void seek_next_anchor();
  void on_anchor(TimeNs now);

  // Whether the first replayed rank's compute-stream records from position `from` up to its head (and the
  // two after it) repeat `head - from` records later in duration, SMs, flags and channel: what a jump from
  // a state at `from` needs of them (periods_ahead). A speed policy only (which anchors pay for a
  // snapshot); every jump is still decided by match() and periods_ahead().
  bool first_rank_repeats(std::int32_t from) const;

  static bool shifted(TimeNs a, TimeNs b, TimeNs dt) { return a == kNever ? b == kNever : b == a + dt; }

  // Whether the replay's state now is `a`'s moved by whole ops and now - a.time; fills shift_ and
  // pos_shift_ with the moves.
  bool match(const PeriodSnapshot& a, TimeNs now);

  // Whether record `y` of a stream is its record `x` one period later on rank `r` (shift_[r], pos_shift_).
  bool repeats(std::size_t r, const RankRt& rt, const EngineOp& x, const EngineOp& y) const;
  // The same for sync point `y` of the rank's program and `x`.
  bool sync_repeats(std::size_t r, const EngineProgram& p, const SyncPoint& x, const SyncPoint& y) const;

  // How many periods after the state now (matched with `a`) the replay is sure to repeat: every record a
  // rank reads in them must repeat the one a period earlier, back to what it read between `a` and now.
  // A stream reads its head and the record after it (finish_op; an early arrival's collective); a
  // compute chain reads up to the next record that stops it (watched or communication).
  std::int64_t periods_ahead(const PeriodSnapshot& a, TimeNs now) const;

  // How many periods stream `s` of rank `r`, idle through the last one, keeps waiting without an effect:
  // its head op not issued before the host passes it, or issued in the past with a dependency that the
  // other streams do not reach.
  std::int64_t waiting_periods(std::size_t r, const RankRt& rt, int s, TimeNs now) const;

  // Moves the state now (matched with `a`) `periods` periods on.
  void jump(const PeriodSnapshot& a, TimeNs now, std::int64_t periods);

  static constexpr std::int32_t kNoAnchor = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int32_t> anchors_;  // stream-0 positions of the first replayed rank's anchors
  std::size_t next_anchor_ = 0;
  std::int32_t next_anchor_pos_ = kNoAnchor;
  std::vector<PeriodSnapshot> ring_;
  std::size_t ring_capacity_ = 0, ring_head_ = 0, ring_size_ = 0;
  // The first replayed rank's compute-stream positions at the last anchors (newest last), whether or not
  // a snapshot was taken there (on_anchor).
  std::vector<std::int32_t> anchor_positions_;
  bool queue_sorted_ = false;  // queue_now_ holds the queue in pop order (this anchor)
  std::vector<SimEvent> queue_now_;
  std::vector<RankShift> shift_;
  std::vector<std::int32_t> pos_shift_;  // replayed rank * max_streams_ + stream
  std::uint64_t periods_skipped_ = 0;

  const Workload& w_;
  EngineOptions opt_;
  const std::vector<std::int32_t>& ids_;
  const std::vector<std::int32_t>& channel_size_;
  int max_streams_ = 1;
  int current_rank_ = -1;
  bool shortcuts_ = true;             // EngineOptions::shortcuts (off with traces: every op has its span)
  std::uint64_t chained_ = 0;         // ops that ended inside a chain, without an event of their own
  std::uint64_t stale_ = 0;           // finish events superseded by a rate change, wakes by an earlier wake
  std::uint64_t early_finishes_ = 0;  // chains that ended without an event (early arrivals)
  std::uint64_t early_stale_ = 0;     // rate changes of those chains
  std::uint64_t channel_starts_ = 0;  // kChannelStart events popped
  std::uint64_t events_ = 0;          // events popped
  std::vector<EngineProgram> programs_;
  // Per compiled program, slot-major, in the workload's width (one of the two is used).
  bool wide_ = false;
  std::vector<std::vector<std::int32_t>> var32_;
  std::vector<std::vector<TimeNs>> var64_;
  std::vector<RankRt> ranks_;
  std::vector<StreamRt> streams_;
  std::vector<RankStats> stats_;
  std::vector<ChannelRt> channels_;
  std::vector<Member> members_;
  std::vector<TraceSpan> trace_;
  EventQueue queue_;
  // Flow model (flow_ only).
  bool flow_ = false;
  std::vector<Transfer> transfers_;
  std::vector<std::int32_t> free_transfers_;
  std::vector<std::vector<std::int32_t>> link_transfers_;  // link -> active transfers crossing it
  std::vector<std::int32_t> link_mark_;                    // solver: component stamp per link
  std::vector<double> link_left_;                          // solver: capacity left (fraction) per link
  std::vector<double> link_weight_;                        // solver: uses of unfixed transfers per link
  std::vector<std::int32_t> comp_transfers_, comp_links_;
  std::vector<LinkUse> scratch_loads_;
  std::int32_t stamp_ = 0;
  std::uint64_t rate_solves_ = 0;
  std::uint64_t shared_transfers_ = 0;
};

}  // namespace moetwin::engine_detail
