#include "moetwin/engine/engine.hpp"

#include <gtest/gtest.h>

#include "engine_test_ops.hpp"

namespace moetwin {
namespace {

// Streams of these tests: 0 compute, 1 a communication stream (the engine gives streams no meaning).
constexpr int kStreamCompute = 0;
constexpr int kStreamEpComm = 1;
constexpr int kStreams = 2;

using engine_test::comm;
using engine_test::compute;

// One rank, one program; channels of single members where needed.
Workload single(Program p, int sms = 100) {
  return engine_test::single(std::move(p), sms, kStreams);
}

TEST(Engine, LaunchBoundKernelsWaitForTheHost) {
  // Three 5 ns kernels, 10 ns to launch each: issued at 10, 20, 30; the GPU waits for the host.
  Program p;
  for (int i = 0; i < 3; ++i) p.add(compute(5, 10));
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 35);
  EXPECT_EQ(r.ranks[0].compute, 15);
  EXPECT_EQ(r.ranks[0].host_wait, 20);
  EXPECT_EQ(r.ranks[0].bubble, 0);
  EXPECT_EQ(r.ranks[0].ops_run, 3);
}

TEST(Engine, GpuBoundKernelsRunBackToBack) {
  Program p;
  for (int i = 0; i < 3; ++i) p.add(compute(50, 10));
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 10 + 150);
  EXPECT_EQ(r.ranks[0].host_wait, 10);
}

TEST(Engine, HostSyncDrainsTheGpuBeforeTheNextLaunch) {
  // Op 0 syncs the host (D2H): op 1 is launched only after op 0 finished at 10 + 100, i.e. at 120.
  Program p;
  OpSpec a = compute(100, 10);
  a.sync = HostSync::op;
  p.add(a);
  p.add(compute(100, 10));
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 220);
  EXPECT_EQ(r.ranks[0].host_wait, 20);
}

TEST(Engine, CommKernelStealsSmsFromConcurrentCompute) {
  // 1000 ns of compute (100 SMs); an overlapped comm kernel holding 20 SMs runs 0..500: compute gets
  // 80 SMs -> 500 * 80 = 40000 of 100000 SM-ns done, the remaining 60000 at 100 SMs take 600 ns.
  Program p;
  p.add(compute(1000));
  p.add(comm(500, ChannelKind::ep, CommClass::ep, kStreamEpComm, 20));
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 1100);
  EXPECT_EQ(r.ranks[0].compute, 1100);
  EXPECT_EQ(r.ranks[0].exposed[static_cast<int>(CommClass::ep)], 0);
  EXPECT_EQ(r.ranks[0].comm_total[static_cast<int>(CommClass::ep)], 500);
}

TEST(Engine, StealRoundsUpToWholeNanoseconds) {
  // 10 ns at 3 SMs with 1 stolen for the first 4 ns: 4 * 2 = 8 of 30 SM-ns; 22 left at 3 SMs -> ceil 7.33.
  Program p;
  p.add(compute(10));
  p.add(comm(4, ChannelKind::ep, CommClass::ep, kStreamEpComm, 1));
  const EngineResult r = run_engine(single(std::move(p), 3));
  EXPECT_EQ(r.iteration, 4 + 8);
}

TEST(Engine, ExposedCommOnTheComputeStream) {
  // compute 100, TP collective 50 on stream 0, compute 100: the collective is exposed.
  Program p;
  p.add(compute(100));
  p.add(comm(50, ChannelKind::tp, CommClass::tp, kStreamCompute));
  p.add(compute(100));
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 250);
  EXPECT_EQ(r.ranks[0].exposed[static_cast<int>(CommClass::tp)], 50);
  EXPECT_EQ(r.ranks[0].compute, 200);
}

TEST(Engine, OverlappedCommIsHiddenButWaitedFor) {
  // A2A on its own stream (300 ns) next to 100 ns of compute; the next compute needs the A2A.
  Program p;
  const int a2a = p.add(comm(300, ChannelKind::ep, CommClass::ep, kStreamEpComm));
  p.add(compute(100));
  OpSpec c = compute(100);
  c.deps[0] = a2a;
  p.add(c);
  const EngineResult r = run_engine(single(std::move(p)));
  EXPECT_EQ(r.iteration, 400);
  EXPECT_EQ(r.ranks[0].compute, 200);
  EXPECT_EQ(r.ranks[0].exposed[static_cast<int>(CommClass::ep)], 200);  // 100..300: nothing else runs
}

