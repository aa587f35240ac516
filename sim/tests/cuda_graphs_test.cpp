// CUDA graphs in the replay (cuda_graphs.hpp): te-scoped graphs replace the attention blocks' and routers'
// launches by one graph launch per region and leave every other op alone; full-iteration leaves one graph
// launch per iteration and rank and the optimizer ops' host time; the scenario rules refuse a
// full-iteration graph around a host-syncing dispatch.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// Qwen3-30B-A3B (48 MoE layers) on one p5en node, tp 2 pp 2 ep 4 dp 2, 4 microbatches; `training` adds keys.
Scenario qwen(const std::string& training = "") {
  const std::string t =
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\n[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 1\n"
      "[parallelism]\ntp = 2\npp = 2\nvpp = 1\nep = 4\netp = 1\ncp = 1\ndp = 2\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\n" +
      training + "[dispatcher]\nname = \"nccl-alltoall\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

// Host times as given (not scaled by the instance's CPU), no per-layer host time: only launches.
SimProfile neutral() {
  SimProfile p;
  p.host_reference_cpu_score = 0;
  return p;
}

const Program& program_of_rank0(const BuiltWorkload& b) {
  return b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
}

std::string label_of(const Program& p, const OpSpec& op) {
  return p.labels().at(static_cast<std::size_t>(op.label));
}

TEST(CudaGraphs, NoneIsTheDefault) {
  EXPECT_EQ(qwen().training.cuda_graphs, CudaGraphs::none);
  EXPECT_EQ(qwen("cuda_graphs = \"none\"\n").training.cuda_graphs, CudaGraphs::none);
  EXPECT_EQ(qwen("cuda_graphs = \"te-scoped\"\n").training.cuda_graphs, CudaGraphs::te_scoped);
}

TEST(CudaGraphs, TeScopedRegionsPayOneGraphLaunchEach) {
  const Scenario eager = qwen();
  const Scenario graphed = qwen("cuda_graphs = \"te-scoped\"\n");
  const SimProfile prof = neutral();
  const BuiltWorkload be = build_workload(eager, prof);
  const BuiltWorkload bg = build_workload(graphed, prof);
  const Program& pe = program_of_rank0(be);
  const Program& pg = program_of_rank0(bg);
  ASSERT_EQ(pe.size(), pg.size());  // same ops, only their host time differs
  const std::set<std::string> attn_fwd = {"tp.ag.attn", "attn.qkv", "attn.core", "attn.out_proj",
                                          "tp.rs.attn"};
  const std::set<std::string> attn_bwd = {"tp.ag.attn_bwd", "attn.out_proj_bwd", "attn.core_bwd",
                                          "attn.qkv_bwd", "tp.rs.attn_bwd"};
  const auto graph_ns = static_cast<std::int32_t>(to_ns(prof.graph_launch_s));
  int fwd = 0, bwd = 0, router = 0, router_bwd = 0;
  for (int i = 0; i < pg.size(); ++i) {
    const OpSpec& g = pg.ops()[static_cast<std::size_t>(i)];
    const OpSpec& e = pe.ops()[static_cast<std::size_t>(i)];
    const std::string label = label_of(pg, g);
    ASSERT_EQ(label, label_of(pe, e));
    const bool in_scope = attn_fwd.count(label) > 0 || attn_bwd.count(label) > 0 || label == "moe.router" ||
                          label == "moe.router_bwd";
    if (!in_scope) {
      EXPECT_EQ(g.host_ns, e.host_ns) << label << " op " << i;  // MLP, dispatch, P2P, optimizer: eager
      continue;
    }
    EXPECT_TRUE(g.host_ns == 0 || g.host_ns == graph_ns) << label << " op " << i << ": " << g.host_ns;
    if (g.host_ns != graph_ns) continue;
    fwd += attn_fwd.count(label) > 0 ? 1 : 0;
    bwd += attn_bwd.count(label) > 0 ? 1 : 0;
    router += label == "moe.router" ? 1 : 0;
    router_bwd += label == "moe.router_bwd" ? 1 : 0;
  }
  // 24 layers on the stage x 4 microbatches, one region each.
  EXPECT_EQ(fwd, 96);
  EXPECT_EQ(bwd, 96);
  EXPECT_EQ(router, 96);
  EXPECT_EQ(router_bwd, 96);
  EXPECT_LE(predict(graphed).iteration_s, predict(eager).iteration_s);
}

TEST(CudaGraphs, FullIterationLeavesOneGraphLaunchAndTheOptimizer) {
  // Padded alltoall: no host sync in the dispatch, so the forward-backward can be captured.
  const Scenario eager = qwen("moe_pad_to_capacity = true\n");
  const Scenario graphed = qwen("moe_pad_to_capacity = true\ncuda_graphs = \"full-iteration\"\n");
  SimProfile prof = neutral();
  prof.layer_host_s = 1e-3;  // captured too
  prof.moe_host_s = 2e-3;
  const BuiltWorkload be = build_workload(eager, prof);
  const BuiltWorkload bg = build_workload(graphed, prof);
  const Program& pe = program_of_rank0(be);
  const Program& pg = program_of_rank0(bg);
  ASSERT_EQ(pe.size(), pg.size());
  std::int64_t captured_ns = 0;
  int optimizer_ops = 0;
  for (int i = 0; i < pg.size(); ++i) {
    const OpSpec& g = pg.ops()[static_cast<std::size_t>(i)];
    const OpSpec& e = pe.ops()[static_cast<std::size_t>(i)];
    if (g.phase == OpPhase::optimizer) {
      EXPECT_EQ(g.host_ns, e.host_ns) << i;
      ++optimizer_ops;
    } else {
      captured_ns += g.host_ns;
    }
    EXPECT_EQ(g.sync, HostSync::none) << i;
  }
  EXPECT_GT(optimizer_ops, 0);
  EXPECT_EQ(captured_ns, to_ns(prof.graph_launch_s));  // one replay per iteration
  PredictOptions o;
  o.profile = prof;
  EXPECT_LT(predict(graphed, o).iteration_s, predict(eager, o).iteration_s);
}

TEST(CudaGraphs, FullIterationRefusesAHostSyncingDispatch) {
  try {
    qwen("moe_pad_to_capacity = false\ncuda_graphs = \"full-iteration\"\n");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "test.toml:20: training.cuda_graphs: \"full-iteration\": none or te-scoped for qwen3-30b-a3b "
            "with nccl-alltoall unpadded (a full-iteration CUDA graph holds no host sync"),
        std::string::npos)
        << e.what();
  }
  try {
    qwen("cuda_graphs = \"partial\"\n");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("training.cuda_graphs: \"partial\": one of none, te-scoped, "
                                         "full-iteration"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moetwin
