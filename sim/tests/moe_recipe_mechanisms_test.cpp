// NVIDIA's MoE recipe mechanisms (issue 56 item 5): CUDA graphs scoped to the MoE router (te-router, TE scope
// [moe_router, moe_preprocess]) and delay_wgrad_compute in the combined 1F1B step, by hand against the
// builds without them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return c;
}

// Qwen3-30B-A3B cut to 4 layers on 2 p6-b300 nodes: TP2 PP2 VPP2 EP4, nccl-alltoall, EP overlap on.
Scenario qwen(const std::string& training) {
  return parse_scenario(
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n[cluster]\ninstance = "
      "\"p6-b300.48xlarge\"\nnodes = 2\n[parallelism]\ntp = 2\npp = 2\nvpp = 2\nep = 4\netp = 1\ndp = 4\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 2048\noverlap_moe_a2a = true\n" +
          training + "[dispatcher]\nname = \"nccl-alltoall\"\n",
      "test.toml", catalog());
}

const Program& program(const BuiltWorkload& b) {
  return b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
}
const std::string& label_of(const Program& p, int i) {
  return p.labels().at(static_cast<std::size_t>(p.ops()[static_cast<std::size_t>(i)].label));
}
std::vector<int> ops_labelled(const Program& p, const std::string& label) {
  std::vector<int> out;
  for (int i = 0; i < p.size(); ++i)
    if (label_of(p, i) == label) out.push_back(i);
  return out;
}
// Rank 0's duration of op i (its var slot's when it has one), ns.
TimeNs duration(const BuiltWorkload& b, int i) {
  const OpSpec& op = program(b).ops()[static_cast<std::size_t>(i)];
  if (op.var_slot < 0) return op.duration;
  return b.workload.var_durations[static_cast<std::size_t>(b.workload.var_offset.at(0) + op.var_slot)];
}

TEST(MoeRecipeMechanisms, TeRouterCapturesTheRouterAloneWithOneGraphLaunch) {
  const BuiltWorkload none = build_workload(qwen("")),
                      router = build_workload(qwen("cuda_graphs = \"te-router\"\n"));
  const BuiltWorkload scoped = build_workload(qwen("cuda_graphs = \"te-scoped\"\n"));
  const Program &n = program(none), &r = program(router), &s = program(scoped);
  ASSERT_EQ(n.size(), r.size());  // a graph changes host time, not the ops
  const std::vector<int> fwd = ops_labelled(r, "moe.router"), bwd = ops_labelled(r, "moe.router_bwd");
  ASSERT_FALSE(fwd.empty());
  ASSERT_EQ(fwd.size(), bwd.size());
  for (const std::vector<int>* ops : {&fwd, &bwd}) {
    for (int i : *ops) {
      // The router's region pays one graph launch, as te-scoped's router region does, below its eager
      // launches.
      EXPECT_EQ(r.ops()[static_cast<std::size_t>(i)].host_ns, s.ops()[static_cast<std::size_t>(i)].host_ns);
      EXPECT_LT(r.ops()[static_cast<std::size_t>(i)].host_ns, n.ops()[static_cast<std::size_t>(i)].host_ns);
    }
  }
  // Attention stays eager: every attention op's host time is the eager build's.
  for (const char* label : {"attn.qkv", "attn.core", "attn.out_proj"}) {
    for (int i : ops_labelled(r, label))
      EXPECT_EQ(r.ops()[static_cast<std::size_t>(i)].host_ns, n.ops()[static_cast<std::size_t>(i)].host_ns)
          << label;
  }
  EXPECT_THROW(
      (void)parse_scenario("name = \"t\"\n[model]\nname = \"llama3-8b\"\nlayers = 2\ndense_layers = 2\n"
                           "[cluster]\ninstance = \"dgx-b200\"\nnodes = 1\n[parallelism]\ndp = 8\n"
                           "[training]\nglobal_batch = 8\ncuda_graphs = \"te-router\"\n",
                           "test.toml", catalog()),
      InputError);
}

TEST(MoeRecipeMechanisms, DelayWgradStartsTheDispatchBackwardAfterTheDgradAlone) {
  const BuiltWorkload plain = build_workload(qwen("")),
                      delayed = build_workload(qwen("delay_wgrad_compute = true\n"));
  const Program& p = program(delayed);
  const std::vector<int> dgrad = ops_labelled(p, "moe.experts_dgrad"),
                         wgrad = ops_labelled(p, "moe.experts_wgrad");
  ASSERT_FALSE(dgrad.empty());
  ASSERT_EQ(dgrad.size(), wgrad.size());
  int dispatch_after_dgrad = 0;
  for (std::size_t k = 0; k < dgrad.size(); ++k) {
    // The wgrad follows its dgrad on the compute stream.
    EXPECT_EQ(p.ops()[static_cast<std::size_t>(wgrad[k])].deps[0], dgrad[k]);
    // dgrad + wgrad = the whole backward of the same experts (catalog roofline, B300: 6 + 6 of 12 FLOPs per
    // token x h x fe, half the bytes each), within the ns rounding of each.
    const TimeNs whole = duration(plain, ops_labelled(program(plain), "moe.experts_bwd").front());
    EXPECT_NEAR(static_cast<double>(duration(delayed, dgrad[k]) + duration(delayed, wgrad[k])),
                static_cast<double>(whole), 2.0);
  }
  for (int i : ops_labelled(p, "ep.dispatch_bwd")) {
    const int dep = p.ops()[static_cast<std::size_t>(i)].deps[0];
    if (dep != kNoOp && label_of(p, dep) == "moe.experts_dgrad") ++dispatch_after_dgrad;
  }
  // Every dgrad of a combined step is what its dispatch-backward all-to-all waits for (not the wgrad).
  EXPECT_EQ(dispatch_after_dgrad, static_cast<int>(dgrad.size()));
  // Earlier all-to-alls cannot lengthen the iteration.
  EXPECT_LE(run_engine(delayed.workload).iteration, run_engine(plain.workload).iteration);
  // Megatron-Core's assert: no delay without the EP overlap.
  EXPECT_THROW((void)parse_scenario(
                   "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n[cluster]\ninstance = "
                   "\"p6-b300.48xlarge\"\nnodes = 2\n[parallelism]\ntp = 2\npp = 2\nvpp = 2\nep = 4\n"
                   "dp = 4\n[training]\nglobal_batch = 16\nseq_length = 2048\n"
                   "delay_wgrad_compute = true\n",
                   "test.toml", catalog()),
               InputError);
}

}  // namespace
}  // namespace moetwin
