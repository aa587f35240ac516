// The engine's flow model (EngineOptions::network = flow): comm ops with a NetLoad share their members'
// links max-min fair; alone they take exactly their closed-form duration. Every expected time below is
// worked out by hand in the comment beside it.
#include <gtest/gtest.h>

#include "moetwin/engine/engine.hpp"

namespace moetwin {
namespace {

constexpr int kStreams = 4;  // 0 compute, 1..3 communication streams (no meaning to the engine)

OpSpec transfer(Program& p, TimeNs duration, ChannelKind channel, std::uint8_t stream, NetLoad load) {
  OpSpec op;
  op.kind = OpKind::comm;
  op.duration = duration;
  op.channel = channel;
  op.comm_class = channel == ChannelKind::ep ? CommClass::ep : CommClass::dp;
  op.stream = stream;
  op.net_load = p.net_load(load);
  return op;
}

NetLoad network_load(TimeNs latency, float tx, float rx) {
  NetLoad l;
  l.latency = latency;
  l.use[static_cast<int>(NetRole::network_tx)] = tx;
  l.use[static_cast<int>(NetRole::network_rx)] = rx;
  return l;
}

EngineOptions flow() {
  EngineOptions o;
  o.network = NetworkMode::flow;
  return o;
}

// `ranks` ranks running program `p`, one EP and one DP channel each spanning all of them.
Workload group(Program p, int ranks) {
  Workload w;
  p.seal(kStreams);
  w.programs.push_back(std::move(p));
  w.init_ranks(ranks);
  std::vector<int> all;
  for (int r = 0; r < ranks; ++r) all.push_back(r);
  w.add_group_channels(ChannelKind::ep, {all});
  w.add_group_channels(ChannelKind::dp, {all});
  return w;
}

TEST(EngineFlow, AloneATransferTakesItsClosedFormDuration) {
  // 1000 ns all-to-all, 100 ns of latency, the rails fully used: 100 + 900 at rate 1.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(100, 1, 1)));
  const EngineResult closed = run_engine(group(p, 2));
  const EngineResult shared = run_engine(group(p, 2), flow());
  EXPECT_EQ(closed.iteration, 1000);
  EXPECT_EQ(shared.iteration, 1000);
  EXPECT_EQ(shared.shared_transfers, 0u);
  EXPECT_EQ(shared.ranks[0].shared_delay[static_cast<int>(CommClass::ep)], 0);
}

TEST(EngineFlow, TwoTransfersOnOneRailShareIt) {
  // EP all-to-all (1000 ns, no latency, rails at 1) and a DP reduce-scatter (600 ns, rails at 1) start
  // together on other streams. Both at rate 1/2 until the reduce-scatter's 600 ns of work is through at
  // 1200; the all-to-all has 1000 - 600 = 400 left, alone at rate 1: done at 1600.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(0, 1, 1)));
  p.add(transfer(p, 600, ChannelKind::dp, 2, network_load(0, 1, 1)));
  EngineOptions o = flow();
  o.trace = true;
  const EngineResult r = run_engine(group(p, 2), o);
  EXPECT_EQ(r.iteration, 1600);
  EXPECT_EQ(r.shared_transfers, 2u);
  EXPECT_EQ(r.ranks[0].shared_delay[static_cast<int>(CommClass::ep)], 600);
  EXPECT_EQ(r.ranks[0].shared_delay[static_cast<int>(CommClass::dp)], 600);
  // The trace says how long each span would have been alone.
  ASSERT_EQ(r.trace.size(), 4u);
  for (const TraceSpan& s : r.trace) {
    EXPECT_EQ(s.end - s.start - s.alone, 600) << "op " << s.op;
  }
  // The closed form overlaps them for free.
  EXPECT_EQ(run_engine(group(p, 2)).iteration, 1000);
}

TEST(EngineFlow, PartlyUsedLinksOnlyShareWhatTheyLack) {
  // A fitted slow-down leaves the link partly idle: uses 0.3 and 0.5 sum to 0.8 <= 1, so neither slows.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(0, 0.3f, 0.3f)));
  p.add(transfer(p, 600, ChannelKind::dp, 2, network_load(0, 0.5f, 0.5f)));
  EXPECT_EQ(run_engine(group(p, 2), flow()).iteration, 1000);
  // Uses 0.75 and 0.75: max-min fair gives each 1/1.5 = 2/3 of its rate. The DP op's 600 ns of work end at
  // 900; the A2A has done 600 of 1000 and finishes the last 400 alone at 1300.
  Program q;
  q.add(transfer(q, 1000, ChannelKind::ep, 1, network_load(0, 0.75f, 0.75f)));
  q.add(transfer(q, 600, ChannelKind::dp, 2, network_load(0, 0.75f, 0.75f)));
  EXPECT_EQ(run_engine(group(q, 2), flow()).iteration, 1300);
}

TEST(EngineFlow, OppositeDirectionsDoNotContend) {
  // A send on the tx rails and a receive on the rx rails of the same GPU run at full rate together.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(0, 1, 0)));
  p.add(transfer(p, 1000, ChannelKind::dp, 2, network_load(0, 0, 1)));
  EXPECT_EQ(run_engine(group(p, 2), flow()).iteration, 1000);
}

TEST(EngineFlow, LatencyUsesNoBandwidth) {
  // A2A: 500 ns latency then 500 ns of transfer; the DP op (500 ns, no latency) runs in the A2A's latency
  // and is done at 500 when the A2A starts to transfer: no sharing, both as alone.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(500, 1, 1)));
  p.add(transfer(p, 500, ChannelKind::dp, 2, network_load(0, 1, 1)));
  const EngineResult r = run_engine(group(p, 2), flow());
  EXPECT_EQ(r.iteration, 1000);
  EXPECT_EQ(r.shared_transfers, 0u);
}

TEST(EngineFlow, MaxMinFairnessAcrossAChainOfLinks) {
  // Three ranks. A: EP all-to-all of ranks {0, 1} (1000 ns, tx and rx at 1); C: rank 2's own EP op (same
  // program, a one-member channel); B: DP op of {0, 1, 2} on the tx rails only (500 ns). Links tx0 and tx1
  // carry A and B, tx2 carries B and C: one component, every link's fair level 1/2. B's 500 ns of work end
  // at 1000; A and C, with 500 left, then run alone: 1500.
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(0, 1, 1)));
  p.add(transfer(p, 500, ChannelKind::dp, 2, network_load(0, 1, 0)));
  p.seal(kStreams);
  Workload w;
  w.programs.push_back(std::move(p));
  w.init_ranks(3);
  w.add_group_channels(ChannelKind::ep, {{0, 1}, {2}});
  w.add_group_channels(ChannelKind::dp, {{0, 1, 2}});
  EngineOptions o = flow();
  o.trace = true;
  const EngineResult r = run_engine(w, o);
  for (const TraceSpan& s : r.trace) {
    EXPECT_EQ(s.end, s.op == 1 ? 1000 : 1500) << "rank " << s.rank << " op " << s.op;
  }
  EXPECT_EQ(r.iteration, 1500);
}

