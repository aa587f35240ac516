// The engine's future-event list: a 4-ary min-heap ordered by (time, sequence), the ns-3 EventKey
// order (src/core/model/scheduler.h): timestamp first, insertion counter second, so events at the same
// time run first-in-first-out and every run of the same inputs pops the same sequence. (time, sequence)
// is a total order, so the pop sequence is that of any correct priority queue; 4 children per node
// halve the depth of a binary heap, and the 4 siblings share a cache line or two.
// Events are small plain structs (no std::function, no per-event heap allocation).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
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

  // time >= 0 (simulated time starts at 0); logic_error otherwise.
  void push(TimeNs time, std::uint32_t type, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    if (time < 0) throw_negative_time();
    heap_.push_back(Entry{key_of(time, next_seq_++), type, a, b, c});
    sift_up(heap_.size() - 1);
  }

  // The next event (queue not empty).
  SimEvent top() const { return event_of(heap_.front()); }

  // Every queued event in pop order (time, then sequence), without changing the queue.
  void events_in_order(std::vector<SimEvent>& out) const {
    out.clear();
    out.reserve(heap_.size());
    for (const Entry& e : heap_) out.push_back(event_of(e));
    std::sort(out.begin(), out.end(), [](const SimEvent& x, const SimEvent& y) {
      return x.time != y.time ? x.time < y.time : x.seq < y.seq;
    });
  }

  // Moves every queued event `dt` >= 0 ns later and lets `payload(type, a, b, c)` rewrite its payload
  // (the engine's periodic jump: op indices move with their program). A uniform shift keeps the order of
  // the events among themselves, so the heap stays a heap; sequence numbers are kept.
  template <class F>
  void shift(TimeNs dt, F&& payload) {
    if (dt < 0) throw std::logic_error("EventQueue::shift: a negative shift");
    for (Entry& e : heap_) {
      e.key += static_cast<Key>(static_cast<std::uint64_t>(dt)) << 64;
      payload(e.type, e.a, e.b, e.c);
    }
  }

  SimEvent pop() {
    const SimEvent out = event_of(heap_.front());
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return out;
  }

 private:
  // (time, sequence) as one unsigned 128-bit key: time in the high word (>= 0, so its order is kept),
  // sequence in the low word. One compare orders two events, without a branch on equal times.
  __extension__ using Key = unsigned __int128;  // GCC and Clang; -Wpedantic knows it as an extension
  struct Entry {
    Key key;
    std::uint32_t type, a, b, c;
  };
  static_assert(sizeof(Entry) == 32, "four children of a node span two cache lines");
  static Key key_of(TimeNs time, std::uint64_t seq) {
    return (static_cast<Key>(static_cast<std::uint64_t>(time)) << 64) | seq;
  }
  static SimEvent event_of(const Entry& e) {
    return SimEvent{static_cast<TimeNs>(static_cast<std::uint64_t>(e.key >> 64)),
                    static_cast<std::uint64_t>(e.key),
                    e.type,
                    e.a,
                    e.b,
                    e.c};
  }
  [[noreturn]] static void throw_negative_time() {
    throw std::logic_error("EventQueue::push: an event before time 0");
  }

  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i) {
    const Entry moving = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(moving.key < heap_[parent].key)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  // Places `moving` (the old last entry) into the hole at the root.
  void sift_down(const Entry& moving) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      std::size_t child = first;
      Key best = heap_[first].key;
      const std::size_t last = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        const Key k = heap_[c].key;
        const bool smaller = k < best;
        best = smaller ? k : best;
        child = smaller ? c : child;
      }
      if (!(best < moving.key)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moving;
  }

  std::vector<Entry> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace moetwin
