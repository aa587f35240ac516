#include "moetwin/sim/engine.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "moetwin/sim/symmetry.hpp"

namespace moetwin {

TimeNs RankStats::exposed_total() const {
  TimeNs t = 0;
  for (TimeNs e : exposed) t += e;
  return t;
}

TimeNs RankStats::accounted() const {
  return compute + exposed_total() + host_wait + bubble + idle;
}

namespace {

constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kPast = std::numeric_limits<TimeNs>::min();

enum EventType : std::uint32_t { kComputeFinish = 0, kChannelFinish = 1, kWake = 2 };
enum StreamState : std::uint8_t { kIdle = 0, kRunning = 1, kRendezvous = 2 };
// Categories of a rank's time line; 0..3 are the comm classes.
enum Category : std::uint8_t { kCatCompute = 4, kCatHostWait = 5, kCatBubble = 6, kCatIdle = 7 };

struct StreamRt {
  std::int32_t pos = 0;  // index into the program's stream_ops of the head op
  std::uint8_t state = kIdle;
  TimeNs start = 0;
};

struct RankRt {
  const Program* prog = nullptr;
  const TimeNs* var = nullptr;  // this rank's var durations
  const std::int32_t* channels = nullptr;
  // Host: ops >= seg_start up to the next sync op are issued at seg_base + issue_prefix[i].
  TimeNs seg_base = 0;
  std::int32_t seg_start = 0;
  // Running compute op (stream 0).
  std::int32_t compute_op = -1;
  std::int64_t work_left = 0;  // SM-ns
  TimeNs last_update = 0;
  std::int32_t rate = 0;  // SMs
  std::uint32_t version = 0;
  std::int32_t stolen = 0;  // SMs held by running comm kernels
  TimeNs pending_wake = kNever;
  std::uint8_t cat = kCatBubble;
  TimeNs last_change = 0;
};

struct ChannelRt {
  std::int32_t arrived = 0;
  std::int64_t offset = 0;  // into pending members
  TimeNs dur_max = 0;
};

struct Member {
  std::int32_t rank = 0;
  std::int32_t op = 0;
};

// The ranks one run replays: all of the workload's, or one representative per symmetry class with the
// reduced channels (symmetry.hpp).
struct Replay {
  std::vector<std::int32_t> ranks;                          // replayed rank -> workload rank
  const std::int32_t* channels = nullptr;                   // replayed rank * kChannelKinds + kind -> channel
  const std::vector<std::int32_t>* channel_size = nullptr;  // channel -> members
};

class Engine {
 public:
  Engine(const Workload& w, const Replay& rp, const EngineOptions& o)
      : w_(w), opt_(o), ids_(rp.ranks), channel_size_(*rp.channel_size) {
    const int n = static_cast<int>(rp.ranks.size());
    max_streams_ = 1;
    for (const Program& p : w.programs) max_streams_ = std::max(max_streams_, p.streams());
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
      rt.prog = &w.programs[static_cast<std::size_t>(w.rank_program[id])];
      rt.var = w.var_durations.data() + w.var_offset[id];
      rt.channels = rp.channels + static_cast<std::size_t>(r) * kChannelKinds;
    }
    queue_.reserve(static_cast<std::size_t>(n) * 4 + 16);
  }

  EngineResult run() {
    const int n = static_cast<int>(ranks_.size());
    for (int r = 0; r < n; ++r) advance(r, 0);
    std::uint64_t events = 0;
    TimeNs now = 0;
    while (!queue_.empty()) {
      const SimEvent ev = queue_.pop();
      ++events;
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
        default:
          throw std::logic_error("engine: bad event type");
      }
    }
    EngineResult result;
    result.events = events;
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
  StreamRt& stream(int r, int s) {
    return streams_[static_cast<std::size_t>(r) * static_cast<std::size_t>(max_streams_) +
                    static_cast<std::size_t>(s)];
  }

