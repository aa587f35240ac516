// The periodic steady state of the per-rank replay (engine.hpp, EngineOptions::periodic; the mechanism
// and why it is exact: replay_engine.hpp, "Periodic steady state", and
// docs/2026-12-04-periodic-steady-state.md).
#include <algorithm>
#include <set>
#include <vector>

#include "replay_engine.hpp"

namespace moetwin::engine_detail {

void Engine::init_periodic() {
  const RankRt& rt = ranks_[0];
  const EngineProgram& p = *rt.prog;
  const std::vector<OpSpec>& specs = p.prog->ops();
  const EngineOp* rec = p.ops.data();  // stream 0's records come first
  // The first forward op of each (microbatch, chunk): forward ops of one microbatch may be interleaved
  // with another's backward (A2A overlap), which would put several anchors in one microbatch.
  std::set<std::uint64_t> seen;
  for (std::int32_t pos = 0; pos < p.stream_count[0]; ++pos) {
    const OpSpec& op = specs[static_cast<std::size_t>(rec[pos].index)];
    if (op.phase != OpPhase::forward || op.microbatch < 0) continue;
    const std::uint64_t key =
        static_cast<std::uint64_t>(op.microbatch) << 16 | static_cast<std::uint16_t>(op.chunk);
    if (seen.insert(key).second) anchors_.push_back(pos);
  }
  const std::size_t bytes = ranks_.size() * (sizeof(RankRt) + sizeof(RankStats) + sizeof(RankShift)) +
                            streams_.size() * (sizeof(StreamRt) + sizeof(std::int32_t)) +
                            channels_.size() * sizeof(ChannelRt) + members_.size() * sizeof(Member) +
                            ranks_.size() * 4 * sizeof(SimEvent);
  ring_capacity_ = std::min(kPeriodRingMax, kPeriodRingBytes / std::max<std::size_t>(bytes, 1));
  if (ring_capacity_ < 2 || anchors_.size() < 4) {
    anchors_.clear();
    return;
  }
  ring_.resize(ring_capacity_);
  shift_.resize(ranks_.size());
  pos_shift_.resize(streams_.size());
  next_anchor_pos_ = anchors_.front();
}

void Engine::seek_next_anchor() {
  const std::int32_t pos = ranks_[0].streams[0].pos;
  while (next_anchor_ < anchors_.size() && anchors_[next_anchor_] <= pos) ++next_anchor_;
  next_anchor_pos_ = next_anchor_ < anchors_.size() ? anchors_[next_anchor_] : kNoAnchor;
}

void Engine::on_anchor(TimeNs now) {
  seek_next_anchor();
  const std::int32_t pos = ranks_[0].streams[0].pos;
  queue_sorted_ = false;
  for (std::size_t d = 1; d <= ring_size_; ++d) {
    const PeriodSnapshot& a = ring_[(ring_head_ + ring_capacity_ - d) % ring_capacity_];
    if (!first_rank_repeats(a.streams[0].pos)) continue;
    if (!match(a, now)) continue;
    const std::int64_t periods = periods_ahead(a, now);
    if (periods > 0) {
      jump(a, now, periods);
      ring_size_ = 0;
      anchor_positions_.clear();
      return;
    }
    // Periodic now, but the ops ahead stop repeating within a period (the warm-up's forwards repeat one
    // another until the first backward; durations that alternate between microbatches repeat only every
    // second one): a longer period may still repeat.
  }
  // A snapshot here is worth its copy only where the first rank's ops already repeat since an earlier
  // anchor (a steady state forming): under skewed routing no microbatch repeats another and the replay
  // takes none (the copies and the queue's sort were 7.5% of a zipf 1.0 replay at 256 GPUs). A state
  // that becomes periodic is still matched, from the first anchor after it shows.
  const bool forming = std::any_of(anchor_positions_.rbegin(), anchor_positions_.rend(),
                                   [&](std::int32_t from) { return first_rank_repeats(from); });
  if (anchor_positions_.size() == kPeriodRingMax) anchor_positions_.erase(anchor_positions_.begin());
  anchor_positions_.push_back(pos);
  if (!forming) return;
  if (!queue_sorted_) queue_.events_in_order(queue_now_);
  PeriodSnapshot& s = ring_[ring_head_];
  ring_head_ = (ring_head_ + 1) % ring_capacity_;
  ring_size_ = std::min(ring_size_ + 1, ring_capacity_);
  s.time = now;
  s.ranks = ranks_;
  s.streams = streams_;
  s.channels = channels_;
  s.members = members_;
  s.stats = stats_;
  s.queue.swap(queue_now_);
  const auto c = counters();
  for (std::size_t k = 0; k < c.size(); ++k) s.counters[k] = *c[k];
}

bool Engine::match(const PeriodSnapshot& a, TimeNs now) {
  const TimeNs dt = now - a.time;
  if (dt <= 0) return false;
  const auto ms = static_cast<std::size_t>(max_streams_);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankRt& x = a.ranks[r];
    const RankRt& y = ranks_[r];
    if (x.live != y.live) return false;
    if (x.cat != y.cat) return false;
    if (x.stolen != y.stolen) return false;
    if (y.last_change != x.last_change + dt) return false;
    if (!shifted(x.pending_wake, y.pending_wake, dt)) return false;
    if (!shifted(x.arrive_at, y.arrive_at, dt)) return false;
    if (y.arrive_at != kNever && (x.arrive_channel != y.arrive_channel || x.arrive_member != y.arrive_member))
      return false;
    std::int32_t index = 0;
    for (std::size_t s = 0; s < ms; ++s) {
      const StreamRt& xs = a.streams[r * ms + s];
      const StreamRt& ys = streams_[r * ms + s];
      const std::int32_t moved = ys.pos - xs.pos;
      pos_shift_[r * ms + s] = moved;
      if (moved < 0 || xs.state != ys.state) return false;
      if (ys.state == kRunning && (xs.cls != ys.cls || ys.start != xs.start + dt)) return false;
      if ((y.live >> s & 1u) == 0) continue;  // done in both (live is equal): positions equal too
      if (moved == 0) {
        // A stream that waits through the period (a DP stream until the last backward): periods_ahead
        // bounds how long it keeps waiting.
        if (ys.state != kIdle) return false;
        continue;
      }
      const std::int32_t d = ys.head_index - xs.head_index;
      if (d <= 0 || (index != 0 && d != index)) return false;
      index = d;
    }
    if (index == 0) return false;  // no progress: not a steady state
    RankShift& sh = shift_[r];
    sh.index = index;
    const std::int32_t size = y.prog->size;
    if (y.seg_end >= size) {
      if (x.seg_end < size || x.seg_base != y.seg_base || x.seg_start != y.seg_start || x.sync != y.sync)
        return false;
      if (y.seg_base + y.prog->prog->issue_prefix().back() > now) return false;
      sh.host_done = true;
      sh.sync = 0;
      sh.issue = 0;
    } else {
      sh.host_done = false;
      sh.sync = y.sync - x.sync;
      if (sh.sync <= 0 || y.seg_start != x.seg_start + index || y.seg_end != x.seg_end + index) return false;
      sh.issue = dt - (y.seg_base - x.seg_base);
    }
    if ((x.compute_op < 0) != (y.compute_op < 0)) return false;
    if (y.compute_op >= 0) {
      const std::int32_t moved0 = pos_shift_[r * ms];
      if (y.compute_op != x.compute_op + index || y.chain_pos != x.chain_pos + moved0 ||
          y.chain_last != x.chain_last + moved0 || y.work_left != x.work_left || y.rate != x.rate ||
          y.last_update != x.last_update + dt) {
        return false;
      }
    }
  }
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    const ChannelRt& x = a.channels[c];
    const ChannelRt& y = channels_[c];
    if (x.arrived != y.arrived) return false;
    if (y.arrived == 0) continue;
    if (x.dur_max != y.dur_max) return false;
    for (std::int32_t m = 0; m < y.arrived; ++m) {
      const Member& xm = a.members[static_cast<std::size_t>(y.offset + m)];
      const Member& ym = members_[static_cast<std::size_t>(y.offset + m)];
      if (xm.rank != ym.rank || xm.stream != ym.stream || ym.arrival != xm.arrival + dt) return false;
    }
  }
  if (a.queue.size() != queue_.size()) return false;
  if (!queue_sorted_) {
    queue_.events_in_order(queue_now_);
    queue_sorted_ = true;
  }
  for (std::size_t k = 0; k < queue_now_.size(); ++k) {
    const SimEvent& x = a.queue[k];
    const SimEvent& y = queue_now_[k];
    if (y.time != x.time + dt || x.type != y.type || x.a != y.a) return false;
    switch (y.type) {
      case kComputeFinish: {
        const RankShift& sh = shift_[y.a];
        if (y.b != x.b + static_cast<std::uint32_t>(sh.index) ||
            y.c - ranks_[y.a].version != x.c - a.ranks[y.a].version)
          return false;
        break;
      }
      case kChannelStart:
        if (x.b != y.b || y.c - channels_[y.a].start_version != x.c - a.channels[y.a].start_version)
          return false;
        break;
      default:
        if (x.b != y.b || x.c != y.c) return false;
        break;
    }
  }
  return true;
}

