#include "moetwin/sim/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/engine/trace.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/trace_ranks.hpp"
#include "moetwin/test_support/parallel_layout.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/workload_ops.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

struct Shape {
  std::string model = "qwen3-30b-a3b";
  std::string instance = "p5en.48xlarge";
  int nodes = 1, tp = 2, pp = 2, vpp = 1, ep = 4, dp = 2, mb = 1, gbs = 8;
  std::string recompute = "none";
  bool overlap = false;
  bool overlap_grad_reduce = true;
  std::string dispatcher = "nccl-alltoall";
  int layers = 0;  // 0 = the model's
};

Scenario make(const Shape& s) {
  std::string t = "name = \"t\"\n[model]\nname = \"" + s.model + "\"\n";
  if (s.layers > 0) t += "layers = " + std::to_string(s.layers) + "\n";
  t += "[cluster]\ninstance = \"" + s.instance + "\"\nnodes = " + std::to_string(s.nodes) + "\n";
  t += "[parallelism]\ntp = " + std::to_string(s.tp) + "\npp = " + std::to_string(s.pp) +
       "\nvpp = " + std::to_string(s.vpp) + "\nep = " + std::to_string(s.ep) +
       "\netp = 1\ncp = 1\ndp = " + std::to_string(s.dp) + "\n";
  t += "[training]\nmicro_batch = " + std::to_string(s.mb) + "\nglobal_batch = " + std::to_string(s.gbs) +
       "\nseq_length = 4096\nrecompute = \"" + s.recompute +
       "\"\noverlap_moe_a2a = " + (s.overlap ? "true" : "false") +
       "\noverlap_grad_reduce = " + (s.overlap_grad_reduce ? "true" : "false") + "\n";
  t += "[dispatcher]\nname = \"" + s.dispatcher + "\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

TEST(RankGroups, MegatronOrder) {
  const RankGroups g = megatron_rank_groups(test_support::parallel_layout(8, 8, 32, 4), 8);
  EXPECT_EQ(g.stage_size, 32);
  EXPECT_EQ(g.tp.front(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g.dp.front(), (std::vector<int>{0, 8, 16, 24}));
  ASSERT_EQ(g.ep.size(), 8u);  // one EP group of 32 per stage
  EXPECT_EQ(g.ep.front().size(), 32u);
  EXPECT_EQ(g.ep[1].front(), 32);
  EXPECT_EQ(g.pipelines.front(), (std::vector<int>{0, 32, 64, 96, 128, 160, 192, 224}));
  EXPECT_EQ(g.edp.front(), (std::vector<int>{0}));  // edp = tp*dp/ep = 1
}

// Invariants every replay must hold: every op runs exactly once, the classes add up to the iteration,
// nothing negative, busy time <= iteration time.
void check_invariants(const Prediction& p) {
  const Workload& w = p.built.workload;
  ASSERT_EQ(p.engine.ranks.size(), static_cast<std::size_t>(w.ranks()));
  for (int r = 0; r < w.ranks(); ++r) {
    const RankStats& s = p.engine.ranks[static_cast<std::size_t>(r)];
    const Program& prog = w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(r)])];
    EXPECT_EQ(s.ops_run, prog.size()) << "rank " << r;
    EXPECT_EQ(s.accounted(), p.engine.iteration) << "rank " << r;
    EXPECT_GE(s.compute, 0);
    EXPECT_GE(s.bubble, 0);
    EXPECT_GE(s.idle, 0);
    EXPECT_GE(s.host_wait, 0);
    for (TimeNs e : s.exposed) EXPECT_GE(e, 0);
    EXPECT_LE(s.compute + s.exposed_total(), p.engine.iteration);
    EXPECT_LE(s.finish, p.engine.iteration);
  }
}

TEST(Workload, InvariantsAcrossShapes) {
  for (const char* rc : {"none", "selective", "full"}) {
    Shape s;
    s.recompute = rc;
    check_invariants(predict(make(s)));
  }
  Shape v;
  v.vpp = 2;
  v.layers = 48;
  v.gbs = 16;
  check_invariants(predict(make(v)));
  v.overlap = true;
  check_invariants(predict(make(v)));
  v.dispatcher = "deepep-uccl";
  check_invariants(predict(make(v)));
}

