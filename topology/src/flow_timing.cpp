#include "flow_timing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace moetwin::detail {

void validate_flows(const NetPlatform& platform, const std::vector<FlowSpec>& flows) {
  if (!platform.sealed()) {
    throw std::logic_error("network model: the platform must be sealed before a run");
  }
  const auto links = static_cast<int>(platform.links().size());
  // The message prefix is built only on error: this runs once per flow per model run.
  const auto where = [&flows](std::size_t i) {
    return "flow " + std::to_string(i) + " (" + std::to_string(flows[i].src) + " -> " +
           std::to_string(flows[i].dst) + "): ";
  };
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& flow = flows[i];
    if (!std::isfinite(flow.bytes) || flow.bytes < 0) {
      throw std::invalid_argument(where(i) + "bytes: " + std::to_string(flow.bytes) +
                                  ": expected a finite number >= 0");
    }
    if (flow.start < 0) {
      throw std::invalid_argument(where(i) + "start: " + std::to_string(flow.start) + ": expected >= 0 ns");
    }
    if (flow.route.empty() && flow.src != flow.dst) {
      throw std::invalid_argument(where(i) + "route: empty: expected at least one link when src != dst");
    }
    for (const int l : flow.route) {
      if (l < 0 || l >= links) {
        throw std::invalid_argument(where(i) + "route: link id " + std::to_string(l) +
                                    ": expected 0 <= id < " + std::to_string(links));
      }
    }
  }
}

std::vector<TimeNs> activation_times(const NetPlatform& platform, const std::vector<FlowSpec>& flows) {
  std::vector<TimeNs> activation(flows.size());
  const auto& links = platform.links();
  for (std::size_t i = 0; i < flows.size(); ++i) {
    double latency = 0;  // s
    for (const int l : flows[i].route) {
      latency += links[static_cast<std::size_t>(l)].latency;
    }
    activation[i] = flows[i].start + ceil_ns(latency * 1e9);
  }
  return activation;
}

std::vector<LinkUsage> link_usage(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                                  const std::vector<TimeNs>& activation, const std::vector<TimeNs>& finish) {
  const std::size_t links = platform.links().size();
  std::vector<LinkUsage> usage(links);
  // Bucket the active intervals [from, to) by link (counting sort: linear, and stable in flow order).
  std::vector<std::size_t> offset(links + 1, 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    for (const int l : flows[i].route) {
      usage[static_cast<std::size_t>(l)].bytes += flows[i].bytes;
      if (finish[i] > activation[i]) {
        ++offset[static_cast<std::size_t>(l) + 1];
      }
    }
  }
  for (std::size_t l = 0; l < links; ++l) {
    offset[l + 1] += offset[l];
  }
  std::vector<std::pair<TimeNs, TimeNs>> intervals(offset.back());
  std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (finish[i] > activation[i]) {
      for (const int l : flows[i].route) {
        intervals[fill[static_cast<std::size_t>(l)]++] = {activation[i], finish[i]};
      }
    }
  }
  // Per link: sort by start, then measure the union.
  for (std::size_t l = 0; l < links; ++l) {
    if (offset[l] == offset[l + 1]) {
      continue;
    }
    const auto first = intervals.begin() + static_cast<std::ptrdiff_t>(offset[l]);
    const auto last = intervals.begin() + static_cast<std::ptrdiff_t>(offset[l + 1]);
    if (!std::is_sorted(first, last)) {
      std::sort(first, last);
    }
    TimeNs from = first->first;
    TimeNs to = first->second;
    TimeNs busy = 0;
    for (auto it = first + 1; it != last; ++it) {
      if (it->first > to) {
        busy += to - from;
        from = it->first;
      }
      to = std::max(to, it->second);
    }
    usage[l].busy = busy + (to - from);
  }
  return usage;
}

NetworkRun make_run(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                    const std::vector<TimeNs>& activation, const std::vector<TimeNs>& finish) {
  NetworkRun run;
  run.flows.resize(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    run.flows[i].finish = finish[i];
    run.makespan = std::max(run.makespan, finish[i]);
  }
  run.links = link_usage(platform, flows, activation, finish);
  return run;
}

}  // namespace moetwin::detail