bool Engine::first_rank_repeats(std::int32_t from) const {
  const RankRt& rt = ranks_[0];
  const EngineProgram& p = *rt.prog;
  const std::int32_t head = rt.streams[0].pos;
  const std::int32_t moved = head - from;
  if (moved <= 0) return false;
  const EngineOp* rec = p.ops.data() + p.stream_begin[0];
  const std::int32_t n = p.stream_count[0];
  for (std::int32_t q = from; q < head + 2; ++q) {
    if (q + moved >= n) return false;
    const EngineOp& x = rec[q];
    const EngineOp& y = rec[q + moved];
    if (x.sms != y.sms || x.flags != y.flags || x.channel != y.channel || duration(rt, x) != duration(rt, y))
      return false;
  }
  return true;
}

bool Engine::repeats(std::size_t r, const RankRt& rt, const EngineOp& x, const EngineOp& y) const {
  const RankShift& sh = shift_[r];
  if (y.index != x.index + sh.index || y.sms != x.sms || y.flags != x.flags || y.channel != x.channel ||
      duration(rt, x) != duration(rt, y)) {
    return false;
  }
  if (!sh.host_done && y.issue_prefix != x.issue_prefix + sh.issue) return false;
  for (int k = 0; k < 2; ++k) {
    if ((x.dep[k] == 0) != (y.dep[k] == 0)) return false;
    if (x.dep[k] == 0) continue;
    const std::uint32_t stream = x.dep[k] >> kDepPosBits;
    if (y.dep[k] >> kDepPosBits != stream) return false;
    const std::int32_t moved = pos_shift_[r * static_cast<std::size_t>(max_streams_) + stream];
    if ((y.dep[k] & kDepPosMask) != (x.dep[k] & kDepPosMask) + static_cast<std::uint32_t>(moved))
      return false;
  }
  return true;
}