// Issue 52: overlap_moe_a2a with pp 1 and vpp 1 (NVIDIA's DGX rows run it) replays Megatron-Core's combined
// 1F1B of forward_backward_no_pipelining: F0, then F(i) beside B(i - 1), the A2As on their own stream.
// Hand values on 4 microbatches: three forward/backward pairs (the first forward and last backward alone),
// every A2A on the EP stream, and no iteration slower than without the overlap; two microbatches' activations
// are held at the peak (accounting/memory_model.cpp).
TEST(Workload, OverlapWithoutAPipelineRunsTheCombinedNoPipeliningSchedule) {
  Shape s;
  s.tp = 1;
  s.pp = 1;
  s.ep = 8;
  s.dp = 8;
  s.gbs = 32;  // 4 microbatches per data-parallel rank
  s.layers = 4;
  s.overlap = true;
  const Prediction on = predict(make(s));
  check_invariants(on);
  const Program& p = on.built.workload.programs[0];
  int a2a = 0, on_ep_stream = 0, pairs = 0;
  for (std::size_t i = 0; i < p.ops().size(); ++i) {
    const OpSpec& op = p.ops()[i];
    if (op.kind == OpKind::comm && op.comm_class == CommClass::ep) {
      ++a2a;
      if (op.stream == kStreamEpComm) ++on_ep_stream;
    }
    // A pair interleaves its halves: a backward op right after a forward op, compute on both sides.
    if (i > 0 && op.phase == OpPhase::backward && p.ops()[i - 1].phase == OpPhase::forward) ++pairs;
  }
  EXPECT_GT(a2a, 0);
  EXPECT_EQ(on_ep_stream, a2a);
  s.overlap = false;
  const Prediction off = predict(make(s));
  EXPECT_LE(on.iteration_s, off.iteration_s);
  EXPECT_GT(pairs, 3);  // 3 pairs x 4 layers interleave many times; off: F then B only at step edges
  int off_switches = 0;
  const Program& q = off.built.workload.programs[0];
  for (std::size_t i = 1; i < q.ops().size(); ++i) {
    if (q.ops()[i].phase == OpPhase::backward && q.ops()[i - 1].phase == OpPhase::forward) ++off_switches;
  }
  EXPECT_EQ(off_switches, 4);  // F0 B0 F1 B1 ...: one forward-to-backward edge per microbatch
}

// Program indices of the ops labelled `label` in `p`.
std::vector<int> ops_labelled(const Program& p, const std::string& label) {
  std::vector<int> out;
  for (int i = 0; i < p.size(); ++i) {
    const OpSpec& op = p.ops()[static_cast<std::size_t>(i)];
    if (p.labels()[static_cast<std::size_t>(op.label)] == label) out.push_back(i);
  }
  return out;
}

