// The engine's future-event list: a 4-ary min-heap ordered by (time, sequence), the ns-3 EventKey
// order (src/core/model/scheduler.h): timestamp first, insertion counter second, so events at the same
// time run first-in-first-out and every run of the same inputs pops the same sequence. (time, sequence)
// is a total order, so the pop sequence is that of any correct priority queue; 4 children per node
// halve the depth of a binary heap, and the 4 siblings share a cache line or two.
// Events are small plain structs (no std::function, no per-event heap allocation).
#pragma once

#include <cstdint>
#include <vector>

#include "moetwin/common/time.hpp"

namespace moetwin {

struct SimEvent {
  TimeNs time = 0;
  std::uint64_t seq = 0;   // insertion order, assigned by the queue
  std::uint32_t type = 0;  // meaning defined by the user (the engine: finish, wake, ...)
  std::uint32_t a = 0;     // payload, e.g. rank or channel id
  std::uint32_t b = 0;     // payload, e.g. op index
  std::uint32_t c = 0;     // payload, e.g. version
};

class EventQueue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_seq_; }

  void push(TimeNs time, std::uint32_t type, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    heap_.push_back(SimEvent{time, next_seq_++, type, a, b, c});
    sift_up(heap_.size() - 1);
  }

  const SimEvent& top() const { return heap_.front(); }

  SimEvent pop() {
    SimEvent out = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return out;
  }

 private:
  static bool before(const SimEvent& x, const SimEvent& y) {
    return x.time < y.time || (x.time == y.time && x.seq < y.seq);
  }
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i) {
    SimEvent moving = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(moving, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  void sift_down(std::size_t i) {
    const std::size_t n = heap_.size();
    SimEvent moving = heap_[i];
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (before(heap_[c], heap_[child])) child = c;
      }
      if (!before(heap_[child], moving)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moving;
  }

  std::vector<SimEvent> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace moetwin
