#include "moetwin/engine/engine.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine_internal.hpp"
#include "moetwin/engine/symmetry.hpp"
#include "replay_engine.hpp"

namespace moetwin {

const char* to_string(NetworkMode mode) {
  return mode == NetworkMode::flow ? "flow" : "closed-form";
}

std::optional<NetworkMode> network_mode_from_string(const std::string& text) {
  if (text == "closed-form") return NetworkMode::closed_form;
  if (text == "flow") return NetworkMode::flow;
  return std::nullopt;
}

TimeNs RankStats::exposed_total() const {
  TimeNs t = 0;
  for (TimeNs e : exposed) t += e;
  return t;
}

TimeNs RankStats::accounted() const {
  return compute + exposed_total() + host_wait + bubble + idle;
}

namespace engine_detail {

EngineProgram compile(const Program& p) {
  EngineProgram e;
  e.prog = &p;
  e.size = p.size();
  const int streams = p.streams();
  if (streams > kMaxStreams) throw std::logic_error("engine: more than 64 streams in a program");
  e.stream_begin.assign(static_cast<std::size_t>(streams), 0);
  e.stream_count.assign(static_cast<std::size_t>(streams), 0);
  std::int32_t off = 0;
  for (int s = 0; s < streams; ++s) {
    const std::int32_t n = p.stream_sizes()[static_cast<std::size_t>(s)];
    if (static_cast<std::uint32_t>(n) >= kDepPosMask) throw std::logic_error("engine: stream too long");
    e.stream_begin[static_cast<std::size_t>(s)] = off;
    e.stream_count[static_cast<std::size_t>(s)] = n;
    if (n > 0) e.stream_mask |= std::uint64_t{1} << s;
    off += n;
  }
  e.ops.resize(static_cast<std::size_t>(off));
  const auto& ops = p.ops();
  const auto& pos = p.pos_in_stream();
  const auto& prefix = p.issue_prefix();
  const auto record = [&](std::size_t i) -> EngineOp& {
    return e.ops[static_cast<std::size_t>(e.stream_begin[ops[i].stream] + pos[i])];
  };
  // One pass in program order. Every op whose record gets kOpWatched is at or before the op that makes it
  // watched (a dependency is an earlier op; a sync watches itself and, if a device sync, each stream's
  // last op issued so far), so its record is already written when the flag is set.
  std::vector<std::int32_t> issued(static_cast<std::size_t>(streams), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& o = ops[i];
    EngineOp& r = record(i);
    r.issue_prefix = prefix[i];
    r.dur = o.var_slot >= 0 ? -static_cast<TimeNs>(o.var_slot) - 1 : o.duration;
    r.index = static_cast<std::int32_t>(i);
    for (int k = 0; k < 2; ++k) {
      const int d = o.deps[k];
      if (d == kNoOp) continue;
      const auto du = static_cast<std::size_t>(d);
      r.dep[k] = (static_cast<std::uint32_t>(ops[du].stream) << kDepPosBits) |
                 (static_cast<std::uint32_t>(pos[du]) + 1u);
      // Another stream's op waits for it.
      if (ops[du].stream != o.stream) record(du).flags |= kOpWatched;
    }
    r.sms = o.sms;
    r.flags = o.kind == OpKind::comm ? kOpComm : 0;
    r.channel = static_cast<std::uint8_t>(static_cast<unsigned>(o.channel) |
                                          (static_cast<unsigned>(o.comm_class) << 4));
    ++issued[o.stream];
    if (o.sync != HostSync::none) {
      r.flags |= kOpWatched;  // the host waits for it
      SyncPoint sp;
      sp.index = r.index;
      sp.stream = o.stream;
      sp.pos = pos[i];
      sp.device = o.sync == HostSync::device;
      sp.issue_prefix = r.issue_prefix;
      if (sp.device) {
        sp.drain = static_cast<std::int64_t>(e.drain.size());
        e.drain.insert(e.drain.end(), issued.begin(), issued.end());
        // A device sync waits for every stream's last op issued before it.
        for (int s = 0; s < streams; ++s) {
          const std::int32_t drained = issued[static_cast<std::size_t>(s)];
          if (drained > 0)
            e.ops[static_cast<std::size_t>(e.stream_begin[static_cast<std::size_t>(s)] + drained - 1)]
                .flags |= kOpWatched;
        }
      }
      e.syncs.push_back(sp);
    }
  }
  SyncPoint end;
  end.index = e.size;
  e.syncs.push_back(end);
  return e;
}

}  // namespace engine_detail

namespace {

using namespace engine_detail;  // NOLINT(google-build-using-namespace): the replay engine

// The relative spread of a var slot's durations over the ranks of its program (max - min over max) up to
// which LaneMode::near_balanced replays them as lanes. Measured (docs/2026-12-04-periodic-steady-state.md):
// token remainders under balanced routing spread a slot by 0.04-0.3% (Kimi-K2: 384 experts, every EP
// rank a token apart) and the shipped sweep's replays by at most 9.2%, and there lanes keep in step (the
// sweep 20.3 against 26.3 CPU-s rank by rank); zipf 1.0 routing spreads them by 95%, and there lanes
// split and restart, 1.5x slower than rank by rank (docs/2026-12-04-skew-lanes.md).
constexpr double kLaneSpread = 0.10;
// Splits of a lane replay under LaneMode::always (each a restart from time 0).
constexpr int kMaxLaneSplits = 64;

// The largest relative spread of one var slot's durations over the replayed ranks of its program
// (LaneMode::near_balanced), over the programs with two or more ranks; -1 when there is none.
double lane_spread(const Workload& w, const Replay& rp) {
  std::vector<std::int32_t> first(w.programs.size(), -1);  // program -> its first replayed rank
  std::vector<TimeNs> lo, hi;                              // per program, per slot (flattened)
  std::vector<std::int64_t> base(w.programs.size(), -1);   // program -> offset into lo/hi
  bool shared = false;
  w.var_durations.with_data([&](const auto* durations) {
    for (const std::int32_t r : rp.ranks) {
      const auto ru = static_cast<std::size_t>(r);
      const auto p = static_cast<std::size_t>(w.rank_program[ru]);
      const int slots = w.programs[p].var_slots();
      const auto* d = durations + w.var_offset[ru];
      if (first[p] < 0) {
        first[p] = r;
        base[p] = static_cast<std::int64_t>(lo.size());
        lo.insert(lo.end(), d, d + slots);
        hi.insert(hi.end(), d, d + slots);
        continue;
      }
      shared = true;
      TimeNs* l = lo.data() + base[p];
      TimeNs* h = hi.data() + base[p];
      for (int s = 0; s < slots; ++s) {
        l[s] = std::min<TimeNs>(l[s], d[s]);
        h[s] = std::max<TimeNs>(h[s], d[s]);
      }
    }
  });
  if (!shared) return -1;
  double spread = 0;
  for (std::size_t k = 0; k < lo.size(); ++k) {
    if (hi[k] > 0) spread = std::max(spread, static_cast<double>(hi[k] - lo[k]) / static_cast<double>(hi[k]));
  }
  return spread;
}

// Lanes pay off where some program has two or more ranks to replay (engine.hpp, EngineOptions::lanes).
bool lanes_apply(const Workload& w, const Replay& rp, const EngineOptions& o) {
  if (o.lanes == LaneMode::off || !o.shortcuts || o.trace || o.full_replay ||
      o.network != NetworkMode::closed_form)
    return false;
  const double spread = lane_spread(w, rp);
  if (spread < 0) return false;
  return o.lanes == LaneMode::always || spread <= kLaneSpread;
}

// The replay of `rp`: as lanes where they apply and agree, else rank by rank.
EngineResult replay(const Workload& w, const Replay& rp, const EngineOptions& o) {
  std::string divergence;
  if (lanes_apply(w, rp, o)) {
    // Near-balanced stages replay as lanes without a split or not at all: in the shipped sweep every lane
    // replay that kept in step did so without one (310 of 310), and each of the 65 that diverged diverged
    // again after its split, then ran rank by rank (docs/2026-12-04-periodic-steady-state.md).
    const int max_splits = o.lanes == LaneMode::always ? kMaxLaneSplits : 0;
    if (std::optional<EngineResult> lanes = run_lanes(w, rp, max_splits, &divergence))
      return std::move(*lanes);
  }
  Engine engine(w, rp, o);
  EngineResult out = engine.run();
  out.lane_divergence = std::move(divergence);
  return out;
}

}  // namespace

EngineResult run_engine(const Workload& workload, const EngineOptions& options) {
  workload.validate();
  const int n = workload.ranks();
  // Ranks that share a link (Workload::net_links) load each other's links: the representatives of a reduced
  // replay would not see that, so the flow model replays every rank then.
  const bool shared_links = options.network == NetworkMode::flow && !workload.net_links.empty();
  if (!options.full_replay && !options.trace && !shared_links && n > 1) {
    const RankSymmetry sym = find_rank_symmetry(workload);
    if (sym.classes() < n) {
      Replay rp{sym.representative, sym.class_channels.data(), &sym.channel_size};
      EngineResult reduced = replay(workload, rp, options);
      EngineResult out;
      out.iteration = reduced.iteration;
      out.events = reduced.events;
      out.stale_events = reduced.stale_events;
      out.rate_solves = reduced.rate_solves;
      out.shared_transfers = reduced.shared_transfers;
      out.replayed_ranks = sym.classes();
      out.lane_groups = reduced.lane_groups;
      out.lane_splits = reduced.lane_splits;
      out.lane_divergence = std::move(reduced.lane_divergence);
      out.periods_skipped = reduced.periods_skipped;
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
  EngineResult out = replay(workload, rp, options);
  out.replayed_ranks = n;
  return out;
}

}  // namespace moetwin
