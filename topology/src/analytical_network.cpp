#include "moetwin/topology/analytical_network.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>

#include "flow_timing.hpp"

namespace moetwin {

AnalyticalNetwork::AnalyticalNetwork(SharingTolerance tolerance) : tolerance_(tolerance) {}

std::string AnalyticalNetwork::description() const {
  return "event-driven max-min fair sharing of link bandwidth, integer-ns clock, latency before transfer";
}

std::string AnalyticalNetwork::reference() const {
  return "Bertsekas & Gallager, Data Networks (2nd ed.) 6.5.2 max-min fairness; SimGrid src/kernel/lmm "
         "(Velho et al., ACM TOMACS 23(4), 2013)";
}

NetworkRun AnalyticalNetwork::run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const {
  detail::validate_flows(platform, flows);
  const std::vector<TimeNs> activation = detail::activation_times(platform, flows);
  std::vector<TimeNs> finish(flows.size(), 0);

  // Flows that need bandwidth, in activation order (ties by index: the fixed issue order).
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (detail::is_trivial(flows[i])) {
      finish[i] = activation[i];
    } else {
      pending.push_back(i);
    }
  }
  std::stable_sort(pending.begin(), pending.end(),
                   [&](std::size_t a, std::size_t b) { return activation[a] < activation[b]; });

  std::vector<double> capacities;
  capacities.reserve(platform.links().size());
  for (const NetLink& link : platform.links()) {
    capacities.push_back(link.bandwidth);
  }
  BandwidthSharing sharing(std::move(capacities), tolerance_);

  std::vector<double> remaining(flows.size(), 0.0);  // bytes
  for (const std::size_t i : pending) {
    remaining[i] = flows[i].bytes;
  }
  std::vector<std::size_t> active;  // flow indices, ascending
  // All routes copied once into one contiguous array in activation order: each event's solve walks the
  // active routes, and scattered per-flow vectors made that walk cache-bound.
  std::vector<int> route_links;
  std::vector<std::span<const int>> route_of(flows.size());
  {
    std::size_t total = 0;
    for (const std::size_t i : pending) {
      total += flows[i].route.size();
    }
    route_links.reserve(total);
    for (const std::size_t i : pending) {
      route_links.insert(route_links.end(), flows[i].route.begin(), flows[i].route.end());
    }
    std::size_t at = 0;
    for (const std::size_t i : pending) {
      route_of[i] = std::span<const int>(route_links.data() + at, flows[i].route.size());
      at += flows[i].route.size();
    }
  }
  std::vector<std::span<const int>> routes;
  std::vector<double> rates;  // bytes/s, parallel to `active`
  std::vector<TimeNs> done_at;
  constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  std::size_t next_pending = 0;
  TimeNs now = 0;
  while (next_pending < pending.size() || !active.empty()) {
    if (active.empty()) {
      now = std::max(now, activation[pending[next_pending]]);
    }
    const std::size_t before = active.size();
    while (next_pending < pending.size() && activation[pending[next_pending]] <= now) {
      active.push_back(pending[next_pending++]);
    }
    if (active.size() != before) {
      std::sort(active.begin(), active.end());
    }

    routes.clear();
    for (const std::size_t i : active) {
      routes.push_back(route_of[i]);
    }
    sharing.solve(routes, rates);

    TimeNs next = next_pending < pending.size() ? activation[pending[next_pending]] : kNever;
    done_at.resize(active.size());
    for (std::size_t k = 0; k < active.size(); ++k) {
      assert(rates[k] > 0);
      done_at[k] = now + ceil_ns(remaining[active[k]] / rates[k] * 1e9);
      next = std::min(next, done_at[k]);
    }
    // Progress is guaranteed: either a flow finishes at `next`, or `next` is a later activation.
    const double elapsed = static_cast<double>(next - now) * 1e-9;  // s
    std::size_t kept = 0;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const std::size_t i = active[k];
      bool done = done_at[k] == next;
      if (!done) {
        remaining[i] -= rates[k] * elapsed;
        done = remaining[i] <= tolerance_.relative * flows[i].bytes;
      }
      if (done) {
        remaining[i] = 0;
        finish[i] = next;
      } else {
        active[kept++] = i;
      }
    }
    active.resize(kept);
    now = next;
  }
  return detail::make_run(platform, flows, activation, finish);
}

}  // namespace moetwin