TEST(EngineFlow, MoreFlowsGetALargerShare) {
  // An all-to-all with 3 flows on the rail (NetLoad::flows = 3) against a ring hop with 1, both 1000 ns at
  // use 1: per-flow fairness gives them 3/4 and 1/4. The all-to-all ends at 1000 / 0.75 = 1333.3, rounded up
  // to the event at 1334; by then the ring has done 1334 / 4 = 333.5 and finishes its last 666.5 alone:
  // 2000.5 -> 2001.
  Program p;
  NetLoad a2a = network_load(0, 1, 1);
  a2a.flows = 3;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, a2a));
  p.add(transfer(p, 1000, ChannelKind::dp, 2, network_load(0, 1, 1)));
  EngineOptions o = flow();
  o.trace = true;
  const EngineResult r = run_engine(group(p, 2), o);
  for (const TraceSpan& s : r.trace) EXPECT_EQ(s.end, s.op == 0 ? 1334 : 2001) << "op " << s.op;
  // A weight never makes a transfer faster than alone: a 3-flow transfer alone still takes its 1000 ns.
  Program q;
  q.add(transfer(q, 1000, ChannelKind::ep, 1, a2a));
  EXPECT_EQ(run_engine(group(q, 2), flow()).iteration, 1000);
}

TEST(EngineFlow, GpusSharingARailSlowEachOther) {
  // Two GPUs on one NIC (Workload::net_links): each sends its own 1000 ns transfer at use 1 on "its" rail,
  // which is the same link: rate 1/2 each, done at 2000. Full replay is forced (symmetry would hide it).
  Program p;
  p.add(transfer(p, 1000, ChannelKind::ep, 1, network_load(0, 1, 0)));
  p.seal(kStreams);
  Workload w;
  w.programs.push_back(std::move(p));
  w.init_ranks(2);
  w.add_group_channels(ChannelKind::ep, {{0}, {1}});
  w.net_links = {0, 1, 2, 3, 4, 5, 2, 7};  // rank 1's network tx is rank 0's
  const EngineResult r = run_engine(w, flow());
  EXPECT_EQ(r.iteration, 2000);
  EXPECT_EQ(r.replayed_ranks, 2);
  w.net_links.clear();
  EXPECT_EQ(run_engine(w, flow()).iteration, 1000);
}

