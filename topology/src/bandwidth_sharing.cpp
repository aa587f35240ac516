#include "moetwin/topology/bandwidth_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace moetwin {

BandwidthSharing::BandwidthSharing(std::vector<double> capacities, SharingTolerance tolerance)
    : capacity_(std::move(capacities)), tolerance_(tolerance) {
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    if (!std::isfinite(capacity_[l]) || capacity_[l] <= 0) {
      throw std::invalid_argument("link " + std::to_string(l) + ": capacity: " +
                                  std::to_string(capacity_[l]) + ": expected a finite number of bytes/s > 0");
    }
  }
  if (!std::isfinite(tolerance_.relative) || tolerance_.relative < 0 || tolerance_.relative >= 1e-3) {
    throw std::invalid_argument("sharing tolerance: relative: " + std::to_string(tolerance_.relative) +
                                ": expected 0 <= relative < 1e-3");
  }
  remaining_.assign(capacity_.size(), 0.0);
  weight_.assign(capacity_.size(), 0);
  slot_.assign(capacity_.size(), -1);
}

std::vector<double> BandwidthSharing::solve(const std::vector<std::vector<int>>& routes) {
  std::vector<std::span<const int>> spans(routes.begin(), routes.end());
  std::vector<double> rates;
  solve(spans, rates);
  return rates;
}

void BandwidthSharing::solve(std::span<const std::span<const int>> routes, std::vector<double>& rates) {
  const std::size_t n = routes.size();
  const int links = static_cast<int>(capacity_.size());
  rates.assign(n, 0.0);
  fixed_.assign(n, 0);

  // Links crossed by any route, and their crossing counts.
  touched_.clear();
  for (std::size_t f = 0; f < n; ++f) {
    if (routes[f].empty()) {
      throw std::invalid_argument("flow " + std::to_string(f) + ": route: empty: expected at least one link");
    }
    for (const int l : routes[f]) {
      if (l < 0 || l >= links) {
        // Undo the counts taken so far so the workspace stays clean for the next call.
        for (const int t : touched_) {
          weight_[t] = 0;
        }
        throw std::invalid_argument("flow " + std::to_string(f) + ": link id: " + std::to_string(l) +
                                    ": expected 0 <= id < " + std::to_string(links));
      }
      if (weight_[l] == 0) {
        touched_.push_back(l);
      }
      ++weight_[l];
    }
  }
  std::sort(touched_.begin(), touched_.end());

  // CSR index: for each touched link, the flows crossing it in ascending flow order (a flow crossing a
  // link twice appears twice; the `fixed_` check below skips the second occurrence).
  offset_.assign(touched_.size() + 1, 0);
  for (std::size_t k = 0; k < touched_.size(); ++k) {
    slot_[touched_[k]] = static_cast<int>(k);
    offset_[k + 1] = offset_[k] + static_cast<std::size_t>(weight_[touched_[k]]);
    remaining_[touched_[k]] = capacity_[touched_[k]];
  }
  flows_.resize(offset_.back());
  fill_.assign(offset_.begin(), offset_.end() - 1);
  for (std::size_t f = 0; f < n; ++f) {
    for (const int l : routes[f]) {
      flows_[fill_[static_cast<std::size_t>(slot_[l])]++] = f;
    }
  }

  // Progressive filling with a lazy min-heap of link shares (remaining / unfixed crossings), ties by link
  // id. Fixing flows at the current level never lowers another link's share (the level is the minimum),
  // so shares only grow: an entry whose link's share has grown since it was pushed is re-pushed with the
  // current share when it reaches the top, and an entry that is current there is the true minimum. Each
  // link sits in the heap once. Cost: O(crossings + links * log(links) * re-pushes).
  heap_.clear();
  for (const int l : touched_) {
    heap_.push_back({remaining_[l] / weight_[l], l});
  }
  const auto later = [](const HeapEntry& a, const HeapEntry& b) {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  };
  std::make_heap(heap_.begin(), heap_.end(), later);
  const double relative = tolerance_.relative;
  double level = -1;  // bytes/s: the rate given at the current bottleneck level
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const int l = heap_.back().link;
    const double pushed = heap_.back().share;
    if (weight_[l] == 0) {
      heap_.pop_back();  // all its flows were fixed through other links
      continue;
    }
    const double share = remaining_[l] / weight_[l];
    // Stale (its share grew since it was pushed) and no longer the minimum: re-queue. A grown share that
    // still does not exceed the next entry's (a lower bound of every other current share) is processed
    // now, which saves most re-pushes.
    const bool still_min = heap_.size() == 1 || share < heap_.front().share ||
                           (share == heap_.front().share && l < heap_.front().link);
    if (share > pushed && !still_min) {
      heap_.back().share = share;  // stale: re-queue at its current share
      std::push_heap(heap_.begin(), heap_.end(), later);
      continue;
    }
    heap_.pop_back();
    // Links whose share is within the tolerance of the level saturate at the level itself.
    if (level < 0 || share > level * (1.0 + relative)) {
      level = share;
    }
    const auto k = static_cast<std::size_t>(slot_[l]);
    for (std::size_t i = offset_[k]; i < offset_[k + 1]; ++i) {
      const std::size_t f = flows_[i];
      if (fixed_[f] != 0) {
        continue;
      }
      fixed_[f] = 1;
      rates[f] = level;
      for (const int m : routes[f]) {
        // Snap rounding below zero back to zero (see SharingTolerance).
        remaining_[m] = std::max(0.0, remaining_[m] - level);
        --weight_[m];
      }
    }
  }

  for (const int l : touched_) {
    slot_[l] = -1;
  }
}

}  // namespace moetwin