  bool done(int r, int op) {
    const Program& p = *ranks_[static_cast<std::size_t>(r)].prog;
    const OpSpec& o = p.ops()[static_cast<std::size_t>(op)];
    return stream(r, o.stream).pos > p.pos_in_stream()[static_cast<std::size_t>(op)];
  }

  TimeNs issue_time(const RankRt& rt, int op) const {
    if (op < rt.seg_start) return kPast;
    const std::int32_t k = rt.prog->next_sync()[static_cast<std::size_t>(rt.seg_start)];
    if (op > k) return kNever;
    return rt.seg_base + rt.prog->issue_prefix()[static_cast<std::size_t>(op)];
  }

  // Releases the host when the sync op it waits on is satisfied.
  void check_host(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    const Program& p = *rt.prog;
    const std::int32_t k = p.next_sync()[static_cast<std::size_t>(rt.seg_start)];
    if (k >= p.size()) return;
    const OpSpec& op = p.ops()[static_cast<std::size_t>(k)];
    bool released = false;
    if (op.sync == HostSync::op) {
      released = done(r, k);
    } else {
      released = true;
      for (int s = 0; s < p.streams(); ++s) {
        const auto& list = p.stream_ops()[static_cast<std::size_t>(s)];
        const StreamRt& st = stream(r, s);
        if (static_cast<std::size_t>(st.pos) < list.size() && list[static_cast<std::size_t>(st.pos)] <= k) {
          released = false;
          break;
        }
      }
    }
    if (!released) return;
    const TimeNs issued_k = rt.seg_base + p.issue_prefix()[static_cast<std::size_t>(k)];
    const TimeNs t = std::max(now, issued_k);
    rt.seg_base = t - p.issue_prefix()[static_cast<std::size_t>(k)];
    rt.seg_start = k + 1;
  }

  void schedule_wake(int r, TimeNs t) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (t >= rt.pending_wake) return;
    rt.pending_wake = t;
    queue_.push(t, kWake, static_cast<std::uint32_t>(r), 0, 0);
  }

  TimeNs duration_of(const RankRt& rt, const OpSpec& op) const {
    return op.var_slot >= 0 ? rt.var[op.var_slot] : op.duration;
  }

  void push_compute_finish(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    const std::int64_t dt = (rt.work_left + rt.rate - 1) / rt.rate;
    queue_.push(now + dt, kComputeFinish, static_cast<std::uint32_t>(r),
                static_cast<std::uint32_t>(rt.compute_op), rt.version);
  }

  void change_steal(int r, std::int32_t delta, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    rt.stolen += delta;
    if (rt.compute_op < 0) return;
    const TimeNs elapsed = std::max<TimeNs>(0, now - rt.last_update);
    rt.work_left = std::max<std::int64_t>(0, rt.work_left - elapsed * rt.rate);
    rt.last_update = now;
    rt.rate = std::max<std::int32_t>(1, w_.sms - rt.stolen);
    ++rt.version;
    push_compute_finish(r, now);
  }

  void try_start(int r, int s, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    StreamRt& st = stream(r, s);
    if (st.state != kIdle) return;
    const Program& p = *rt.prog;
    const auto& list = p.stream_ops()[static_cast<std::size_t>(s)];
    if (static_cast<std::size_t>(st.pos) >= list.size()) return;
    const int i = list[static_cast<std::size_t>(st.pos)];
    const TimeNs t = issue_time(rt, i);
    if (t == kNever) return;
    if (t > now) {
      schedule_wake(r, t);
      return;
    }
    const OpSpec& op = p.ops()[static_cast<std::size_t>(i)];
    for (int d : op.deps) {
      if (d != kNoOp && !done(r, d)) return;
    }
    const TimeNs dur = duration_of(rt, op);
    if (op.kind == OpKind::compute) {
      st.state = kRunning;
      st.start = now;
      rt.compute_op = i;
      rt.work_left = dur * static_cast<std::int64_t>(w_.sms);
      rt.last_update = now;
      rt.rate = std::max<std::int32_t>(1, w_.sms - rt.stolen);
      ++rt.version;
      push_compute_finish(r, now);
      return;
    }
    const std::int32_t ch = rt.channels[static_cast<int>(op.channel)];
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    st.state = kRendezvous;
    members_[static_cast<std::size_t>(c.offset + c.arrived)] = Member{r, i};
    ++c.arrived;
    c.dur_max = std::max(c.dur_max, dur);
    if (c.arrived == channel_size_[static_cast<std::size_t>(ch)]) start_channel(ch, now);
  }

