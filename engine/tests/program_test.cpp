// A sealed program's derived arrays and the engine's compiled form of it, against straightforward
// references: seal and compile run once per replayed stage program (thousands of times in a plan), so
// both are written for speed, and these tests pin what they compute.
#include "moetwin/engine/program.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "../src/engine_internal.hpp"
#include "engine_test_ops.hpp"
#include "moetwin/engine/compiled_program.hpp"
#include "moetwin/engine/engine.hpp"

namespace moetwin {
namespace {

using engine_detail::EngineOp;
using engine_detail::EngineProgram;
using engine_detail::SyncPoint;

// A random sealed program: compute ops on stream 0, comm ops on streams 1..streams-1 (one channel kind
// per stream), var slots, dependencies on earlier ops of any stream, host syncs of both kinds.
Program random_program(std::mt19937_64& rng, int streams, int n) {
  Program p;
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int slots = 0;
  for (int i = 0; i < n; ++i) {
    OpSpec op;
    op.duration = pick(0, 5000);
    op.host_ns = pick(0, 3) == 0 ? 0 : pick(1, 9000);
    op.stream = static_cast<std::uint8_t>(streams > 1 && pick(0, 2) == 0 ? pick(1, streams - 1) : 0);
    if (op.stream != 0) {
      op.kind = OpKind::comm;
      op.channel = static_cast<ChannelKind>(op.stream % kChannelKinds);
      op.comm_class = static_cast<CommClass>(pick(0, kCommClasses - 1));
      op.sms = static_cast<std::uint16_t>(pick(0, 32));
    }
    if (pick(0, 4) == 0) op.var_slot = slots++;
    for (int k = 0; k < 2; ++k) {
      if (i > 0 && pick(0, 3) == 0) op.deps[k] = pick(0, i - 1);
    }
    const int sync = pick(0, 30);
    op.sync = sync == 0 ? HostSync::op : sync == 1 ? HostSync::device : HostSync::none;
    p.add(op);
  }
  for (int s = 0; s < slots; ++s) p.new_var_slot();
  p.seal(streams);
  return p;
}

// compile() as it was written before it was folded into one pass (a value-initialised record array,
// the dependencies' and syncs' kOpWatched flags in passes of their own).
EngineProgram reference_compile(const Program& p) {
  EngineProgram e;
  e.prog = &p;
  e.size = p.size();
  const int streams = p.streams();
  e.stream_begin.assign(static_cast<std::size_t>(streams), 0);
  e.stream_count.assign(static_cast<std::size_t>(streams), 0);
  std::int32_t off = 0;
  for (int s = 0; s < streams; ++s) {
    const std::int32_t n = p.stream_sizes()[static_cast<std::size_t>(s)];
    e.stream_begin[static_cast<std::size_t>(s)] = off;
    e.stream_count[static_cast<std::size_t>(s)] = n;
    if (n > 0) e.stream_mask |= std::uint64_t{1} << s;
    off += n;
  }
  e.ops.resize(static_cast<std::size_t>(off));
  const auto& ops = p.ops();
  const auto& pos = p.pos_in_stream();
  std::vector<std::int32_t> issued(static_cast<std::size_t>(streams), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& o = ops[i];
    EngineOp r;
    r.issue_prefix = p.issue_prefix()[i];
    r.dur = o.var_slot >= 0 ? -static_cast<TimeNs>(o.var_slot) - 1 : o.duration;
    r.index = static_cast<std::int32_t>(i);
    for (int k = 0; k < 2; ++k) {
      const int d = o.deps[k];
      if (d == kNoOp) continue;
      const auto du = static_cast<std::size_t>(d);
      r.dep[k] = (static_cast<std::uint32_t>(ops[du].stream) << engine_detail::kDepPosBits) |
                 (static_cast<std::uint32_t>(pos[du]) + 1u);
    }
    r.sms = o.sms;
    r.flags = o.kind == OpKind::comm ? engine_detail::kOpComm : 0;
    r.channel = static_cast<std::uint8_t>(static_cast<unsigned>(o.channel) |
                                          (static_cast<unsigned>(o.comm_class) << 4));
    e.ops[static_cast<std::size_t>(e.stream_begin[o.stream] + pos[i])] = r;
    ++issued[o.stream];
    if (o.sync != HostSync::none) {
      SyncPoint sp;
      sp.index = r.index;
      sp.stream = o.stream;
      sp.pos = pos[i];
      sp.device = o.sync == HostSync::device;
      sp.issue_prefix = r.issue_prefix;
      if (sp.device) {
        sp.drain = static_cast<std::int64_t>(e.drain.size());
        e.drain.insert(e.drain.end(), issued.begin(), issued.end());
      }
      e.syncs.push_back(sp);
    }
  }
  SyncPoint end;
  end.index = e.size;
  e.syncs.push_back(end);
  const auto record = [&](int i) -> EngineOp& {
    const auto iu = static_cast<std::size_t>(i);
    return e.ops[static_cast<std::size_t>(e.stream_begin[ops[iu].stream] + pos[iu])];
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (const int d : ops[i].deps) {
      if (d != kNoOp && ops[static_cast<std::size_t>(d)].stream != ops[i].stream)
        record(d).flags |= engine_detail::kOpWatched;
    }
  }
  for (const SyncPoint& sp : e.syncs) {
    if (sp.index >= e.size) continue;
    record(sp.index).flags |= engine_detail::kOpWatched;
    if (!sp.device) continue;
    for (int s = 0; s < streams; ++s) {
      const std::int32_t drained = e.drain[static_cast<std::size_t>(sp.drain + s)];
      if (drained > 0)
        e.ops[static_cast<std::size_t>(e.stream_begin[static_cast<std::size_t>(s)] + drained - 1)].flags |=
            engine_detail::kOpWatched;
    }
  }
  return e;
}

void expect_same(const EngineProgram& a, const EngineProgram& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.prog, b.prog);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.stream_mask, b.stream_mask);
  EXPECT_EQ(a.stream_begin, b.stream_begin);
  EXPECT_EQ(a.stream_count, b.stream_count);
  EXPECT_EQ(a.drain, b.drain);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t k = 0; k < a.ops.size(); ++k) {
    const EngineOp& x = a.ops[k];
    const EngineOp& y = b.ops[k];
    ASSERT_EQ(x.issue_prefix, y.issue_prefix) << "record " << k;
    ASSERT_EQ(x.dur, y.dur) << "record " << k;
    ASSERT_EQ(x.index, y.index) << "record " << k;
    ASSERT_EQ(x.dep[0], y.dep[0]) << "record " << k;
    ASSERT_EQ(x.dep[1], y.dep[1]) << "record " << k;
    ASSERT_EQ(x.sms, y.sms) << "record " << k;
    ASSERT_EQ(x.flags, y.flags) << "record " << k;
    ASSERT_EQ(x.channel, y.channel) << "record " << k;
  }
  ASSERT_EQ(a.syncs.size(), b.syncs.size());
  for (std::size_t k = 0; k < a.syncs.size(); ++k) {
    const SyncPoint& x = a.syncs[k];
    const SyncPoint& y = b.syncs[k];
    EXPECT_EQ(x.index, y.index);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.pos, y.pos);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.issue_prefix, y.issue_prefix);
    EXPECT_EQ(x.drain, y.drain);
  }
}