TEST(Engine, FullyOverlappedVsExposedA2A) {
  // Compute 300, an A2A of 100 the next compute (300) needs. On its own stream the A2A hides under the
  // first compute: 600, nothing exposed. On the compute stream: 700, 100 exposed. On its own stream
  // holding 20 of 100 SMs: the first compute does 100 x 80 = 8000 of 30000 SM-ns while it runs, the
  // remaining 22000 at 100 SMs take 220 -> 320, then 300 more: 620.
  auto run = [](std::uint8_t stream, std::uint16_t sms) {
    Program p;
    const int a2a = p.add(comm(100, ChannelKind::ep, CommClass::ep, stream, sms));
    p.add(compute(300));
    OpSpec c = compute(300);
    c.deps[0] = a2a;
    p.add(c);
    return run_engine(single(std::move(p)));
  };
  const EngineResult hidden = run(kStreamEpComm, 0);
  EXPECT_EQ(hidden.iteration, 600);
  EXPECT_EQ(hidden.ranks[0].exposed[static_cast<int>(CommClass::ep)], 0);
  const EngineResult exposed = run(kStreamCompute, 0);
  EXPECT_EQ(exposed.iteration, 700);
  EXPECT_EQ(exposed.ranks[0].exposed[static_cast<int>(CommClass::ep)], 100);
  const EngineResult stealing = run(kStreamEpComm, 20);
  EXPECT_EQ(stealing.iteration, 620);
  EXPECT_EQ(stealing.ranks[0].compute, 620);
}

TEST(Engine, CollectiveIsARendezvousGatedBySlowestMember) {
  // Two ranks: rank 0 computes 50 ns first; both then all-gather. Rank 1 waits (bubble) 50 ns. Member
  // durations 100 and 120: the collective takes 120 on both.
  Workload w;
  w.sms = 100;
  w.init_ranks(2);
  for (int r = 0; r < 2; ++r) {
    Program p;
    if (r == 0) p.add(compute(50));
    p.add(comm(r == 0 ? 100 : 120, ChannelKind::tp, CommClass::tp, kStreamCompute));
    p.seal(kStreams);
    w.programs.push_back(std::move(p));
    w.rank_program[static_cast<std::size_t>(r)] = r;
  }
  w.add_group_channels(ChannelKind::tp, {{0, 1}});
  const EngineResult res = run_engine(w);
  EXPECT_EQ(res.iteration, 170);
  EXPECT_EQ(res.ranks[1].bubble, 50);
  EXPECT_EQ(res.ranks[1].exposed[static_cast<int>(CommClass::tp)], 120);
  EXPECT_EQ(res.ranks[0].compute, 50);
}

TEST(Engine, DeadlockIsReportedNotHung) {
  // Rank 0 waits on a collective rank 1 never reaches (rank 1 lacks the channel's op).
  Workload w;
  w.sms = 100;
  w.init_ranks(2);
  Program p0;
  p0.add(comm(10, ChannelKind::tp, CommClass::tp, kStreamCompute));
  p0.add(comm(10, ChannelKind::ep, CommClass::ep, kStreamCompute));
  p0.seal(kStreams);
  Program p1;
  p1.add(comm(10, ChannelKind::ep, CommClass::ep, kStreamCompute));
  p1.add(comm(10, ChannelKind::tp, CommClass::tp, kStreamCompute));
  p1.seal(kStreams);
  w.programs = {p0, p1};
  w.rank_program = {0, 1};
  w.add_group_channels(ChannelKind::tp, {{0, 1}});
  w.add_group_channels(ChannelKind::ep, {{0, 1}});
  EXPECT_THROW(run_engine(w), std::logic_error);
}

// --- Pipeline goldens (exact integer ns) ---

}  // namespace
}  // namespace moetwin
