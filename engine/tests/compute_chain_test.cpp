// Event shortcuts (engine.cpp: compute chains, narrow retries, early arrivals) must give every rank the
// stats, iteration time and event count (less stale events) of the plain op-by-op replay.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine_test_expect.hpp"
#include "engine_test_ops.hpp"
#include "moetwin/engine/engine.hpp"

namespace moetwin {
namespace {

using engine_test::compute;
using engine_test::expect_same_replay;

constexpr int kStreams = 3;  // 0 compute, 1 and 2 communication

void compare_chained(const Workload& w, const std::string& what) {
  EngineOptions plain;
  plain.shortcuts = false;
  plain.full_replay = true;
  EngineOptions chained;
  chained.full_replay = true;
  expect_same_replay(run_engine(w, plain), run_engine(w, chained), what + " (full replay)");
  plain.full_replay = chained.full_replay = false;
  expect_same_replay(run_engine(w, plain), run_engine(w, chained), what + " (reduced replay)");
}

OpSpec comm(TimeNs d, ChannelKind ch, std::uint8_t stream, std::uint16_t sms) {
  const CommClass cls = ch == ChannelKind::tp   ? CommClass::tp
                        : ch == ChannelKind::dp ? CommClass::dp
                                                : CommClass::ep;
  return engine_test::comm(d, ch, cls, stream, sms);
}

Workload one_rank(Program p, int sms) {
  return engine_test::single(std::move(p), sms, kStreams);
}

TEST(ComputeChain, StealsInsideAndAtTheEdgesOfAChain) {
  // Four 7 ns compute ops on 3 SMs (21 SM-ns each) issued at once; a 1-SM comm kernel runs 4..9 ns
  // (ends inside op 1), another 14..16 ns. Op 0: 0..7 at 3 SMs, from 4 at 2 SMs: 12 + 3 * 2 = 18 by 7,
  // 3 left -> 8.5 -> ends 9 (ceil), op 1: 9..16, op 2 starts at 16 with the second kernel over.
  Program p;
  for (int i = 0; i < 4; ++i) p.add(compute(7));
  OpSpec first = comm(5, ChannelKind::ep, 1, 1);
  first.host_ns = 4;  // issued at 4
  p.add(first);
  OpSpec second = comm(2, ChannelKind::ep, 1, 1);
  second.host_ns = 10;  // issued at 14
  p.add(second);
  const Workload w = one_rank(std::move(p), 3);
  EngineOptions plain;
  plain.shortcuts = false;
  const EngineResult r = run_engine(w, plain);
  EXPECT_EQ(r.ranks[0].ops_run, 6);
  compare_chained(w, "steals");
}

TEST(ComputeChain, ChainsStopWhereAnotherStreamOrTheHostWaits) {
  // Op 1 is what the comm on stream 1 waits for, op 3 syncs the host: chains end there, and both the
  // comm and the host still see their exact finish times.
  Program p;
  p.add(compute(100));
  const int watched = p.add(compute(100));
  p.add(compute(100));
  OpSpec synced = compute(100);
  synced.sync = HostSync::op;
  p.add(synced);
  OpSpec c = comm(50, ChannelKind::ep, 1, 10);
  c.deps[0] = watched;
  p.add(c);
  p.add(compute(100, 5));
  OpSpec drain = compute(30);
  drain.sync = HostSync::device;
  p.add(drain);
  p.add(compute(100, 5));
  const Workload w = one_rank(std::move(p), 100);
  const EngineResult r = run_engine(w);
  // Ops 0-3 run 0..400 back to back; the host, held by op 3's sync, issues the comm at 400 (400..450,
  // 10 SMs) and op 5 at 405: 45 ns at 90 SMs, the remaining 59.5 ns at 100 -> 510; op 6 510..540 and its
  // device sync release the host at 540; op 7 is issued at 545 and ends at 645.
  EXPECT_EQ(r.iteration, 645);
  compare_chained(w, "watched ops");
}

TEST(ComputeChain, EarlyArrivalsMoveWithTheirChains) {
  // Two ranks: compute (rank 0: 100 ns, rank 1: 130 ns), then a TP collective of 30 ns on the compute
  // stream, then 10 ns of compute. An EP kernel on stream 1 holding 50 of 100 SMs runs 20..60 ns and
  // slows the first compute: rank 0 ends at 100 + 40 * 50 / 100 = 120, rank 1 at 150. Both join the
  // collective at the end of their compute without an event there; it starts at 150, so the iteration
  // ends at 150 + 30 + 10 = 190; rank 0 waits 30 ns for rank 1.
  Program p;
  OpSpec first = compute(0);
  first.var_slot = p.new_var_slot();
  p.add(first);
  OpSpec ep = comm(40, ChannelKind::ep, 1, 50);
  ep.host_ns = 20;
  p.add(ep);
  p.add(comm(30, ChannelKind::tp, 0, 0));
  p.add(compute(10));
  Workload w;
  w.sms = 100;
  p.seal(kStreams);
  w.programs.push_back(std::move(p));
  w.init_ranks(2);
  w.var_durations = {100, 130};
  w.var_offset = {0, 1};
  w.add_group_channels(ChannelKind::tp, {{0, 1}});
  w.add_group_channels(ChannelKind::ep, {{0}, {1}});
  const EngineResult r = run_engine(w);
  EXPECT_EQ(r.iteration, 190);
  EXPECT_EQ(r.ranks[0].compute, 120 + 10);
  EXPECT_EQ(r.ranks[0].bubble, 30);
  EXPECT_EQ(r.ranks[1].compute, 150 + 10);
  EXPECT_EQ(r.ranks[1].exposed[static_cast<int>(CommClass::tp)], 30);
  compare_chained(w, "early arrivals");
}

// Random workloads: a few ranks running one program of compute ops (some with per-rank durations, host
// costs, dependencies on comm ops) and comm ops on two communication streams (EP, DP) and the compute
// stream (TP),
// some holding SMs, some followed by host syncs.
Workload random_workload(std::mt19937_64& gen) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  const int ranks = pick(1, 4);
  const int sms = pick(3, 132);
  Program p;
  const int n = pick(5, 60);
  std::vector<int> comm_ops;
  for (int i = 0; i < n; ++i) {
    const int kind = pick(0, 9);
    OpSpec op;
    if (kind < 6) {
      op = compute(pick(0, 200), pick(0, 3) == 0 ? pick(1, 80) : 0);
      if (pick(0, 2) == 0) op.var_slot = p.new_var_slot();
      if (!comm_ops.empty() && pick(0, 3) == 0)
        op.deps[0] = comm_ops[static_cast<std::size_t>(pick(0, static_cast<int>(comm_ops.size()) - 1))];
    } else {
      const bool on_compute = kind == 9;
      op = comm(pick(1, 150), on_compute ? ChannelKind::tp : (kind == 8 ? ChannelKind::dp : ChannelKind::ep),
                on_compute ? 0 : static_cast<std::uint8_t>(kind == 8 ? 2 : 1),
                on_compute ? 0 : static_cast<std::uint16_t>(pick(0, sms / 2)));
      op.host_ns = pick(0, 40);
      if (op.stream != 0 && i > 0 && pick(0, 1) == 0) op.deps[0] = pick(0, i - 1);
    }
    const int sync = pick(0, 14);
    if (sync == 0) op.sync = HostSync::op;
    if (sync == 1) op.sync = HostSync::device;
    const int id = p.add(op);
    if (op.kind == OpKind::comm) comm_ops.push_back(id);
  }
  Workload w;
  w.sms = sms;
  const int slots = p.var_slots();
  p.seal(kStreams);
  w.programs.push_back(std::move(p));
  w.init_ranks(ranks);
  std::vector<int> all;
  for (int r = 0; r < ranks; ++r) all.push_back(r);
  w.add_group_channels(ChannelKind::tp, {all});
  w.add_group_channels(ChannelKind::ep, {all});
  w.add_group_channels(ChannelKind::dp, {all});
  for (int r = 0; r < ranks; ++r) {
    w.var_offset[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(r) * slots;
    for (int s = 0; s < slots; ++s) w.var_durations.push_back(pick(0, 2) == 0 ? 60 : pick(0, 300));
  }
  return w;
}

TEST(ComputeChain, RandomWorkloadsMatchTheOpByOpReplay) {
  std::mt19937_64 gen(20261202);
  for (int k = 0; k < 300; ++k) {
    const Workload w = random_workload(gen);
    compare_chained(w, "random workload " + std::to_string(k));
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace moetwin