// Megatron's embedding- and loss-accounted split with one slot per chunk (scenarios/pipeline_layout.hpp):
// 2 layers on PP2 VPP2 = 4 chunks is E, 1D, 1D, Loss. Stage 0's chunk 0 holds only the embedding, stage 1's
// chunk 1 (virtual 1) only the output layer and loss; both still run those ops and their pipeline sends.
TEST(Workload, EmbeddingOnlyAndLossOnlyChunksReplay) {
  Shape s;
  s.vpp = 2;
  s.layers = 2;
  s.gbs = 8;  // 4 microbatches on DP2
  const Prediction pr = predict(make(s));
  check_invariants(pr);
  const Workload& w = pr.built.workload;
  const auto program_of = [&w](int rank) -> const Program& {
    return w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(rank)])];
  };
  const int stage_size = pr.built.groups.stage_size;
  const Program& s0 = program_of(0);
  const Program& s1 = program_of(stage_size);
  const auto chunks_of = [](const Program& p, const std::string& label) {
    std::vector<int> out;
    for (const int i : ops_labelled(p, label)) out.push_back(p.ops()[static_cast<std::size_t>(i)].chunk);
    return out;
  };
  const auto only = [](const std::vector<int>& chunks, int c) {
    return !chunks.empty() && std::all_of(chunks.begin(), chunks.end(), [c](int x) { return x == c; });
  };
  // Stage 0: embedding (forward and backward) on chunk 0, once per microbatch; its one decoder layer on
  // chunk 1 (model chunk 2); chunk 0 runs no attention.
  EXPECT_EQ(chunks_of(s0, "embedding"), (std::vector<int>(4, 0)));
  EXPECT_EQ(chunks_of(s0, "embedding_bwd"), (std::vector<int>(4, 0)));
  EXPECT_TRUE(only(chunks_of(s0, "attn.qkv"), 1));
  EXPECT_TRUE(chunks_of(s0, "output_layer").empty());
  // Stage 1: output layer and loss on chunk 1 (model chunk 3), its decoder layer on chunk 0 (model chunk 1).
  EXPECT_EQ(chunks_of(s1, "output_layer"), (std::vector<int>(4, 1)));
  EXPECT_EQ(chunks_of(s1, "loss.cross_entropy"), (std::vector<int>(4, 1)));
  EXPECT_TRUE(only(chunks_of(s1, "attn.qkv"), 0));
  EXPECT_TRUE(chunks_of(s1, "embedding").empty());
  // Pipeline sends: the embedding-only chunk sends its activation forward for every microbatch, the
  // loss-only chunk its gradient backward (ring of two stages: every chunk but the model's last sends
  // forward, every chunk but the first sends backward).
  const std::vector<int> act0 = chunks_of(s0, "pp.activation");
  EXPECT_EQ(std::count(act0.begin(), act0.end(), 0), 4);
  const std::vector<int> grad1 = chunks_of(s1, "pp.gradient");
  EXPECT_EQ(std::count(grad1.begin(), grad1.end(), 1), 4);
}

TEST(Workload, GradientBucketsReduceDuringTheLastBackward) {
  // qwen3-30b-a3b, TP2 PP2 DP2: a stage's 24 layers hold ~230M dense parameters per rank, so Megatron's
  // 40M-parameter buckets (max(40M, 1M x dp)) fill several times during the last microbatch's backward
  // and each reduce-scatter is issued there, before the stage's last backward op; the remainder (the
  // last layers' partial bucket, embedding) follows the chunk's last backward.
  Shape s;
  s.gbs = 8;  // 4 microbatches
  const Prediction on = predict(make(s));
  const Program& p = on.built.workload.programs[0];
  const std::vector<int> rs = ops_labelled(p, "dp.grad_reduce_scatter");
  ASSERT_GE(rs.size(), 4u);
  int last_backward = -1;
  for (int i = 0; i < p.size(); ++i) {
    if (p.ops()[static_cast<std::size_t>(i)].phase == OpPhase::backward) last_backward = i;
  }
  EXPECT_LT(rs.front(), last_backward);
  EXPECT_LT(rs[rs.size() - 2], last_backward);
  EXPECT_GT(rs.back(), last_backward);
  // Bucketed or not, the same gradients are reduced: one reduce-scatter of all of them after the pipeline
  // costs no less in total than the buckets (each bucket pays the ring's step latencies again).
  s.overlap_grad_reduce = false;
  const Prediction off = predict(make(s));
  const Program& q = off.built.workload.programs[0];
  const std::vector<int> one = ops_labelled(q, "dp.grad_reduce_scatter");
  ASSERT_EQ(one.size(), 1u);
  TimeNs buckets = 0;
  for (const int i : rs) buckets += p.ops()[static_cast<std::size_t>(i)].duration;
  const TimeNs whole = q.ops()[static_cast<std::size_t>(one.front())].duration;
  EXPECT_GE(buckets, whole);
  EXPECT_LT(buckets, whole + static_cast<TimeNs>(rs.size()) * whole / 10);  // latency terms are small here
  // Overlapped with the last backward, the buckets leave less DP time exposed.
  const auto dp = static_cast<std::size_t>(CommClass::dp);
  EXPECT_LT(on.exposed[dp].max_s, off.exposed[dp].max_s);
}