bool Engine::sync_repeats(std::size_t r, const EngineProgram& p, const SyncPoint& x,
                          const SyncPoint& y) const {
  const RankShift& sh = shift_[r];
  const auto ms = static_cast<std::size_t>(max_streams_);
  if (y.index != x.index + sh.index || y.stream != x.stream || y.device != x.device ||
      y.issue_prefix != x.issue_prefix + sh.issue ||
      y.pos != x.pos + pos_shift_[r * ms + static_cast<std::size_t>(x.stream)]) {
    return false;
  }
  if (!x.device) return true;
  for (std::size_t s = 0; s < p.stream_begin.size(); ++s) {
    if (p.drain[static_cast<std::size_t>(y.drain) + s] !=
        p.drain[static_cast<std::size_t>(x.drain) + s] + pos_shift_[r * ms + s]) {
      return false;
    }
  }
  return true;
}

std::int64_t Engine::periods_ahead(const PeriodSnapshot& a, TimeNs now) const {
  const auto ms = static_cast<std::size_t>(max_streams_);
  std::int64_t periods = kNoLimit;
  for (std::size_t r = 0; r < ranks_.size() && periods > 0; ++r) {
    const RankRt& y = ranks_[r];
    const RankShift& sh = shift_[r];
    const EngineProgram& p = *y.prog;
    for (std::size_t s = 0; s < ms && periods > 0; ++s) {
      if ((y.live >> s & 1u) == 0) continue;
      const std::int32_t moved = pos_shift_[r * ms + s];
      if (moved == 0) {
        periods = std::min(periods, waiting_periods(r, y, static_cast<int>(s), now));
        continue;
      }
      const EngineOp* rec = p.ops.data() + p.stream_begin[s];
      const std::int32_t n = p.stream_count[s];
      const std::int32_t from = a.streams[r * ms + s].pos;
      const std::int32_t head = y.streams[s].pos;
      std::int32_t q = from;  // first record that does not repeat a period later
      while (q + moved < n && repeats(r, y, rec[q], rec[q + moved])) ++q;
      std::int64_t reach = 2;
      if (s == 0) {
        // The farthest a chain started at a head in [from, head] reads: to the next stop.
        std::int32_t stop = -1;
        std::int64_t gap = 0;
        for (std::int32_t pos = q + moved - 1; pos >= from; --pos) {
          if ((rec[pos].flags & (kOpWatched | kOpComm)) != 0) stop = pos;
          if (pos > head) continue;
          if (stop < 0) return 0;
          gap = std::max<std::int64_t>(gap, stop - pos);
        }
        reach += gap;
      }
      const std::int64_t room = static_cast<std::int64_t>(q) + moved - reach - head;
      periods = std::min(periods, room / moved);
    }
    if (!sh.host_done) {
      const std::int32_t from = a.ranks[r].sync;
      const auto count = static_cast<std::int32_t>(p.syncs.size());
      std::int32_t q = from;
      while (q + sh.sync < count && sync_repeats(r, p, p.syncs[static_cast<std::size_t>(q)],
                                                 p.syncs[static_cast<std::size_t>(q + sh.sync)]))
        ++q;
      // check_host reads the current sync point and the next.
      const std::int64_t room = static_cast<std::int64_t>(q) + sh.sync - 2 - y.sync;
      periods = std::min(periods, room / sh.sync);
    }
  }
  return std::max<std::int64_t>(periods, 0);
}

