// Max-min fair bandwidth sharing: the solver behind the analytical network model, kept as its own
// component with explicit float tolerances (STYLE.md #6; after SimGrid src/kernel/lmm/System.hpp, whose
// saturation loop and precision handling this follows without the weights and bounds we do not need).
//
// Progressive filling (water-filling): the link with the smallest fair share (remaining capacity / number
// of unfixed crossings) is the bottleneck; all unfixed flows crossing it get that share, which is charged
// to every link of their routes; repeat until every flow is fixed (links kept in a min-heap by share). The
// result is the unique max-min fair allocation (Bertsekas & Gallager, Data Networks, 2nd ed., 6.5.2).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace moetwin {

struct SharingTolerance {
  // Relative epsilon, dimensionless. Two uses:
  //  - links whose fair share is within a factor (1 + relative) of the round's smallest share saturate in
  //    the same round, so float noise cannot split one bottleneck level into two (SimGrid's
  //    double_equals(..., maxmin/precision) in lmm::System::solve);
  //  - a remaining capacity that rounding drives below zero is snapped back to zero (SimGrid's
  //    double_update snaps tiny values the same way).
  // 1e-9: far above the rounding of a few thousand double subtractions (~1e-13 relative), far below
  // anything a 3% model comparison can see.
  double relative = 1e-9;
};

class BandwidthSharing {
 public:
  // capacities: bytes/s per link id, each finite and > 0 (std::invalid_argument otherwise).
  explicit BandwidthSharing(std::vector<double> capacities, SharingTolerance tolerance = {});

  std::size_t link_count() const { return capacity_.size(); }
  const SharingTolerance& tolerance() const { return tolerance_; }

  // Max-min fair rates in bytes/s. routes[i] lists the link ids flow i crosses; a link listed twice is
  // crossed twice and charged twice the flow's rate. Every route must be non-empty with ids in range
  // (std::invalid_argument otherwise). `rates` is resized to routes.size(). Deterministic: links are
  // visited by id and flows by index. Reuses internal buffers, so one solver is not thread-safe.
  void solve(std::span<const std::span<const int>> routes, std::vector<double>& rates);

  // Convenience for tests and one-off callers.
  std::vector<double> solve(const std::vector<std::vector<int>>& routes);

 private:
  std::vector<double> capacity_;  // bytes/s by link id
  SharingTolerance tolerance_;
  // Workspace, sized by link id or by flow index, reused across solve() calls.
  std::vector<double> remaining_;    // bytes/s left on each link in the current round
  std::vector<int> weight_;          // unfixed crossings of each link
  std::vector<int> slot_;            // position of a link in touched_, -1 if untouched
  std::vector<int> touched_;         // link ids crossed by some route, sorted by id
  std::vector<std::size_t> offset_;  // CSR: flows crossing touched_[k] are flows_[offset_[k]..offset_[k+1])
  std::vector<std::size_t> flows_;   // flow indices, ascending within one link
  std::vector<std::size_t> fill_;    // CSR fill cursor
  std::vector<char> fixed_;          // flow has its rate
  struct HeapEntry {
    double share;  // bytes/s: remaining / unfixed crossings when pushed (<= the current share)
    int link;
  };
  std::vector<HeapEntry> heap_;  // lazy min-heap by (share, link)
};

}  // namespace moetwin