TEST(Program, SealDerivesIssuePrefixPositionsAndStreamSizes) {
  std::mt19937_64 rng(20261204);
  for (int trial = 0; trial < 50; ++trial) {
    const int streams = 1 + trial % 6;
    const Program p = random_program(rng, streams, 1 + trial * 37);
    const auto& ops = p.ops();
    std::vector<std::int32_t> sizes(static_cast<std::size_t>(streams), 0);
    TimeNs prefix = 0;
    ASSERT_EQ(p.issue_prefix().size(), ops.size());
    ASSERT_EQ(p.pos_in_stream().size(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      prefix += ops[i].host_ns;
      EXPECT_EQ(p.issue_prefix()[i], prefix) << "op " << i;
      // The position is the number of earlier ops on the op's stream.
      std::int32_t earlier = 0;
      for (std::size_t j = 0; j < i; ++j) earlier += ops[j].stream == ops[i].stream ? 1 : 0;
      EXPECT_EQ(p.pos_in_stream()[i], earlier) << "op " << i;
      ++sizes[ops[i].stream];
    }
    EXPECT_EQ(p.stream_sizes(), sizes);
  }
}

TEST(Program, CompileEqualsTheTwoPassReference) {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 60; ++trial) {
    const int streams = 1 + trial % 6;
    const Program p = random_program(rng, streams, 1 + trial * 53);
    expect_same(engine_detail::compile(p), reference_compile(p), "trial " + std::to_string(trial));
  }
}

// A program like `p` (unsealed copy of its ops) with the SMs of `ops` set to `sms`, sealed.
Program with_sms(const Program& p, const std::vector<std::int32_t>& ops, std::uint16_t sms) {
  Program q;
  for (const OpSpec& o : p.ops()) q.add(o);
  for (const std::int32_t i : ops) q.op(i).sms = sms;
  for (int s = 0; s < p.var_slots(); ++s) q.new_var_slot();
  q.seal(p.streams());
  return q;
}

