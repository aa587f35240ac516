// Unit-test support: two predictions of one scenario are the same, in every field a command reads, and two
// spreads of the A2A terms are the same (needs sim/). For the paths that must not move a number: the template
// cache, shared set-ups, thread counts.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin::test_support {

// The summary, the stat bands, the variable durations the replay read, and every rank's statistics.
inline void expect_same_prediction(const Prediction& a, const Prediction& b) {
  EXPECT_EQ(a.built.comm_model, b.built.comm_model);
  EXPECT_EQ(a.built.moe_model, b.built.moe_model);
  EXPECT_EQ(a.built.a2a_source, b.built.a2a_source);
  EXPECT_EQ(a.built.microbatches, b.built.microbatches);
  EXPECT_EQ(a.iteration_s, b.iteration_s);
  EXPECT_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_EQ(a.model_tflops_per_gpu, b.model_tflops_per_gpu);
  EXPECT_EQ(a.critical_rank, b.critical_rank);
  EXPECT_EQ(a.critical_stage, b.critical_stage);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.ops, b.ops);
  EXPECT_EQ(a.compute_source, b.compute_source);
  EXPECT_EQ(a.collective_source, b.collective_source);
  EXPECT_EQ(a.warnings, b.warnings);
  for (const auto& [x, y] : {std::pair{a.compute, b.compute}, std::pair{a.host_wait, b.host_wait},
                             std::pair{a.bubble, b.bubble}, std::pair{a.idle, b.idle}}) {
    EXPECT_EQ(x.min_s, y.min_s);
    EXPECT_EQ(x.median_s, y.median_s);
    EXPECT_EQ(x.max_s, y.max_s);
  }
  const DurationTable& da = a.built.workload.var_durations;
  const DurationTable& db = b.built.workload.var_durations;
  ASSERT_EQ(da.size(), db.size());
  for (std::size_t i = 0; i < da.size(); ++i) ASSERT_EQ(da[i], db[i]) << "var duration " << i;
  ASSERT_EQ(a.engine.ranks.size(), b.engine.ranks.size());
  for (std::size_t r = 0; r < a.engine.ranks.size(); ++r) {
    const RankStats& x = a.engine.ranks[r];
    const RankStats& y = b.engine.ranks[r];
    EXPECT_EQ(x.finish, y.finish) << "rank " << r;
    EXPECT_EQ(x.compute, y.compute) << "rank " << r;
    EXPECT_EQ(x.host_wait, y.host_wait) << "rank " << r;
    EXPECT_EQ(x.bubble, y.bubble) << "rank " << r;
    EXPECT_EQ(x.idle, y.idle) << "rank " << r;
    for (int k = 0; k < kCommClasses; ++k) EXPECT_EQ(x.exposed[k], y.exposed[k]) << "rank " << r;
  }
}

// Two spreads of the A2A terms are the same: the replay count, the fastest and slowest replay, the band.
inline void expect_same_spread(const TermSpread& a, const TermSpread& b) {
  EXPECT_EQ(a.replays, b.replays);
  EXPECT_EQ(a.fastest_s, b.fastest_s);
  EXPECT_EQ(a.slowest_s, b.slowest_s);
  EXPECT_EQ(a.band.lo_s, b.band.lo_s);
  EXPECT_EQ(a.band.hi_s, b.band.hi_s);
}

}  // namespace moetwin::test_support
