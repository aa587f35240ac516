// The flow model of the per-rank replay (engine.hpp, EngineOptions::network = flow): a comm op with a
// NetLoad becomes a transfer after its latency, sharing its members' links max-min fair with the other
// transfers on them.
#include <algorithm>
#include <limits>
#include <vector>

#include "replay_engine.hpp"

namespace moetwin::engine_detail {

bool Engine::start_transfer(std::int32_t ch, const ChannelRt& c, TimeNs now) {
  TimeNs latency = 0;
  std::uint16_t flows = 1;
  scratch_loads_.clear();
  for (std::int32_t m = 0; m < c.arrived; ++m) {
    const Member mem = members_[static_cast<std::size_t>(c.offset + m)];
    const RankRt& rt = ranks_[static_cast<std::size_t>(mem.rank)];
    const Program& prog = *rt.prog->prog;
    const OpSpec& spec = prog.ops()[static_cast<std::size_t>(head(rt, mem.stream).index)];
    if (spec.net_load < 0) continue;
    const NetLoad& load = prog.net_loads()[static_cast<std::size_t>(spec.net_load)];
    latency = std::max(latency, load.latency);
    flows = std::max(flows, load.flows);
    const int rank = ids_[static_cast<std::size_t>(mem.rank)];
    for (int role = 0; role < kNetRoles; ++role) {
      if (load.use[role] > 0) {
        scratch_loads_.push_back(LinkUse{w_.net_link(rank, static_cast<NetRole>(role)), load.use[role]});
      }
    }
  }
  latency = std::min(latency, c.dur_max);
  if (scratch_loads_.empty() || latency >= c.dur_max) return false;
  // One entry per link: members sharing a link (Workload::net_links) add their uses.
  std::sort(scratch_loads_.begin(), scratch_loads_.end(),
            [](const LinkUse& a, const LinkUse& b) { return a.link < b.link; });
  std::int32_t t = 0;
  if (!free_transfers_.empty()) {
    t = free_transfers_.back();
    free_transfers_.pop_back();
  } else {
    t = static_cast<std::int32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& x = transfers_[static_cast<std::size_t>(t)];
  x.channel = ch;
  x.active = false;
  x.work = static_cast<double>(c.dur_max - latency);
  x.rate = 0;
  x.weight = flows;
  x.loads.clear();
  for (const LinkUse& u : scratch_loads_) {
    if (!x.loads.empty() && x.loads.back().link == u.link) {
      x.loads.back().use += u.use;
    } else {
      x.loads.push_back(u);
    }
  }
  ++x.version;
  if (latency == 0) {
    on_transfer_start(t, now);
  } else {
    queue_.push(now + latency, kTransferStart, static_cast<std::uint32_t>(t), 0, x.version);
  }
  return true;
}

void Engine::on_transfer_start(std::int32_t t, TimeNs now) {
  Transfer& x = transfers_[static_cast<std::size_t>(t)];
  x.active = true;
  x.rate = 0;
  x.last_update = now;
  for (const LinkUse& u : x.loads) link_transfers_[static_cast<std::size_t>(u.link)].push_back(t);
  share_links(t, now);
}

void Engine::on_transfer_finish(std::int32_t t, std::uint32_t version, TimeNs now) {
  Transfer& x = transfers_[static_cast<std::size_t>(t)];
  if (!x.active || x.version != version) {  // superseded by a rate change
    ++stale_;
    return;
  }
  x.active = false;
  for (const LinkUse& u : x.loads) {
    std::vector<std::int32_t>& on = link_transfers_[static_cast<std::size_t>(u.link)];
    on.erase(std::find(on.begin(), on.end(), t));
  }
  {
    const ChannelRt& c = channels_[static_cast<std::size_t>(x.channel)];
    if (now - c.start > c.dur_max) ++shared_transfers_;  // it lost time to sharing
  }
  share_links(t, now);  // the transfers it shared links with speed up
  const std::int32_t ch = x.channel;
  x.channel = -1;
  free_transfers_.push_back(t);
  on_channel_finish(ch, now);
}

void Engine::share_links(std::int32_t seed, TimeNs now) {
  ++rate_solves_;
  ++stamp_;
  comp_transfers_.clear();
  comp_links_.clear();
  const auto visit_link = [&](std::int32_t l) {
    if (link_mark_[static_cast<std::size_t>(l)] == stamp_) return;
    link_mark_[static_cast<std::size_t>(l)] = stamp_;
    comp_links_.push_back(l);
  };
  for (const LinkUse& u : transfers_[static_cast<std::size_t>(seed)].loads) visit_link(u.link);
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (const std::int32_t t : link_transfers_[static_cast<std::size_t>(comp_links_[i])]) {
      Transfer& x = transfers_[static_cast<std::size_t>(t)];
      if (x.mark == stamp_) continue;
      x.mark = stamp_;
      comp_transfers_.push_back(t);
      for (const LinkUse& u : x.loads) visit_link(u.link);
    }
  }
  if (comp_transfers_.empty()) return;
  std::sort(comp_transfers_.begin(), comp_transfers_.end());
  std::sort(comp_links_.begin(), comp_links_.end());
  for (const std::int32_t l : comp_links_) {
    link_left_[static_cast<std::size_t>(l)] = 1.0;
    link_weight_[static_cast<std::size_t>(l)] = 0;
  }
  for (const std::int32_t t : comp_transfers_) {
    Transfer& x = transfers_[static_cast<std::size_t>(t)];
    x.work = std::max(0.0, x.work - x.rate * static_cast<double>(now - x.last_update));
    x.last_update = now;
    x.next_rate = -1;  // unfixed
    for (const LinkUse& u : x.loads) link_weight_[static_cast<std::size_t>(u.link)] += u.use * x.weight;
  }
  constexpr double kNoise = 1e-12;  // uses below this count as none (float residue of subtractions)
  std::size_t unfixed = comp_transfers_.size();
  while (unfixed > 0) {
    // The cap first: the level at which the heaviest unfixed transfer reaches rate 1.
    double level = std::numeric_limits<double>::infinity();
    for (const std::int32_t t : comp_transfers_) {
      const Transfer& x = transfers_[static_cast<std::size_t>(t)];
      if (x.next_rate < 0) level = std::min(level, 1.0 / x.weight);
    }
    std::int32_t bottleneck = -1;
    for (const std::int32_t l : comp_links_) {
      const double weight = link_weight_[static_cast<std::size_t>(l)];
      if (weight <= kNoise) continue;
      const double share = link_left_[static_cast<std::size_t>(l)] / weight;
      if (share < level) {
        level = share;
        bottleneck = l;
      }
    }
    level = std::max(level, kNoise);
    for (const std::int32_t t : comp_transfers_) {
      Transfer& x = transfers_[static_cast<std::size_t>(t)];
      if (x.next_rate >= 0) continue;
      // Capped (no link binds first): the transfers that reach rate 1 at this level.
      bool fixed_now = bottleneck < 0 ? x.weight * level >= 1.0 - kNoise : false;
      for (const LinkUse& u : x.loads) fixed_now = fixed_now || u.link == bottleneck;
      if (!fixed_now) continue;
      x.next_rate = std::min(1.0, x.weight * level);
      --unfixed;
      for (const LinkUse& u : x.loads) {
        const auto l = static_cast<std::size_t>(u.link);
        link_left_[l] = std::max(0.0, link_left_[l] - x.next_rate * u.use);
        link_weight_[l] -= u.use * x.weight;
      }
    }
  }
  for (const std::int32_t t : comp_transfers_) {
    Transfer& x = transfers_[static_cast<std::size_t>(t)];
    if (x.next_rate == x.rate) continue;
    x.rate = x.next_rate;
    ++x.version;
    queue_.push(now + ceil_ns(x.work / x.rate), kTransferFinish, static_cast<std::uint32_t>(t), 0, x.version);
  }
}

}  // namespace moetwin::engine_detail