TEST(CompiledProgram, RecompiledSmsEqualAFreshCompile) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const int streams = 2 + trial % 5;
    const Program p = random_program(rng, streams, 20 + trial * 41);
    std::vector<std::int32_t> comm;
    for (int i = 0; i < p.size(); ++i) {
      if (p.ops()[static_cast<std::size_t>(i)].kind == OpKind::comm) comm.push_back(i);
    }
    ASSERT_FALSE(comm.empty());
    const auto base = compile_program(p);
    EXPECT_TRUE(same_compiled(*base, *compile_program(p)));
    EXPECT_GT(compiled_bytes(*base), static_cast<std::size_t>(p.size()) * sizeof(EngineOp));
    const Program q = with_sms(p, comm, 77);
    const auto fresh = compile_program(q);
    const auto patched = recompile_sms(*base, q, comm);
    EXPECT_TRUE(same_compiled(*patched, *fresh)) << "trial " << trial;
    EXPECT_FALSE(same_compiled(*base, *fresh)) << "trial " << trial << ": the SMs are compiled";
    // And back, from the patched form.
    EXPECT_TRUE(same_compiled(*recompile_sms(*patched, p, comm), *base)) << "trial " << trial;
  }
  // Refused: another program's base, an index out of range, an unsealed program.
  const Program a = random_program(rng, 3, 50);
  const Program b = random_program(rng, 3, 60);
  EXPECT_THROW(recompile_sms(*compile_program(a), b, {}), std::logic_error);
  EXPECT_THROW(recompile_sms(*compile_program(a), a, {50}), std::logic_error);
  // Same op count, other streams.
  Program c;
  Program d;
  for (int i = 0; i < 3; ++i) {
    c.add(engine_test::compute(5));
    d.add(i == 0 ? engine_test::comm(5, ChannelKind::ep, CommClass::ep, 1) : engine_test::compute(5));
  }
  c.seal(2);
  d.seal(2);
  EXPECT_THROW(recompile_sms(*compile_program(c), d, {0}), std::logic_error);
  EXPECT_THROW(compile_program(Program{}), std::logic_error);
}

// The engine replays a workload that carries its compiled programs exactly as one that does not, and refuses
// a compiled form of another program.
TEST(CompiledProgram, EngineReplaysACarriedCompiledProgramAsItsOwn) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 20; ++trial) {
    // One rank; streams 1 and 2 rendezvous on its EP and TP channels of one member.
    Program p;
    const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int i = 0; i < 200; ++i) {
      const int stream = pick(0, 2);
      OpSpec op = stream == 0   ? engine_test::compute(pick(1, 4000), pick(0, 2000))
                  : stream == 1 ? engine_test::comm(pick(1, 3000), ChannelKind::ep, CommClass::ep, 1,
                                                    static_cast<std::uint16_t>(pick(0, 24)))
                                : engine_test::comm(pick(1, 3000), ChannelKind::tp, CommClass::tp, 2,
                                                    static_cast<std::uint16_t>(pick(0, 24)));
      if (i > 0 && pick(0, 3) == 0) op.deps[0] = pick(0, i - 1);
      if (pick(0, 25) == 0) op.sync = pick(0, 1) == 0 ? HostSync::op : HostSync::device;
      p.add(op);
    }
    const Workload plain = engine_test::single(p, 132, 3);
    Workload carried = plain;
    carried.compiled = {compile_program(carried.programs[0])};
    carried.validate();
    const EngineResult x = run_engine(plain);
    const EngineResult y = run_engine(carried);
    EXPECT_EQ(x.iteration, y.iteration) << "trial " << trial;
    EXPECT_EQ(x.events, y.events) << "trial " << trial;
    ASSERT_EQ(x.ranks.size(), y.ranks.size());
    EXPECT_EQ(x.ranks[0].compute, y.ranks[0].compute);
    EXPECT_EQ(x.ranks[0].host_wait, y.ranks[0].host_wait);
    EXPECT_EQ(x.ranks[0].bubble, y.ranks[0].bubble);
    EXPECT_EQ(x.ranks[0].idle, y.ranks[0].idle);
    for (int k = 0; k < kCommClasses; ++k) EXPECT_EQ(x.ranks[0].exposed[k], y.ranks[0].exposed[k]);
    Workload other = plain;
    Program shorter;
    shorter.add(engine_test::compute(5));
    shorter.seal(3);
    other.compiled = {compile_program(shorter)};
    EXPECT_THROW(run_engine(other), std::logic_error);
  }
}

}  // namespace
}  // namespace moetwin