TEST(Workload, RecomputeReadsTheForwardsDurationSlots) {
  // Full recompute re-runs each layer's forward: its A2As, expert GEMMs and permutes read the same
  // per-rank durations as the forward of that layer and microbatch, so they share the forward's var slots
  // (one stored duration per rank, not two). Every recompute var slot is also read by a forward op.
  Shape s;
  s.recompute = "full";
  s.dispatcher = "deepep-uccl";
  const Prediction p = predict(make(s));
  const Program& prog = p.built.workload.programs[0];
  std::vector<char> forward_slot(static_cast<std::size_t>(prog.var_slots()), 0);
  int var_ops = 0;
  for (const OpSpec& op : prog.ops()) {
    if (op.var_slot < 0) continue;
    ++var_ops;
    if (op.phase == OpPhase::forward) forward_slot[static_cast<std::size_t>(op.var_slot)] = 1;
  }
  int recompute_var_ops = 0;
  for (const OpSpec& op : prog.ops()) {
    if (op.var_slot < 0 || op.phase != OpPhase::recompute) continue;
    ++recompute_var_ops;
    EXPECT_TRUE(forward_slot[static_cast<std::size_t>(op.var_slot)]) << "slot " << op.var_slot;
  }
  EXPECT_GT(recompute_var_ops, 0);
  EXPECT_LE(prog.var_slots(), var_ops - recompute_var_ops);
}

TEST(Workload, TokensPerSecondNeverDropsWithLargerGlobalBatch) {
  Shape s;
  double last = 0;
  for (int gbs : {4, 8, 16, 32}) {
    s.gbs = gbs;
    const Prediction p = predict(make(s));
    EXPECT_GE(p.tokens_per_s, last) << "gbs " << gbs;
    last = p.tokens_per_s;
  }
}

TEST(Workload, MoreBandwidthOrFlopsNeverSlows) {
  Shape shape;
  shape.nodes = 2;
  shape.dp = 4;
  shape.ep = 8;
  shape.gbs = 16;
  const Scenario s = make(shape);
  const double base = predict(s).iteration_s;
  Scenario fast_net = s;
  fast_net.instance.nic_bandwidth *= 2;
  fast_net.gpu.nvlink_bandwidth *= 2;
  EXPECT_LE(predict(fast_net).iteration_s, base);
  Scenario fast_gpu = s;
  fast_gpu.gpu.bf16_flops *= 2;
  fast_gpu.gpu.hbm_bandwidth *= 2;
  const double faster = predict(fast_gpu).iteration_s;
  EXPECT_LE(faster, base);
  EXPECT_LT(faster, base);  // compute matters here
}

TEST(Workload, SmallModelIsLaunchBound) {
  // Qwen3-30B expert GEMMs are tiny: the GPU waits for the host (design brief, "Host-bound work").
  const Prediction p = predict(make(Shape{}));
  EXPECT_GT(p.host_wait.max_s, 0.0);
}

// The default profile with host times as given, not scaled by the instance CPU.
SimProfile unscaled_host() {
  SimProfile p;
  p.host_reference_cpu_score = 0;
  return p;
}

std::int64_t host_ns_of_rank(const BuiltWorkload& b, int rank) {
  std::int64_t sum = 0;
  const Program& prog = b.workload.programs.at(
      static_cast<std::size_t>(b.workload.rank_program.at(static_cast<std::size_t>(rank))));
  for (const OpSpec& op : prog.ops()) sum += op.host_ns;
  return sum;
}

TEST(Workload, LayerAndMoeHostTimePerLayerAndMicrobatch) {
  // Qwen3-30B-A3B: 48 MoE layers; pp 2 -> 24 per stage; gbs 8 / (dp 2 x mb 1) = 4 microbatches. Each
  // layer forward issues layer_host_s + moe_host_s, each backward half of that (backward_launch_s /
  // launch_s = 5 us / 10 us): 24 x 4 x (3 ms + 1.5 ms) = 432 ms more host time on every rank.
  const Scenario s = make(Shape{});
  const SimProfile neutral = unscaled_host();
  SimProfile host = neutral;
  host.layer_host_s = 1e-3;
  host.moe_host_s = 2e-3;
  const BuiltWorkload base = build_workload(s, neutral);
  const BuiltWorkload more = build_workload(s, host);
  for (int rank : {0, 7}) {
    EXPECT_NEAR(static_cast<double>(host_ns_of_rank(more, rank) - host_ns_of_rank(base, rank)), 432e6, 1e3)
        << rank;
  }
  // Full recompute re-runs each layer's Python forward: another 24 x 4 x 3 ms.
  Shape full;
  full.recompute = "full";
  const Scenario f = make(full);
  EXPECT_NEAR(static_cast<double>(host_ns_of_rank(build_workload(f, host), 0) -
                                  host_ns_of_rank(build_workload(f, neutral), 0)),
              432e6 + 288e6, 1e3);
  // Host-bound: the iteration gets longer.
  PredictOptions o;
  o.profile = host;
  EXPECT_GT(predict(s, o).iteration_s, predict(s).iteration_s);
}

