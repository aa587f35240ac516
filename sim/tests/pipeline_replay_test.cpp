// The engine replaying pipeline schedules (1F1B, interleaved): hand-worked iterations and bubbles.
#include <gtest/gtest.h>

#include "moetwin/engine/engine.hpp"
#include "pipeline_fixture.hpp"

namespace moetwin {
namespace {

using testing_support::build_unit_pipeline;
using testing_support::UnitPipeline;

TEST(EngineGolden, OneF1BIterationAndBubble) {
  // pp 4, m 8, F 100, B 200, free P2P: iteration (m + pp - 1)(F + B) = 11 * 300 = 3300, every stage
  // computes m (F + B) = 2400 and waits (pp - 1)(F + B) = 900: bubble fraction (pp-1)/(m+pp-1) = 3/11.
  UnitPipeline u;
  u.pp = 4;
  u.microbatches = 8;
  const EngineResult r = run_engine(build_unit_pipeline(u));
  EXPECT_EQ(r.iteration, 3300);
  for (const RankStats& s : r.ranks) {
    EXPECT_EQ(s.compute, 2400);
    EXPECT_EQ(s.bubble + s.idle, 900);
    EXPECT_EQ(s.accounted(), 3300);
  }
  // Stage 0 ends last; the last stage's tail after its last backward is idle: (pp-1) * B = 600.
  EXPECT_EQ(r.ranks[3].idle, 600);
  EXPECT_EQ(r.ranks[0].idle, 0);
}

TEST(EngineGolden, OneF1BWithFewerMicrobatchesThanStages) {
  // m 2 < pp 4: still (m + pp - 1)(F + B) = 5 * 300.
  UnitPipeline u;
  u.pp = 4;
  u.microbatches = 2;
  EXPECT_EQ(run_engine(build_unit_pipeline(u)).iteration, 1500);
}

TEST(EngineGolden, InterleavedBubbleShrinksByVpp) {
  // pp 4, vpp 2, m 8, per chunk F 50, B 100: ideal m * vpp * 150 = 2400 plus a bubble of
  // (pp - 1)(F + B) per chunk = 450: bubble fraction (pp - 1) / (vpp m) = 3/16.
  UnitPipeline u;
  u.pp = 4;
  u.vpp = 2;
  u.microbatches = 8;
  u.forward = 50;
  u.backward = 100;
  const EngineResult r = run_engine(build_unit_pipeline(u));
  EXPECT_EQ(r.iteration, 2400 + 450);
  for (const RankStats& s : r.ranks) {
    EXPECT_EQ(s.compute, 2400);
    EXPECT_EQ(s.bubble + s.idle, 450);
  }
}

TEST(EngineGolden, P2PLatencyIsExposedOnTheCriticalPath) {
  // pp 2, m 1, F 100, B 200, P2P 10: F(s0) 0..100, send 100..110, F(s1) 110..210, B(s1) 210..410,
  // send 410..420, B(s0) 420..620.
  UnitPipeline u;
  u.pp = 2;
  u.microbatches = 1;
  u.p2p = 10;
  const EngineResult r = run_engine(build_unit_pipeline(u));
  EXPECT_EQ(r.iteration, 620);
  EXPECT_EQ(r.ranks[0].exposed[static_cast<int>(CommClass::pp)], 20);
}

TEST(EngineGolden, DeterministicTrace) {
  UnitPipeline u;
  u.pp = 4;
  u.vpp = 2;
  u.microbatches = 8;
  u.p2p = 7;
  u.host_ns = 3;
  EngineOptions o;
  o.trace = true;
  const EngineResult a = run_engine(build_unit_pipeline(u), o);
  const EngineResult b = run_engine(build_unit_pipeline(u), o);
  ASSERT_EQ(a.trace.size(), b.trace.size());
  for (std::size_t i = 0; i < a.trace.size(); ++i) {
    EXPECT_EQ(a.trace[i].start, b.trace[i].start);
    EXPECT_EQ(a.trace[i].end, b.trace[i].end);
    EXPECT_EQ(a.trace[i].op, b.trace[i].op);
  }
  EXPECT_EQ(a.iteration, b.iteration);
}

}  // namespace
}  // namespace moetwin