  void start_channel(std::int32_t ch, TimeNs now) {
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    for (std::int32_t m = 0; m < c.arrived; ++m) {
      const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
      const OpSpec& op =
          ranks_[static_cast<std::size_t>(mem.rank)].prog->ops()[static_cast<std::size_t>(mem.op)];
      StreamRt& st = stream(mem.rank, op.stream);
      st.state = kRunning;
      st.start = now;
      if (op.sms > 0) change_steal(mem.rank, op.sms, now);
      if (mem.rank != current_rank_) touch(mem.rank, now);
    }
    queue_.push(now + c.dur_max, kChannelFinish, static_cast<std::uint32_t>(ch), 0, 0);
  }

  void finish_op(int r, int i, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    const OpSpec& op = rt.prog->ops()[static_cast<std::size_t>(i)];
    StreamRt& st = stream(r, op.stream);
    RankStats& stats = stats_[static_cast<std::size_t>(r)];
    if (opt_.trace)
      trace_.push_back(TraceSpan{ids_[static_cast<std::size_t>(r)], i, st.start, now, op.stream});
    if (op.kind == OpKind::comm) stats.comm_total[static_cast<int>(op.comm_class)] += now - st.start;
    ++stats.ops_run;
    stats.finish = std::max(stats.finish, now);
    st.state = kIdle;
    ++st.pos;
  }

  void on_compute_finish(int r, int i, std::uint32_t version, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (rt.compute_op != i || rt.version != version) return;  // superseded by a rate change
    rt.compute_op = -1;
    finish_op(r, i, now);
    advance(r, now);
  }

  void on_channel_finish(std::int32_t ch, TimeNs now) {
    ChannelRt& c = channels_[static_cast<std::size_t>(ch)];
    const std::int32_t count = c.arrived;
    for (std::int32_t m = 0; m < count; ++m) {
      const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
      const OpSpec& op =
          ranks_[static_cast<std::size_t>(mem.rank)].prog->ops()[static_cast<std::size_t>(mem.op)];
      if (op.sms > 0) change_steal(mem.rank, -static_cast<std::int32_t>(op.sms), now);
      finish_op(mem.rank, mem.op, now);
    }
    c.arrived = 0;
    c.dur_max = 0;
    // Members are advanced after the channel is reset: a member's next op may be on this channel.
    for (std::int32_t m = 0; m < count; ++m) {
      advance(members_[static_cast<std::size_t>(c.offset + m)].rank, now);
    }
  }

  void on_wake(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (rt.pending_wake == now) rt.pending_wake = kNever;
    advance(r, now);
  }

  void advance(int r, TimeNs now) {
    current_rank_ = r;
    check_host(r, now);
    const int streams = ranks_[static_cast<std::size_t>(r)].prog->streams();
    for (int s = 0; s < streams; ++s) try_start(r, s, now);
    current_rank_ = -1;
    touch(r, now);
  }