std::int64_t Engine::waiting_periods(std::size_t r, const RankRt& rt, int s, TimeNs now) const {
  const RankShift& sh = shift_[r];
  const EngineOp& op = head(rt, s);
  if (op.index > rt.seg_end) return (op.index - 1 - rt.seg_end) / sh.index - 1;
  if (issue_time(rt, op) > now) return 0;
  std::int64_t periods = 0;
  for (const std::uint32_t dep : op.dep) {
    if (dep == 0 || done(rt, dep)) continue;
    const std::uint32_t stream = dep >> kDepPosBits;
    const std::int32_t moved = pos_shift_[r * static_cast<std::size_t>(max_streams_) + stream];
    if (moved == 0) return kNoLimit;  // waits on a stream that waits too (bounded there)
    periods = std::max<std::int64_t>(
        periods, (static_cast<std::int64_t>(dep & kDepPosMask) - 1 - rt.streams[stream].pos) / moved - 1);
  }
  return periods;
}

void Engine::jump(const PeriodSnapshot& a, TimeNs now, std::int64_t periods) {
  const TimeNs dt = (now - a.time) * periods;
  const auto ms = static_cast<std::size_t>(max_streams_);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    RankRt& y = ranks_[r];
    const RankShift& sh = shift_[r];
    const auto index = static_cast<std::int32_t>(sh.index * periods);
    for (std::size_t s = 0; s < ms; ++s) {
      StreamRt& st = streams_[r * ms + s];
      const std::int32_t moved = pos_shift_[r * ms + s];
      if (moved == 0) continue;
      st.pos += static_cast<std::int32_t>(moved * periods);
      st.head_index += index;
      if (st.state == kRunning) st.start += dt;
    }
    if (!sh.host_done) {
      y.seg_base += (now - a.time - sh.issue) * periods;
      y.seg_start += index;
      y.seg_end += index;
      y.sync += static_cast<std::int32_t>(sh.sync * periods);
    }
    if (y.compute_op >= 0) {
      const auto moved0 = static_cast<std::int32_t>(pos_shift_[r * ms] * periods);
      y.compute_op += index;
      y.chain_pos += moved0;
      y.chain_last += moved0;
      y.last_update += dt;
    }
    if (y.pending_wake != kNever) y.pending_wake += dt;
    if (y.arrive_at != kNever) y.arrive_at += dt;
    y.last_change += dt;
    RankStats& b = stats_[r];
    const RankStats& x = a.stats[r];
    const auto more = [periods](TimeNs& v, TimeNs before) { v += (v - before) * periods; };
    static_assert(sizeof(RankStats) == 18 * sizeof(TimeNs), "a new RankStats field needs its jump here");
    more(b.compute, x.compute);
    more(b.host_wait, x.host_wait);
    more(b.bubble, x.bubble);
    more(b.idle, x.idle);
    more(b.finish, x.finish);
    more(b.ops_run, x.ops_run);
    for (int k = 0; k < kCommClasses; ++k) {
      more(b.exposed[k], x.exposed[k]);
      more(b.comm_total[k], x.comm_total[k]);
      more(b.shared_delay[k], x.shared_delay[k]);
    }
  }
  for (const ChannelRt& c : channels_) {
    for (std::int32_t m = 0; m < c.arrived; ++m)
      members_[static_cast<std::size_t>(c.offset + m)].arrival += dt;
  }
  queue_.shift(dt, [&](std::uint32_t type, std::uint32_t rank, std::uint32_t& b, std::uint32_t&) {
    if (type == kComputeFinish) b += static_cast<std::uint32_t>(shift_[rank].index * periods);
  });
  const auto c = counters();
  for (std::size_t k = 0; k < c.size(); ++k)
    *c[k] += (*c[k] - a.counters[k]) * static_cast<std::uint64_t>(periods);
  periods_skipped_ += static_cast<std::uint64_t>(periods);
  seek_next_anchor();
}

}  // namespace moetwin::engine_detail