// gpt-oss alternates a 128-token sliding window (even layers) with full causal attention (odd layers): the
// windowed layers' attention core, forward and backward, is priced on its band (126 keys per query of 2048
// at seq 4096: 6% of the FLOPs), the full layers' exactly as without a window.
TEST(Workload, SlidingWindowLayersPriceTheirAttentionCoreByTheWindow) {
  Shape sh;
  sh.model = "gpt-oss-20b";
  sh.tp = 1;
  sh.pp = 1;
  sh.ep = 8;
  sh.dp = 8;
  const Scenario windowed = make(sh);
  Scenario full = windowed;
  full.model.sliding_window = 0;
  full.model.full_attention_every = 0;
  const BuiltWorkload w = build_workload(windowed, SimProfile{});
  const BuiltWorkload f = build_workload(full, SimProfile{});
  for (const char* label : {"attn.core", "attn.core_bwd"}) {
    const std::vector<TimeNs> dw = test_support::rank0_durations(w, label);
    const std::vector<TimeNs> df = test_support::rank0_durations(f, label);
    ASSERT_EQ(dw.size(), 24u) << label;  // one microbatch, 24 layers
    ASSERT_EQ(df.size(), dw.size()) << label;
    // Forward ops run layers 0..23, backward ones 23..0: layer i is windowed iff i is even.
    const bool backward = std::string(label) == "attn.core_bwd";
    for (std::size_t i = 0; i < dw.size(); ++i) {
      const std::size_t layer = backward ? dw.size() - 1 - i : i;
      if (layer % 2 == 1) {
        EXPECT_EQ(dw[i], df[i]) << label << " layer " << layer;
      } else {
        EXPECT_GT(dw[i], 0) << label << " layer " << layer;
        EXPECT_LT(dw[i], df[i] / 2) << label << " layer " << layer;
      }
    }
  }
  EXPECT_LT(predict(windowed).iteration_s, predict(full).iteration_s);
}

// A MoE cost with fixed per-rank values, to check the fitted decorator's arithmetic; `adjust` (optional)
// changes them further (rank index, its cost).
class FixedMoeCost final : public MoeCostModel {
 public:
  using Adjust = std::function<void(std::size_t, MoeRankCost&)>;
  FixedMoeCost() = default;
  explicit FixedMoeCost(Adjust adjust) : adjust_(std::move(adjust)) {}
  std::string name() const override { return "fixed"; }
  void layer_costs(int, int, int, const std::vector<int>& ep_ranks,
                   std::vector<MoeRankCost>& out) const override {
    out.assign(ep_ranks.size(), MoeRankCost{});
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].tokens = 1000 * static_cast<std::int64_t>(i + 1);
      out[i].dispatch_ns = 1'000'000;
      out[i].combine_ns = 2'000'000;
      out[i].permute_ns = 5'000;
      if (adjust_) adjust_(i, out[i]);
    }
  }

 private:
  Adjust adjust_;
};

// One call of `m` on `ranks` (layer, microbatch and group 0).
std::vector<MoeRankCost> costs_on(const MoeCostModel& m, const std::vector<int>& ranks) {
  std::vector<MoeRankCost> out;
  m.layer_costs(0, 0, 0, ranks, out);
  return out;
}