  std::uint8_t category(int r, TimeNs now) {
    const RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    if (rt.compute_op >= 0) return kCatCompute;
    const Program& p = *rt.prog;
    bool pending = false;
    for (int s = 0; s < p.streams(); ++s) {
      const StreamRt& st = stream(r, s);
      if (st.state == kRunning) {
        const int i = p.stream_ops()[static_cast<std::size_t>(s)][static_cast<std::size_t>(st.pos)];
        return static_cast<std::uint8_t>(p.ops()[static_cast<std::size_t>(i)].comm_class);
      }
      if (static_cast<std::size_t>(st.pos) < p.stream_ops()[static_cast<std::size_t>(s)].size())
        pending = true;
    }
    if (!pending) return kCatIdle;
    const auto& s0 = p.stream_ops()[0];
    const StreamRt& st0 = stream(r, 0);
    if (static_cast<std::size_t>(st0.pos) < s0.size() && st0.state == kIdle) {
      const TimeNs t = issue_time(rt, s0[static_cast<std::size_t>(st0.pos)]);
      // Host blocked on a sync (e.g. a P2P waiting for its peer) is waiting for data: a bubble.
      if (t != kNever && t > now) return kCatHostWait;
    }
    return kCatBubble;
  }

  void touch(int r, TimeNs now) {
    RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    RankStats& s = stats_[static_cast<std::size_t>(r)];
    const TimeNs dt = now - rt.last_change;
    switch (rt.cat) {
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
        s.exposed[rt.cat] += dt;
        break;
    }
    rt.last_change = now;
    rt.cat = category(r, now);
  }

  void check_finished(int r) {
    const RankRt& rt = ranks_[static_cast<std::size_t>(r)];
    const Program& p = *rt.prog;
    for (int s = 0; s < p.streams(); ++s) {
      const auto& list = p.stream_ops()[static_cast<std::size_t>(s)];
      const StreamRt& st = stream(r, s);
      if (static_cast<std::size_t>(st.pos) < list.size()) {
        const int i = list[static_cast<std::size_t>(st.pos)];
        const OpSpec& op = p.ops()[static_cast<std::size_t>(i)];
        throw std::logic_error("engine: deadlock: rank " + std::to_string(ids_[static_cast<std::size_t>(r)]) +
                               " stream " + std::to_string(s) + " stuck at op " + std::to_string(i) + " (" +
                               (static_cast<std::size_t>(op.label) < p.labels().size()
                                    ? p.labels()[static_cast<std::size_t>(op.label)]
                                    : std::string("unlabelled")) +
                               ", microbatch " + std::to_string(op.microbatch) + ", chunk " +
                               std::to_string(op.chunk) + ")" +
                               (st.state == kRendezvous ? " waiting for its channel peers" : ""));
      }
    }
  }

  const Workload& w_;
  EngineOptions opt_;
  const std::vector<std::int32_t>& ids_;
  const std::vector<std::int32_t>& channel_size_;
  int max_streams_ = 1;
  int current_rank_ = -1;
  std::vector<RankRt> ranks_;
  std::vector<StreamRt> streams_;
  std::vector<RankStats> stats_;
  std::vector<ChannelRt> channels_;
  std::vector<Member> members_;
  std::vector<TraceSpan> trace_;
  EventQueue queue_;
};

}  // namespace

EngineResult run_engine(const Workload& workload, const EngineOptions& options) {
  workload.validate();
  const int n = workload.ranks();
  if (!options.full_replay && !options.trace && n > 1) {
    const RankSymmetry sym = find_rank_symmetry(workload);
    if (sym.classes() < n) {
      Replay rp{sym.representative, sym.class_channels.data(), &sym.channel_size};
      Engine engine(workload, rp, options);
      EngineResult reduced = engine.run();
      EngineResult out;
      out.iteration = reduced.iteration;
      out.events = reduced.events;
      out.replayed_ranks = sym.classes();
      out.ranks.reserve(static_cast<std::size_t>(n));
      for (std::int32_t cls : sym.class_of) out.ranks.push_back(reduced.ranks[static_cast<std::size_t>(cls)]);
      return out;
    }
  }
  Replay rp;
  rp.ranks.resize(static_cast<std::size_t>(n));
  std::iota(rp.ranks.begin(), rp.ranks.end(), 0);
  rp.channels = workload.rank_channels.data();
  rp.channel_size = &workload.channel_size;
  Engine engine(workload, rp, options);
  EngineResult out = engine.run();
  out.replayed_ranks = n;
  return out;
}

}  // namespace moetwin
