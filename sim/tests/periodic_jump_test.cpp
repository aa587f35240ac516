// The engine's periodic steady state (EngineOptions::periodic, periodic_jump.cpp): a replay that jumps over
// the microbatches that repeat must give every rank the stats, iteration time and event counts of the
// replay that steps through them, and of the plain op-by-op replay. Pipelines of real schedules
// (emit_pipeline: 1F1B, interleaved, blocking and overlapped P2P, device syncs), with a collective that
// holds SMs, a DP stream that waits for the last backward, host costs, and durations that repeat every
// microbatch, every second or third one (token remainders rotating over the experts), or stop repeating
// late; then the workloads of real scenarios. And when lanes replace the per-rank engine (LaneMode).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>

#include "engine_test_expect.hpp"
#include "engine_test_ops.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/models/dispatcher_moe_cost.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/schedule.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using engine_test::comm;
using engine_test::expect_same_replay;
using engine_test::expect_same_stats;

// The replay with jumps against the same replay stepping through every period (the same events, stale
// ones included: the shortcuts are the same) and against the plain op-by-op replay (every stat, and the
// events less the stale ones: how many wakes an earlier wake supersedes depends on how often streams are
// retried, which the shortcuts change; random pipeline 3 below pops 2,080 wakes with them and 2,082
// without, 822 and 824 of them superseded). Returns the periods jumped.
// The jump is the per-rank engine's: lanes (EngineOptions::lanes), which would take the ranks of a stage
// whose durations differ a little, are off here.
std::uint64_t compare(const Workload& w, const std::string& what) {
  EngineOptions jumping;
  jumping.lanes = LaneMode::off;
  EngineOptions stepping = jumping;
  stepping.periodic = false;
  EngineOptions plain;
  plain.shortcuts = false;
  const EngineResult jumped = run_engine(w, jumping);
  const EngineResult stepped = run_engine(w, stepping);
  const EngineResult reference = run_engine(w, plain);
  EXPECT_EQ(stepped.periods_skipped, 0u) << what;
  EXPECT_EQ(reference.periods_skipped, 0u) << what;
  expect_same_stats(stepped, jumped, what + " (jumped vs stepped)");
  EXPECT_EQ(stepped.events, jumped.events) << what;
  EXPECT_EQ(stepped.stale_events, jumped.stale_events) << what;
  expect_same_replay(reference, jumped, what + " (jumped vs op by op)");
  return jumped.periods_skipped;
}

// A stage's forward and backward steps: compute, an EP collective on its own stream that holds SMs
// (the compute that follows waits for it), compute again; per rank and microbatch durations from
// `expert` (a var slot per op, so ranks and microbatches may differ). After the last backward a DP
// reduce-scatter on stream 5 that waits for it, then an optimizer step.
struct StageShape {
  TimeNs attention = 700;
  TimeNs a2a = 150;
  std::uint16_t a2a_sms = 20;
  std::int32_t host_ns = 30;
  int slow_host_microbatch = -1;  // this microbatch's ops take 3x host_ns to issue
  TimeNs dp = 900;
  // Duration of the expert op of (rank, microbatch, chunk, backward).
  std::function<TimeNs(int, int, int, bool)> expert = [](int, int, int, bool backward) {
    return backward ? TimeNs{1100} : TimeNs{500};
  };
};

struct VarRequest {
  int microbatch, chunk;
  bool backward;
};

class ShapeEmitter : public StageEmitter {
 public:
  ShapeEmitter(const StageShape& s, std::vector<VarRequest>& vars) : s_(s), vars_(vars) {}
  int forward(Program& p, const StepContext& c) override { return step(p, c, false); }
  int backward(Program& p, const StepContext& c) override { return step(p, c, true); }
  void chunk_grads_ready(Program& p, int, int last_op) override { last_backward_ = last_op, (void)p; }
  void epilogue(Program& p) override {
    OpSpec rs = comm(s_.dp, ChannelKind::dp, CommClass::dp, 5, 0);
    rs.deps[0] = last_backward_;
    rs.label = p.label("dp.reduce_scatter");
    const int r = p.add(rs);
    OpSpec opt;
    opt.duration = 400;
    opt.deps[0] = r;
    opt.phase = OpPhase::optimizer;
    opt.label = p.label("optimizer");
    p.add(opt);
  }
  OpSpec p2p(bool, int, int) override {
    OpSpec op;
    op.duration = 120;
    op.host_ns = s_.host_ns;
    return op;
  }

