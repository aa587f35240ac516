// Comparisons of replay results that the engine and sim tests share: two replays that must agree (the
// shortcuts against the plain op-by-op replay, lanes, the periodic jump, symmetry reduction).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "moetwin/engine/engine.hpp"

namespace moetwin::engine_test {

// The iteration time and every stat of every rank, exactly.
inline void expect_same_stats(const EngineResult& a, const EngineResult& b, const std::string& what) {
  EXPECT_EQ(a.iteration, b.iteration) << what;
  ASSERT_EQ(a.ranks.size(), b.ranks.size()) << what;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankStats& x = a.ranks[r];
    const RankStats& y = b.ranks[r];
    EXPECT_EQ(x.compute, y.compute) << what << " rank " << r;
    EXPECT_EQ(x.host_wait, y.host_wait) << what << " rank " << r;
    EXPECT_EQ(x.bubble, y.bubble) << what << " rank " << r;
    EXPECT_EQ(x.idle, y.idle) << what << " rank " << r;
    EXPECT_EQ(x.finish, y.finish) << what << " rank " << r;
    EXPECT_EQ(x.ops_run, y.ops_run) << what << " rank " << r;
    for (int k = 0; k < kCommClasses; ++k) {
      EXPECT_EQ(x.exposed[k], y.exposed[k]) << what << " rank " << r << " class " << k;
      EXPECT_EQ(x.comm_total[k], y.comm_total[k]) << what << " rank " << r << " class " << k;
      EXPECT_EQ(x.shared_delay[k], y.shared_delay[k]) << what << " rank " << r << " class " << k;
    }
  }
}

// The same, and the events but for stale ones (EngineResult::stale_events).
inline void expect_same_replay(const EngineResult& a, const EngineResult& b, const std::string& what) {
  expect_same_stats(a, b, what);
  EXPECT_EQ(a.events - a.stale_events, b.events - b.stale_events) << what;
}

}  // namespace moetwin::engine_test
