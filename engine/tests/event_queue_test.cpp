// EventQueue pops in (time, insertion order): against a sorted reference, with many equal times.
#include "moetwin/engine/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace moetwin {
namespace {

TEST(EventQueue, PopsByTimeThenInsertionOrder) {
  EventQueue q;
  std::vector<SimEvent> popped;
  std::vector<SimEvent> pushed;
  std::uint64_t x = 0x2545F4914F6CDD1DULL;
  TimeNs now = 0;
  // Interleaved pushes and pops, as a simulation does: every push at or after the last popped time,
  // times drawn from a narrow range so that ties are common; also times beyond 2^32 ns.
  for (int round = 0; round < 20000; ++round) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const int pushes = static_cast<int>(x % 3);
    for (int k = 0; k < pushes; ++k) {
      const TimeNs t =
          now + static_cast<TimeNs>((x >> (8 * k)) % 5) + (round > 10000 ? (TimeNs{1} << 40) : 0);
      pushed.push_back(
          SimEvent{t, q.pushed(), static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(round), 7, 9});
      q.push(t, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(round), 7, 9);
    }
    if (!q.empty() && (x & 1) == 0) {
      const SimEvent top = q.top();
      popped.push_back(q.pop());
      EXPECT_EQ(popped.back().seq, top.seq);
      now = popped.back().time;
    }
  }
  while (!q.empty()) popped.push_back(q.pop());
  ASSERT_EQ(popped.size(), pushed.size());
  // Each pop is the least (time, seq) among the events pushed before it and not yet popped: with pushes
  // never earlier than the last pop, that is the sorted order of everything.
  std::vector<SimEvent> want = pushed;
  std::stable_sort(want.begin(), want.end(),
                   [](const SimEvent& a, const SimEvent& b) { return a.time < b.time; });
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(popped[i].time, want[i].time) << i;
    ASSERT_EQ(popped[i].seq, want[i].seq) << i;
    ASSERT_EQ(popped[i].type, want[i].type);
    ASSERT_EQ(popped[i].a, want[i].a);
    ASSERT_EQ(popped[i].b, 7u);
    ASSERT_EQ(popped[i].c, 9u);
  }
}

TEST(EventQueue, RejectsAnEventBeforeTimeZero) {
  EventQueue q;
  EXPECT_THROW(q.push(-1, 0, 0, 0, 0), std::logic_error);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace moetwin