 private:
  int step(Program& p, const StepContext& c, bool backward) {
    const OpPhase phase = backward ? OpPhase::backward : OpPhase::forward;
    const auto tag = [&](OpSpec op, const char* label) {
      op.microbatch = c.microbatch;
      op.chunk = static_cast<std::int16_t>(c.chunk);
      op.phase = phase;
      op.host_ns = c.microbatch == s_.slow_host_microbatch ? 3 * s_.host_ns : s_.host_ns;
      op.label = p.label(label);
      return op;
    };
    OpSpec attn;
    attn.duration = backward ? 2 * s_.attention : s_.attention;
    attn.deps[0] = c.input_dep;
    const int a = p.add(tag(attn, "attention"));
    OpSpec dispatch = tag(comm(s_.a2a, ChannelKind::ep, CommClass::ep, 2, s_.a2a_sms), "ep.dispatch");
    dispatch.deps[0] = a;
    const int d = p.add(dispatch);
    OpSpec expert = tag(OpSpec{}, "experts");
    expert.deps[0] = d;
    expert.var_slot = p.new_var_slot();
    vars_.push_back(VarRequest{c.microbatch, c.chunk, backward});
    const int e = p.add(expert);
    OpSpec combine = tag(comm(s_.a2a, ChannelKind::ep, CommClass::ep, 2, s_.a2a_sms), "ep.combine");
    combine.deps[0] = e;
    const int k = p.add(combine);
    OpSpec post = tag(OpSpec{}, "post");
    post.duration = 60;
    post.deps[0] = k;
    return p.add(post);
  }

  StageShape s_;
  std::vector<VarRequest>& vars_;
  int last_backward_ = kNoOp;
};

struct PipelineShape {
  int pp = 2, vpp = 1, microbatches = 16, ranks_per_stage = 2;
  P2pMode mode = P2pMode::blocking;
  bool device_sync = true;
  StageShape stage;
};

// pp stages of `ranks_per_stage` ranks (an EP group and a DP group each; pipeline i runs through rank i
// of every stage).
Workload build(const PipelineShape& s) {
  Workload w;
  w.sms = 132;
  const int n = s.pp * s.ranks_per_stage;
  w.init_ranks(n);
  std::vector<std::vector<VarRequest>> vars(static_cast<std::size_t>(s.pp));
  for (int st = 0; st < s.pp; ++st) {
    Program p;
    ShapeEmitter e(s.stage, vars[static_cast<std::size_t>(st)]);
    PipelineOptions opt;
    opt.p2p_mode = s.mode;
    opt.p2p_device_sync = s.device_sync;
    emit_pipeline(p, pipeline_schedule(s.pp, s.vpp, s.microbatches, st, s.mode), s.vpp, s.microbatches, e,
                  opt);
    p.seal(kStreams);
    w.programs.push_back(std::move(p));
  }
  std::vector<std::vector<int>> stages;
  for (int st = 0; st < s.pp; ++st) {
    stages.emplace_back();
    for (int i = 0; i < s.ranks_per_stage; ++i) {
      const int r = st * s.ranks_per_stage + i;
      w.rank_program[static_cast<std::size_t>(r)] = st;
      stages.back().push_back(r);
    }
  }
  w.add_group_channels(ChannelKind::ep, stages);
  w.add_group_channels(ChannelKind::dp, stages);
  for (int i = 0; i < s.ranks_per_stage; ++i) {
    std::vector<int> pipeline;
    for (int st = 0; st < s.pp; ++st) pipeline.push_back(st * s.ranks_per_stage + i);
    w.add_pipeline_channels(pipeline);
  }
  std::int64_t offset = 0;
  for (int r = 0; r < n; ++r) {
    w.var_offset[static_cast<std::size_t>(r)] = offset;
    for (const VarRequest& v : vars[static_cast<std::size_t>(r / s.ranks_per_stage)]) {
      w.var_durations.push_back(s.stage.expert(r, v.microbatch, v.chunk, v.backward));
      ++offset;
    }
  }
  return w;
}

