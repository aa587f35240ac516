// Host (CPU issue) time per op by what the op launches in its pass (layer_ops.hpp): a Python-issued launch
// costs launch_s in a forward, a recompute and a backward alike; a launch the C++ autograd engine issues
// for a native PyTorch op's backward costs grouped_gemm_launch_s; the per-layer host time beyond the
// launches (layer_host_s, moe_host_s) is the forward's Python module code: charged in a forward and a
// recompute. Hand values on Qwen3-30B-A3B (128 experts over ep 4: 32 local experts).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/layer_ops.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

Scenario qwen3_30b(const std::string& recompute) {
  const std::string t =
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\n[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 1\n"
      "[parallelism]\ntp = 2\npp = 2\nvpp = 1\nep = 4\netp = 1\ncp = 1\ndp = 2\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\nrecompute = \"" +
      recompute + "\"\n[dispatcher]\nname = \"nccl-alltoall\"\n";
  return parse_scenario(t, "test.toml", test_support::catalog());
}

// 1 ms per Python launch, 1 us per C++ launch (so each count reads off the host time), no per-layer host
// time, not scaled by the instance's CPU.
SimProfile counting_profile() {
  SimProfile p;
  p.host_reference_cpu_score = 0;
  p.launch_s = 1e-3;
  p.grouped_gemm_launch_s = 1e-6;
  p.layer_host_s = 0;
  p.moe_host_s = 0;
  return p;
}

// The host time of the first op labelled `name` in `phase` on rank 0, ns; -1 when there is none.
std::int64_t first_host_ns(const BuiltWorkload& b, const char* name, OpPhase phase) {
  const Program& prog = b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
  for (const OpSpec& op : prog.ops()) {
    if (op.phase == phase && prog.labels()[static_cast<std::size_t>(op.label)] == name) return op.host_ns;
  }
  return -1;
}

TEST(HostByOpKind, ForwardAndBackwardLaunchesAreCountedPerOpKind) {
  const BuiltWorkload b = build_workload(qwen3_30b("none"), counting_profile());
  const OpPhase f = OpPhase::forward, bw = OpPhase::backward;
  // TE LayerNormLinear + RoPE forward: 5 Python launches; its backward: 6 Python (RoPE x 2, dgrad, wgrad,
  // the RMSNorm backward and its weight-gradient reduction), 2 C++ (the q/k/v split's concat, the
  // residual-gradient add).
  EXPECT_EQ(first_host_ns(b, "attn.qkv", f), 5'000'000);
  EXPECT_EQ(first_host_ns(b, "attn.qkv_bwd", bw), 6'002'000);
  // Fused attention: 2 forward; 3 backward kernels from FusedAttnFunc.backward, 1 native copy backward.
  EXPECT_EQ(first_host_ns(b, "attn.core", f), 2'000'000);
  EXPECT_EQ(first_host_ns(b, "attn.core_bwd", bw), 3'001'000);
  // Row-parallel TE Linear: 1 GEMM forward; dgrad and wgrad backward.
  EXPECT_EQ(first_host_ns(b, "attn.out_proj", f), 1'000'000);
  EXPECT_EQ(first_host_ns(b, "attn.out_proj_bwd", bw), 2'000'000);
  // The router's forward is 8 Python ops; its backward is the norm's (2, TE) and 11 native backward nodes.
  EXPECT_EQ(first_host_ns(b, "moe.router", f), 8'000'000);
  EXPECT_EQ(first_host_ns(b, "moe.router_bwd", bw), 2'011'000);
  // The unfused permute's backward is native (C++ autograd): 4 C++ launches, no Python.
  EXPECT_EQ(first_host_ns(b, "moe.permute", f), 6'000'000);
  EXPECT_EQ(first_host_ns(b, "moe.permute_bwd", bw), 4'000);
  EXPECT_EQ(first_host_ns(b, "moe.unpermute_bwd", bw), 4'000);
  // _AllToAll forward and backward: 2 Python-issued NCCL calls each.
  EXPECT_EQ(first_host_ns(b, "ep.dispatch", f), 2'000'000);
  EXPECT_EQ(first_host_ns(b, "ep.dispatch_bwd", bw), 2'000'000);
  // Experts: 4 Python ops + 2 GEMMs per local expert forward (4 ms + 64 us); backward 5 Python (fc2 and fc1
  // dgrad and wgrad, the activation), 3 C++ (the probability scaling) + 4 GEMMs per local expert (128 us).
  EXPECT_EQ(first_host_ns(b, "moe.experts", f), 4'064'000);
  EXPECT_EQ(first_host_ns(b, "moe.experts_bwd", bw), 5'131'000);
}

TEST(HostByOpKind, RecomputeRunsTheForwardsLaunchesAndModuleHostTimeAtForwardCost) {
  SimProfile prof = counting_profile();
  const BuiltWorkload b = build_workload(qwen3_30b("full"), prof);
  EXPECT_EQ(first_host_ns(b, "attn.out_proj", OpPhase::recompute), 1'000'000);
  EXPECT_EQ(first_host_ns(b, "moe.router", OpPhase::recompute), 8'000'000);
  // layer_host_s is issued before the layer's first op in a forward and a recompute alike.
  prof.layer_host_s = 3e-3;
  const BuiltWorkload h = build_workload(qwen3_30b("full"), prof);
  const std::int64_t first_op_fwd = first_host_ns(h, layer_ops::kTpAgAttn.name, OpPhase::forward);
  const std::int64_t first_op_rec = first_host_ns(h, layer_ops::kTpAgAttn.name, OpPhase::recompute);
  EXPECT_EQ(first_op_fwd, 1'000'000 + 3'000'000);
  EXPECT_EQ(first_op_rec, first_op_fwd);
}

}  // namespace
}  // namespace moetwin