TEST(EngineFlow, ReducedReplayMatchesFullReplayAndRunsRepeat) {
  // Eight symmetric ranks, compute between overlapping transfers: the reduced replay (one rank) gives the
  // same time line as the full one, and two runs give the same stats.
  Program p;
  for (int i = 0; i < 5; ++i) {
    OpSpec c;
    c.duration = 300 + 17 * i;
    p.add(c);
    p.add(transfer(p, 700 + 13 * i, ChannelKind::ep, 1, network_load(40, 0.9f, 0.8f)));
    p.add(transfer(p, 450, ChannelKind::dp, 2, network_load(25, 0.6f, 0.7f)));
  }
  const Workload w = group(p, 8);
  EngineOptions full = flow();
  full.full_replay = true;
  const EngineResult a = run_engine(w, flow());
  const EngineResult b = run_engine(w, full);
  const EngineResult again = run_engine(w, flow());
  EXPECT_LT(a.replayed_ranks, 8);
  EXPECT_EQ(b.replayed_ranks, 8);
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.iteration, again.iteration);
  EXPECT_GT(a.iteration, run_engine(w).iteration);  // the transfers overlap: sharing costs time
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(a.ranks[static_cast<std::size_t>(r)].accounted(), a.iteration);
    for (int k = 0; k < kCommClasses; ++k) {
      EXPECT_EQ(a.ranks[static_cast<std::size_t>(r)].shared_delay[k],
                b.ranks[static_cast<std::size_t>(r)].shared_delay[k]);
      EXPECT_EQ(a.ranks[static_cast<std::size_t>(r)].comm_total[k],
                again.ranks[static_cast<std::size_t>(r)].comm_total[k]);
    }
  }
}

TEST(EngineFlow, LoadsAreCheckedWhenAdded) {
  Program p;
  NetLoad bad;
  bad.use[0] = 1.5f;
  EXPECT_THROW(p.net_load(bad), std::logic_error);
  NetLoad negative;
  negative.latency = -1;
  EXPECT_THROW(p.net_load(negative), std::logic_error);
  // Equal loads are interned once.
  EXPECT_EQ(p.net_load(network_load(5, 1, 1)), p.net_load(network_load(5, 1, 1)));
  EXPECT_EQ(p.net_loads().size(), 1u);
}

}  // namespace
}  // namespace moetwin