TEST(PeriodicJump, OneFOneBJumpsTheSteadyState) {
  PipelineShape s;
  s.pp = 4;
  s.microbatches = 48;
  const std::uint64_t skipped = compare(build(s), "1F1B pp4 m48");
  // 48 microbatches on 4 stages: the steady state is most of them.
  EXPECT_GE(skipped, 30u);
  EXPECT_LT(skipped, 48u);
}

TEST(PeriodicJump, InterleavedAndOverlappedP2pJump) {
  PipelineShape s;
  s.pp = 2;
  s.vpp = 2;
  s.microbatches = 32;
  EXPECT_GT(compare(build(s), "vpp2 blocking"), 0u);
  s.device_sync = false;
  EXPECT_GT(compare(build(s), "vpp2 blocking, no device sync"), 0u);
  s.mode = P2pMode::overlapped;
  EXPECT_GT(compare(build(s), "vpp2 overlapped P2P"), 0u);
}

TEST(PeriodicJump, DurationsThatAlternateJumpOverWholeCycles) {
  PipelineShape s;
  s.pp = 3;
  s.microbatches = 60;
  // Ranks differ, and a rank's expert time cycles over three microbatches (a token remainder rotating
  // over the ranks of the EP group): the state repeats every third microbatch only.
  s.stage.expert = [](int rank, int mb, int, bool backward) {
    const TimeNs extra = (mb + rank) % 3 == 0 ? 7 : 0;
    return (backward ? TimeNs{1100} : TimeNs{500}) + extra + rank;
  };
  EXPECT_GT(compare(build(s), "period 3"), 0u);
}

TEST(PeriodicJump, StopsWhereTheOpsStopRepeating) {
  PipelineShape s;
  s.pp = 2;
  s.microbatches = 40;
  // One late microbatch's expert op is slower on one rank: the jump must end before it, and the replay
  // must still step through it.
  for (const int late : {30, 36, 38, 39}) {
    s.stage.expert = [late](int rank, int mb, int, bool backward) {
      const TimeNs base = backward ? 1100 : 500;
      return mb == late && rank == 1 ? base + 333 : base;
    };
    compare(build(s), "late change at microbatch " + std::to_string(late));
  }
  // Forever changing durations: nothing repeats, nothing is jumped.
  s.stage.expert = [](int, int mb, int, bool) { return TimeNs{500} + mb; };
  EXPECT_EQ(compare(build(s), "drifting"), 0u);
}

TEST(PeriodicJump, HostBoundStagesJump) {
  PipelineShape s;
  s.pp = 2;
  s.microbatches = 32;
  s.stage.host_ns = 900;  // the host issues slower than the GPU runs
  EXPECT_GT(compare(build(s), "host bound"), 0u);
  // One late microbatch issues slower: the host's issue times stop repeating there.
  for (const int late : {20, 26, 29}) {
    s.stage.slow_host_microbatch = late;
    compare(build(s), "host bound, slow host at microbatch " + std::to_string(late));
  }
  s.stage.slow_host_microbatch = -1;
  s.device_sync = false;
  compare(build(s), "host bound, no device sync");
}

TEST(PeriodicJump, RandomPipelinesMatchTheSteppedReplay) {
  std::mt19937_64 gen(20261204);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  std::uint64_t jumped = 0;
  for (int k = 0; k < 60; ++k) {
    PipelineShape s;
    s.pp = pick(1, 4);
    s.vpp = s.pp > 1 && pick(0, 2) == 0 ? 2 : 1;
    s.microbatches = s.pp * pick(2, 12);
    s.ranks_per_stage = pick(1, 3);
    s.mode = s.vpp > 1 && pick(0, 1) == 0 ? P2pMode::overlapped : P2pMode::blocking;
    s.device_sync = pick(0, 1) == 0;
    s.stage.attention = pick(100, 1500);
    s.stage.a2a = pick(10, 800);
    s.stage.a2a_sms = static_cast<std::uint16_t>(pick(0, 40));
    s.stage.host_ns = pick(0, 600);
    s.stage.dp = pick(100, 3000);
    s.stage.slow_host_microbatch = pick(0, 2) == 0 ? pick(0, s.microbatches - 1) : -1;
    const int cycle = pick(1, 4);
    const int late = pick(0, 3) == 0 ? pick(0, s.microbatches - 1) : -1;
    const int jitter = pick(0, 50);
    s.stage.expert = [=](int rank, int mb, int chunk, bool backward) {
      TimeNs t = (backward ? 900 : 400) + 13 * chunk + ((mb + rank) % cycle) * jitter;
      if (mb == late && rank == 0) t += 211;
      return t;
    };
    jumped += compare(build(s), "random pipeline " + std::to_string(k));
    if (HasFailure()) return;
  }
  EXPECT_GT(jumped, 0u);  // the test reaches the jump
}

