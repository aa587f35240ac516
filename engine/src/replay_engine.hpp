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
  Engine(const Workload& w, const Replay& rp, const EngineOptions& o);

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
  void prefetch_for(const SimEvent& ev) const;

  EngineResult run();

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
  static void check_host(RankRt& rt, TimeNs now);

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
  void extend_chain(RankRt& rt, TimeNs now);

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

  void change_steal(int r, std::int32_t delta, TimeNs now);

  // Early arrivals: a chain whose last op is unwatched and is followed on stream 0 by a comm op that is
  // issued with its dependencies done reaches that op's channel the instant the chain ends (the op-by-op
  // replay's finish event there does nothing else: advance_stream). The op joins its channel now, with
  // its arrival time; the chain ends without an event of its own (settle), and the channel starts at its
  // members' latest arrival (schedule_start), which the chain's rate changes move (change_steal).
  bool try_arrive_early(int r, RankRt& rt, TimeNs now);

  // A channel whose members are all in: it starts at their latest arrival, now or at an event then.
  void schedule_start(std::int32_t ch, TimeNs now);

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

  void try_start(int r, RankRt& rt, int s, TimeNs now);

  void start_channel(std::int32_t ch, TimeNs now);

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

  void finish_op(int r, RankRt& rt, int s, TimeNs now, TimeNs alone = -1);

  void on_compute_finish(int r, int i, std::uint32_t version, TimeNs now);

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

  void on_channel_finish(std::int32_t ch, TimeNs now);

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

  std::uint8_t category(const RankRt& rt, TimeNs now) const;

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

  void check_finished(int r);

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