TEST(Workload, ExpertHostTimeIsOnePythonOpPlusOneCallPerLocalExpert) {
  // Qwen3-30B-A3B, 128 experts over ep 4: 32 local experts; 24 layers per stage x 4 microbatches. The expert
  // MLP's Python ops cost launch_s whatever the expert count; its per-expert GEMMs cost
  // grouped_gemm_launch_s each: 2 per expert forward (fc1, fc2), 4 backward (their dgrad and wgrad).
  // 1 ms per call more: 24 x 4 x 6 x 32 x 1 ms = 18.432 s more host time on every rank.
  const Scenario s = make(Shape{});
  const SimProfile neutral = unscaled_host();
  SimProfile slow_calls = neutral;
  slow_calls.grouped_gemm_launch_s += 1e-3;
  const BuiltWorkload base = build_workload(s, neutral);
  const BuiltWorkload more = build_workload(s, slow_calls);
  EXPECT_NEAR(static_cast<double>(host_ns_of_rank(more, 0) - host_ns_of_rank(base, 0)), 18.432e9, 1e3);
  // Twice the local experts (ep 2): the Python part stays, the per-expert part doubles.
  Shape half_ep;
  half_ep.ep = 2;
  const Scenario h = make(half_ep);
  EXPECT_NEAR(static_cast<double>(host_ns_of_rank(build_workload(h, slow_calls), 0) -
                                  host_ns_of_rank(build_workload(h, neutral), 0)),
              2 * 18.432e9, 1e3);
}

TEST(ScaledMoeCost, ScaleLatencyAndPerCopyTime) {
  // dispatch = 2 x 1 ms + 0.5 ms + 10 ns x copies; combine = 2 x 2 ms + 0.5 ms + 10 ns x copies.
  const ScaledMoeCost m(std::make_shared<FixedMoeCost>(), 2.0, 0.5e-3, 10e-9);
  const std::vector<MoeRankCost> out = costs_on(m, {4, 5});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dispatch_ns, 2'510'000);  // 1000 copies
  EXPECT_EQ(out[1].dispatch_ns, 2'520'000);  // 2000 copies
  EXPECT_EQ(out[1].combine_ns, 4'520'000);
  EXPECT_EQ(out[1].permute_ns, 5'000);  // compute kernels are left alone
  EXPECT_THROW(ScaledMoeCost(std::make_shared<FixedMoeCost>(), 1.0, 0.0, -1e-9), std::logic_error);
}

