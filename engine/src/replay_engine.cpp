// The op-by-op replay's (replay_engine.hpp) set-up, event loop and event handlers: hosts issuing ops,
// compute chains, collectives meeting on their channels, finishing ranks. The small helpers the handlers
// and flow_model.cpp / periodic_jump.cpp share stay inline in the header.
#include "replay_engine.hpp"

namespace moetwin::engine_detail {

Engine::Engine(const Workload& w, const Replay& rp, const EngineOptions& o)
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
  std::vector<std::int32_t> lane(static_cast<std::size_t>(n));  // replayed rank -> index among its program's
  std::vector<std::int64_t> lanes;                              // compiled program -> its ranks
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

void Engine::prefetch_for(const SimEvent& ev) const {
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

EngineResult Engine::run() {
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

void Engine::check_host(RankRt& rt, TimeNs now) {
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

void Engine::extend_chain(RankRt& rt, TimeNs now) {
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

void Engine::change_steal(int r, std::int32_t delta, TimeNs now) {
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

bool Engine::try_arrive_early(int r, RankRt& rt, TimeNs now) {
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

void Engine::schedule_start(std::int32_t ch, TimeNs now) {
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

void Engine::try_start(int r, RankRt& rt, int s, TimeNs now) {
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

void Engine::start_channel(std::int32_t ch, TimeNs now) {
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

void Engine::finish_op(int r, RankRt& rt, int s, TimeNs now, TimeNs alone) {
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

void Engine::on_compute_finish(int r, int i, std::uint32_t version, TimeNs now) {
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

void Engine::on_channel_finish(std::int32_t ch, TimeNs now) {
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

std::uint8_t Engine::category(const RankRt& rt, TimeNs now) const {
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

void Engine::check_finished(int r) {
  const RankRt& rt = ranks_[static_cast<std::size_t>(r)];
  if (rt.live == 0) return;
  const int s = __builtin_ctzll(rt.live);
  const Program& p = *rt.prog->prog;
  const int i = head(rt, s).index;
  const OpSpec& op = p.ops()[static_cast<std::size_t>(i)];
  throw std::logic_error(
      "engine: deadlock: rank " + std::to_string(ids_[static_cast<std::size_t>(r)]) + " stream " +
      std::to_string(s) + " stuck at op " + std::to_string(i) + " (" +
      (static_cast<std::size_t>(op.label) < p.labels().size() ? p.labels()[static_cast<std::size_t>(op.label)]
                                                              : std::string("unlabelled")) +
      ", microbatch " + std::to_string(op.microbatch) + ", chunk " + std::to_string(op.chunk) + ")" +
      (rt.streams[s].state == kRendezvous ? " waiting for its channel peers" : ""));
}

}  // namespace moetwin::engine_detail