// LaneMode::near_balanced (the default): the ranks of a stage whose durations differ by a token's worth
// replay as lanes; ranks whose durations differ by half do not (there lanes split and restart). Either way
// the result is the op-by-op replay's.
TEST(LaneGate, NearBalancedRanksReplayAsLanes) {
  PipelineShape s;
  s.pp = 2;
  s.microbatches = 8;
  s.ranks_per_stage = 4;
  EngineOptions plain;
  plain.shortcuts = false;
  for (const TimeNs per_rank : {TimeNs{2}, TimeNs{300}}) {
    s.stage.expert = [per_rank](int rank, int mb, int, bool backward) {
      return (backward ? TimeNs{1000} : TimeNs{600}) + per_rank * ((rank + mb) % 4);
    };
    const Workload w = build(s);
    const EngineResult lanes = run_engine(w, {});
    expect_same_stats(run_engine(w, plain), lanes, "per-rank step " + std::to_string(per_rank));
    if (per_rank == 2) {
      EXPECT_EQ(lanes.lane_groups, 2);  // one group per stage: ranks up to 6 ns apart on 606-1,006 ns
    } else {
      EXPECT_EQ(lanes.lane_groups, 0);  // up to 900 ns apart on 1,500-1,900 ns: rank by rank
    }
  }
}

// --- Workloads of real scenarios ---

using test_support::catalog;

Workload scenario_workload(const std::string& body) {
  const Scenario s = parse_scenario(body, "test.toml", catalog());
  WorkloadSeams seams;
  seams.moe = std::make_shared<DispatcherMoeCost>(s);
  return build_workload(s, {}, seams).workload;
}

std::string qwen(int pp, int vpp, int gbs, const std::string& recompute, bool overlap,
                 const std::string& dispatcher, const std::string& routing = "") {
  return "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = " + std::to_string(8 * pp) +
         "\n[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 1\n[parallelism]\ntp = 2\npp = " +
         std::to_string(pp) + "\nvpp = " + std::to_string(vpp) + "\nep = " + std::to_string(8 / pp) +
         "\netp = 1\ncp = 1\ndp = " + std::to_string(4 / pp) +
         "\n[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(gbs) +
         "\nseq_length = 4096\nrecompute = \"" + recompute +
         "\"\noverlap_moe_a2a = " + (overlap ? "true" : "false") + "\n[dispatcher]\nname = \"" + dispatcher +
         "\"\n" + routing;
}

TEST(PeriodicJumpScenario, RealWorkloadsEqualTheSteppedReplay) {
  for (const std::string dispatcher : {"nccl-alltoall", "deepep-uccl"}) {
    EXPECT_GT(compare(scenario_workload(qwen(2, 1, 64, "full", false, dispatcher)), dispatcher + " pp2 full"),
              0u);
    EXPECT_GT(compare(scenario_workload(qwen(4, 1, 64, "selective", false, dispatcher)),
                      dispatcher + " pp4 selective"),
              0u);
    compare(scenario_workload(qwen(2, 2, 64, "none", true, dispatcher)), dispatcher + " vpp2 overlap");
  }
  // Skewed routing: every microbatch routes differently, so nothing repeats; the replay steps.
  EXPECT_EQ(compare(scenario_workload(qwen(2, 1, 32, "full", false, "deepep-uccl",
                                           "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.0\nseed = 3\n")),
                    "zipf"),
            0u);
}

}  // namespace
}  // namespace moetwin