TEST(ScaledMoeCost, HandshakeLatencyIsNotScaled) {
  // The inner model says 0.3 ms of the 1 ms dispatch and 0.4 ms of the 2 ms combine are handshake
  // latency: dispatch = 0.3 + 2 x 0.7 + 0.5 ms + 10 ns x copies, combine = 0.4 + 2 x 1.6 + 0.5 ms + ...
  const auto with_latency = std::make_shared<FixedMoeCost>([](std::size_t, MoeRankCost& c) {
    c.dispatch_latency_ns = 300'000;
    c.combine_latency_ns = 400'000;
  });
  const ScaledMoeCost m(with_latency, 2.0, 0.5e-3, 10e-9);
  std::vector<MoeRankCost> out = costs_on(m, {4, 5});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dispatch_ns, 2'210'000);  // 1000 copies
  EXPECT_EQ(out[1].combine_ns, 4'120'000);   // 2000 copies
  // The per-call time joins the handshake as time that moves no bytes (the flow model's latency).
  EXPECT_EQ(out[0].dispatch_latency_ns, 800'000);
  EXPECT_EQ(out[1].combine_latency_ns, 900'000);
  // Scale 1 and no added time: the inner model's times exactly.
  out = costs_on(ScaledMoeCost(with_latency, 1.0), {4, 5});
  EXPECT_EQ(out[1].dispatch_ns, 1'000'000);
  EXPECT_EQ(out[1].combine_ns, 2'000'000);
}

TEST(ScaledMoeCost, PipelineFillPerPeerAndHidden) {
  // 4 GPUs per node, rails 2 x 25 GB/s = 50 GB/s per GPU, NVLink 400 GB/s; hidden 1000, bf16; 100 tokens
  // per peer. Group {0, 1, 4, 5} spans two nodes: fill = 100 x 3 peers x 1000 x 2 B / 50 GB/s = 12 us.
  A2aFillGeometry g;
  g.tokens_per_peer = 100;
  g.hidden = 1000;
  g.bytes_per_element = 2;
  g.gpus_per_node = 4;
  g.inter_node_bandwidth = 50e9;
  g.intra_node_bandwidth = 400e9;
  EXPECT_DOUBLE_EQ(g.seconds({0, 1, 4, 5}), 12e-6);
  // Inside one node {0, 1, 2, 3}: 600'000 bytes / 400 GB/s = 1.5 us. One rank: no peers, no fill.
  EXPECT_DOUBLE_EQ(g.seconds({0, 1, 2, 3}), 1.5e-6);
  EXPECT_EQ(g.seconds({3}), 0);
  // 8 ranks over two nodes: 7 peers -> 28 us (grows with EP size x hidden, not a fixed latency).
  EXPECT_DOUBLE_EQ(g.seconds({0, 1, 2, 3, 4, 5, 6, 7}), 28e-6);
  // dispatch = 2 x 1 ms + 0.5 ms + 10 ns x copies + 12 us fill; combine = 2 x 2 ms + the same.
  const ScaledMoeCost m(std::make_shared<FixedMoeCost>(), 2.0, 0.5e-3, 10e-9, g);
  const std::vector<MoeRankCost> out = costs_on(m, {0, 1, 4, 5});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dispatch_ns, 2'522'000);  // 1000 copies
  EXPECT_EQ(out[3].dispatch_ns, 2'552'000);  // 4000 copies
  EXPECT_EQ(out[3].combine_ns, 4'552'000);
  EXPECT_EQ(out[3].permute_ns, 5'000);
  g.tokens_per_peer = -1;
  EXPECT_THROW(ScaledMoeCost(std::make_shared<FixedMoeCost>(), 1.0, 0.0, 0.0, g), std::logic_error);
  // A fill without link rates is a programming error, not a silent 0.
  A2aFillGeometry no_links;
  no_links.tokens_per_peer = 10;
  EXPECT_THROW(no_links.seconds({0, 1}), std::logic_error);
}

TEST(ScaledMoeCost, TimePerRemoteToken) {
  // 30 ns per token sent to another node (dispatch) or received back from one (combine), unscaled, on
  // top of 2 x the inner time + 0.5 ms.
  const auto with_remote_tokens = std::make_shared<FixedMoeCost>([](std::size_t i, MoeRankCost& c) {
    c.dispatch_remote_tokens = 1000 * static_cast<std::int64_t>(i);
    c.combine_remote_tokens = 2000;
  });
  const ScaledMoeCost m(with_remote_tokens, 2.0, 0.5e-3, 0.0, {}, 0.0, 30e-9);
  const std::vector<MoeRankCost> out = costs_on(m, {0, 1});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dispatch_ns, 2'500'000);  // no remote tokens: no extra time
  EXPECT_EQ(out[1].dispatch_ns, 2'530'000);  // 1000 remote tokens x 30 ns
  EXPECT_EQ(out[1].combine_ns, 4'560'000);   // 2000 x 30 ns
  EXPECT_THROW(ScaledMoeCost(with_remote_tokens, 1.0, 0.0, 0.0, {}, 0.0, -1e-9), std::logic_error);
}

TEST(ScaledMoeCost, NodeLatencyPerRemoteNodeOfTheGroup) {
  // 4 GPUs per node, no fill; 0.2 ms per remote node on top of 2 x the inner time + 0.5 ms.
  A2aFillGeometry g;
  g.gpus_per_node = 4;
  const ScaledMoeCost m(std::make_shared<FixedMoeCost>(), 2.0, 0.5e-3, 0.0, g, 0.2e-3);
  // {0, 1, 4, 5}: nodes 0 and 1, one remote node -> dispatch 2 + 0.5 + 0.2 ms.
  std::vector<MoeRankCost> out = costs_on(m, {0, 1, 4, 5});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dispatch_ns, 2'700'000);
  EXPECT_EQ(out[3].combine_ns, 4'700'000);
  // A strided group over four nodes {0, 4, 8, 12}: three remote nodes for every member -> + 0.6 ms.
  out = costs_on(m, {0, 4, 8, 12});
  EXPECT_EQ(out[0].dispatch_ns, 3'100'000);
  EXPECT_EQ(out[3].dispatch_ns, 3'100'000);
  // Inside one node: no remote node, no node latency.
  out = costs_on(m, {0, 1, 2, 3});
  EXPECT_EQ(out[2].dispatch_ns, 2'500'000);
  // A node latency needs the node size; a negative one is a programming error.
  EXPECT_THROW(ScaledMoeCost(std::make_shared<FixedMoeCost>(), 1.0, 0.0, 0.0, {}, 1e-4), std::logic_error);
  EXPECT_THROW(ScaledMoeCost(std::make_shared<FixedMoeCost>(), 1.0, 0.0, 0.0, g, -1e-4), std::logic_error);
}

