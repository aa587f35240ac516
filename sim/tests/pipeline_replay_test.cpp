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
  UnitPipeline u{.pp = 4, .microbatches = 8};
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
  UnitPipeline u{.pp = 4, .microbatches = 2};
  EXPECT_EQ(run_engine(build_unit_pipeline(u)).iteration, 1500);
}

TEST(EngineGolden, InterleavedBubbleShrinksByVpp) {
  // pp 4, vpp 2, m 8, per chunk F 50, B 100: ideal m * vpp * 150 = 2400 plus a bubble of
  // (pp - 1)(F + B) per chunk = 450: bubble fraction (pp - 1) / (vpp m) = 3/16.
  UnitPipeline u{.pp = 4, .vpp = 2, .microbatches = 8, .forward = 50, .backward = 100};
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
  UnitPipeline u{.pp = 2, .microbatches = 1, .p2p = 10};
  const EngineResult r = run_engine(build_unit_pipeline(u));
  EXPECT_EQ(r.iteration, 620);
  EXPECT_EQ(r.ranks[0].exposed[static_cast<int>(CommClass::pp)], 20);
}

TEST(EngineGolden, DeterministicTrace) {
  UnitPipeline u{.pp = 4, .vpp = 2, .microbatches = 8, .p2p = 7, .host_ns = 3};
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

// A slow P2P link (150 ns a transfer, longer than a 100 ns forward chunk) behind compute: pp 2, vpp 2,
// m 2, F 100, B 200 per chunk, worked by hand. Stage 0 runs F0.0 F1.0 F0.1 F1.1 (all warm-up), then
// receives the first gradient and runs B0.1 B1.1 B0.0 B1.0.
//  - blocking (batch_p2p_sync): every call holds the host until its transfers end. F0.0 [0,100], its send
//    [100,250] exposed, F1.0 [250,350], [sf rf] [350,500], F0.1 [500,600], [sf rf] [600,750], F1.1
//    [750,850], [sf] [850,1000], [rb] waits for stage 1's B0.1 [850,1050]: [1050,1200], B0.1 [1200,1400],
//    [sb rb]: send [1400,1550], receive of stage 1's B1.1 [1500,1650], B1.1 [1650,1850], [sb rb]
//    [1850,2000], B0.0 [2000,2200], [rb] [2200,2350], B1.0 [2350,2550]: iteration 2550.
//  - overlapped: F0.0's send is posted and runs [100,250] under F1.0 [100,200]; before posting F1.0's send
//    the compute stream waits for F0.0's (250); that send pairs with stage 1's receive posted after its
//    F0.0 [250,350] (a posted receive starts after the compute issued before it): [350,500], with the
//    receive of stage 1's F0.0 output; F0.1 [500,600], [sf rf] [600,750], F1.1 [750,850], [sf] [850,1000];
//    the cool-down calls block as before: [rb] [1050,1200], B0.1 [1200,1400], [sb rb] [1400,1550] (the
//    receive posted after B0.1 starts with it), B1.1 [1550,1750], [sb rb] [1750,1900], B0.0 [1900,2100],
//    [rb] [2100,2250], B1.0 [2250,2450]: iteration 2450. The 150 ns hidden under F1.0 shortens stage 0's
//    critical chain by F1.0's 100 ns and its exposed P2P by 200 ns.
TEST(EngineGolden, OverlappedP2PHidesASlowLinkTheBlockingScheduleExposes) {
  UnitPipeline u{.pp = 2, .vpp = 2, .microbatches = 2, .p2p = 150};
  EngineOptions o;
  o.trace = true;
  // Start of stage 0's second forward (F1.0: microbatch 1, chunk 0).
  auto second_forward = [](const Workload& w, const EngineResult& r) {
    for (const TraceSpan& t : r.trace) {
      const OpSpec& op = w.programs[0].ops()[static_cast<std::size_t>(t.op)];
      if (t.rank == 0 && op.phase == OpPhase::forward && op.microbatch == 1 && op.chunk == 0) return t.start;
    }
    return TimeNs{-1};
  };
  const Workload blocking = build_unit_pipeline(u);
  const EngineResult b = run_engine(blocking, o);
  EXPECT_EQ(b.iteration, 2550);
  EXPECT_EQ(second_forward(blocking, b), 250);
  EXPECT_EQ(b.ranks[0].compute, 1200);
  EXPECT_EQ(b.ranks[0].exposed[static_cast<int>(CommClass::pp)], 1300);

  u.p2p_mode = P2pMode::overlapped;
  const Workload overlapped = build_unit_pipeline(u);
  const EngineResult v = run_engine(overlapped, o);
  EXPECT_EQ(v.iteration, 2450);
  EXPECT_EQ(second_forward(overlapped, v), 100);
  EXPECT_EQ(v.ranks[0].compute, 1200);
  EXPECT_EQ(v.ranks[0].exposed[static_cast<int>(CommClass::pp)], 1100);
  for (const RankStats& s : v.ranks) EXPECT_EQ(s.accounted(), 2450);
  // No host sync in overlapped mode: the waits are zero-length compute-stream ops.
  for (const OpSpec& op : overlapped.programs[0].ops()) EXPECT_EQ(op.sync, HostSync::none);
  // The same replay without the engine's shortcuts.
  o.trace = false;
  o.shortcuts = false;
  EXPECT_EQ(run_engine(overlapped, o).iteration, 2450);
}

// overlap_moe_expert_parallel_comm with overlapped P2P: a steady-state forward, its posted [sf rf] and the
// next backward form one pair; the call's ops follow the pair, its send waits for the forward half (the
// pair's first op) and the backward's own posted call follows. The iteration replays to the end.
TEST(EngineGolden, OverlappedCallsFollowACombinedPair) {
  UnitPipeline u{.pp = 2,
                 .vpp = 2,
                 .microbatches = 4,
                 .p2p = 30,
                 .p2p_mode = P2pMode::overlapped,
                 .combine_steady_steps = true};
  const Workload w = build_unit_pipeline(u);
  const std::vector<OpSpec>& ops = w.programs[0].ops();
  int pairs = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].stream != kStreamPpSendFwd) continue;
    const auto f = static_cast<std::size_t>(ops[i].deps[0]);  // the forward it sends
    ASSERT_EQ(ops[f].phase, OpPhase::forward);
    if (f + 1 >= ops.size() || ops[f + 1].phase != OpPhase::backward) continue;  // not paired
    ++pairs;
    EXPECT_GT(i, f + 1);  // issued after the pair's backward half
  }
  // Stage 0's steady state (4 steps): F2.0 B0.1, F3.0 B1.1, F2.1 B0.0, F3.1 B1.0, each forward sending.
  EXPECT_EQ(pairs, 4);
  const EngineResult r = run_engine(w);
  EXPECT_GT(r.iteration, 0);
  for (const RankStats& s : r.ranks) {
    EXPECT_EQ(s.compute, 4 * 2 * 300);
    EXPECT_EQ(s.accounted(), r.iteration);
  }
}

}  // namespace
}  // namespace moetwin