TEST(Workload, DeterministicPredictionAndTrace) {
  Shape s;
  s.vpp = 2;
  s.layers = 48;
  s.gbs = 16;
  s.overlap = true;
  PredictOptions o;
  o.trace = true;
  const Prediction a = predict(make(s), o);
  const Prediction b = predict(make(s), o);
  EXPECT_EQ(a.engine.iteration, b.engine.iteration);
  EXPECT_EQ(chrome_trace_json(a.built.workload, a.engine), chrome_trace_json(b.built.workload, b.engine));
}

TEST(Workload, RejectsRaggedInterleavedMicrobatches) {
  Shape s;
  s.vpp = 2;
  s.layers = 48;
  s.gbs = 6;  // 3 microbatches on pp 2
  EXPECT_THROW(build_workload(make(s)), InputError);
}

// --trace-ranks: one rank per stage by default (the critical rank's pipeline), not the TP peers of stage 0.
TEST(Trace, SelectsOneRankPerStageByDefault) {
  ParallelLayout l;
  l.tp = 8;
  l.pp = 8;
  l.dp = 4;  // 256 ranks, 32 per stage: stage-major, then tp, then dp (rank_name)
  EXPECT_EQ(select_trace_ranks("stages", l, 0), (std::vector<int>{0, 32, 64, 96, 128, 160, 192, 224}));
  // Critical rank 75 = stage 2, tp 3, dp 1: its pipeline is position 11 of every stage.
  EXPECT_EQ(select_trace_ranks("stages", l, 75), (std::vector<int>{11, 43, 75, 107, 139, 171, 203, 235}));
  EXPECT_EQ(select_trace_ranks("stages+tp", l, 75),
            (std::vector<int>{11, 43, 72, 73, 74, 75, 76, 77, 78, 79, 107, 139, 171, 203, 235}));
  // A count takes one rank per stage in turn: 8 on pp 8 is one pipeline, 16 two.
  EXPECT_EQ(select_trace_ranks("8", l, 0), select_trace_ranks("stages", l, 0));
  EXPECT_EQ(select_trace_ranks("16", l, 0),
            (std::vector<int>{0, 1, 32, 33, 64, 65, 96, 97, 128, 129, 160, 161, 192, 193, 224, 225}));
  EXPECT_EQ(select_trace_ranks("all", l, 0).size(), 256u);
  EXPECT_EQ(select_trace_ranks("0,64,128-131", l, 0), (std::vector<int>{0, 64, 128, 129, 130, 131}));
  for (const char* bad : {"", "0", "257", "stage", "3-1", "0,,1", "255-256", "-1"}) {
    EXPECT_THROW(select_trace_ranks(bad, l, 0), InputError) << bad;
  }
}

TEST(Trace, RecordsOnlyTheChosenRanksAndNoZeroLengthEvents) {
  Shape s;  // tp 2, pp 2, dp 2: 8 ranks
  PredictOptions o;
  o.trace = true;
  const Prediction p = predict(make(s), o);
  const std::string all = chrome_trace_json(p.built.workload, p.engine);
  const std::vector<int> chosen = select_trace_ranks("stages", make(s).parallel, p.critical_rank);
  ASSERT_EQ(chosen.size(), 2u);
  const std::string some = chrome_trace_json(p.built.workload, p.engine, chosen);
  EXPECT_LT(some.size(), all.size() / 3);
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(some, "\"process_name\""), 2u);
  EXPECT_EQ(count(all, "\"process_name\""), 8u);
  EXPECT_EQ(count(all, "\"dur\":0.000,"), 0u);
  // Compact arguments: the microbatch, no op index; no chunk without vpp.
  EXPECT_EQ(count(all, "\"op\":"), 0u);
  EXPECT_EQ(count(all, "\"chunk\":"), 0u);
  EXPECT_GT(count(all, "\"args\":{\"mb\":"), 100u);
  for (int r : chosen) EXPECT_NE(some.find(concat({"\"pid\":", std::to_string(r), ","})), std::string::npos);
}

}  // namespace
}  // namespace moetwin
