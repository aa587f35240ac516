#include "moetwin/planning/candidates.hpp"

#include <gtest/gtest.h>

#include <string>

#include "moetwin/common/numbers.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

TEST(PlanCandidates, NodeCountsArePowersOfTwoAndTheEnds) {
  EXPECT_EQ(node_counts(1, 64), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(node_counts(1, 12), (std::vector<int>{1, 2, 4, 8, 12}));  // once 1..8: 12 was not searched
  EXPECT_EQ(node_counts(1, 1), (std::vector<int>{1}));
  EXPECT_EQ(node_counts(16, 32), (std::vector<int>{16, 32}));
  EXPECT_TRUE(node_counts(8, 4).empty());
}

// qwen3-30b-a3b (48 layers, 128 experts) on one 8-GPU node. By hand, per (tp, pp) with dp = 8/(tp pp):
// ep = powers of two >= 2 dividing tp x dp; vpp 2 needs pp > 1; the EP overlap on/off doubles vpp 2 and
// pp 1 (Megatron-Core runs it without a pipeline too), not pp > 1 with vpp 1; mb x3.
//   tp1: pp1 ep{2,4,8} 18, pp2 ep{2,4} 6+12, pp4 ep{2} 3+6, pp8 (stage of 1 rank, no ep >= 2) 0  -> 45
//   tp2: pp1 18, pp2 18, pp4 9                                                                     -> 45
//   tp4: pp1 18, pp2 18                                                                            -> 36
//   tp8: pp1 18                                                                                    -> 18
TEST(PlanCandidates, EnumerationCountsOnOneNode) {
  PlanRequest req;
  const auto all =
      enumerate_candidates(catalog().model("qwen3-30b-a3b"), catalog().instance("p5en.48xlarge"), req, 1);
  EXPECT_EQ(all.size(), 144u);
  for (const Candidate& c : all) {
    EXPECT_EQ(c.parallel.world(), 8) << c.label();
    EXPECT_EQ((c.parallel.tp * c.parallel.dp) % c.parallel.ep, 0) << c.label();
    EXPECT_EQ(128 % c.parallel.ep, 0) << c.label();
    if (c.overlap_moe_a2a) {
      EXPECT_TRUE(c.parallel.vpp == 2 || c.parallel.pp == 1) << c.label();
    }
    if (c.parallel.vpp == 2) {
      EXPECT_GT(c.parallel.pp, 1) << c.label();
    }
  }
}

TEST(PlanCandidates, LabelNamesEveryChoice) {
  Candidate c;
  c.nodes = 32;
  c.parallel = {8, 8, 1, 32, 1, 4, 1, {}};
  c.micro_batch = 4;
  c.recompute = Recompute::full;
  EXPECT_EQ(c.label(), "n32 tp8 pp8 vpp1 ep32 dp4 mb4 recompute=full overlap=off");
}

Candidate qwen_candidate(int tp, int pp, int vpp, int ep, int mb) {
  Candidate c;
  c.nodes = 1;
  c.parallel.tp = tp;
  c.parallel.pp = pp;
  c.parallel.vpp = vpp;
  c.parallel.ep = ep;
  c.parallel.dp = 8 / (tp * pp);
  c.micro_batch = mb;
  return c;
}

// fit_candidate of `c` for the catalog model `model` on p5en nodes (H200, nccl-alltoall) at global batch
// `global_batch`; it sets c's recompute.
CandidateCheck fit_on_p5en(Candidate& c, const std::string& model, int global_batch) {
  PlanRequest req;
  req.global_batch = global_batch;
  return fit_candidate(c, catalog().model(model), catalog().instance("p5en.48xlarge"),
                       catalog().gpu("H200-SXM"), catalog().dispatcher("nccl-alltoall"), req);
}

// Divisibility: vpp 2 on pp 2 needs microbatches (gbs / (mb dp)) divisible by pp; gbs 6, mb 1, dp 2 gives 3.
TEST(PlanCandidates, DivisibilityRejectsWithTheScenarioRule) {
  Candidate c = qwen_candidate(2, 2, 2, 2, 1);
  const CandidateCheck check = fit_on_p5en(c, "qwen3-30b-a3b", 6);
  EXPECT_EQ(check.verdict, CandidateCheck::Verdict::invalid);
  EXPECT_EQ(check.reason,
            "invalid: plan: training.global_batch: 6: global_batch / (micro_batch * dp) = 3 microbatches, a "
            "multiple of pp = 2 (Megatron's interleaved schedule with vpp = 2)");
}

// The small model fits without recompute: the lightest recompute is chosen.
TEST(PlanCandidates, SmallModelFitsWithoutRecompute) {
  Candidate c = qwen_candidate(1, 1, 1, 8, 1);
  const CandidateCheck check = fit_on_p5en(c, "qwen3-30b-a3b", 64);
  EXPECT_EQ(check.verdict, CandidateCheck::Verdict::ok) << check.reason;
  EXPECT_EQ(c.recompute, Recompute::none);
  EXPECT_LT(check.worst_bytes, check.hbm_bytes);
}

// Kimi-K2 (~1.04 T parameters) on one H200 node: even fully recomputed, the weights, gradients and
// (8-way sharded) optimizer state of ~130 B parameters per GPU exceed 141 GB = 131.3 GiB.
TEST(PlanCandidates, MemoryFitRejectsAHugeModelOnOneNode) {
  Candidate c = qwen_candidate(8, 1, 1, 8, 1);
  const CandidateCheck check = fit_on_p5en(c, "kimi-k2", 64);
  EXPECT_EQ(check.verdict, CandidateCheck::Verdict::does_not_fit);
  EXPECT_EQ(c.recompute, Recompute::full);
  EXPECT_NEAR(check.hbm_bytes / kGiB, 131.32, 0.01);
  EXPECT_GT(check.worst_bytes, 2 * check.hbm_bytes);
  EXPECT_EQ(check.reason.rfind("does not fit: ", 0), 0u) << check.reason;
  EXPECT_NE(check.reason.find(" GiB > 131.3 GiB on stage 0 (recompute full, nccl-alltoall)"),
            std::string::npos)
      << check.reason;
}

// DeepSeek-V3 (256 experts) at EP 256 is beyond deepep-nvshmem's normal-kernel limit (160 ranks): invalid is
// invalid with the scenario rule's message.
TEST(PlanCandidates, DispatcherValidityLimit) {
  PlanRequest req;
  req.global_batch = 512;
  Candidate c;
  c.nodes = 32;
  c.parallel = {8, 1, 1, 256, 1, 32, 1, {}};
  c.micro_batch = 1;
  const DispatcherSpec& d = catalog().dispatcher("deepep-nvshmem");
  ASSERT_EQ(d.max_ranks_normal, 160);
  const Scenario s = scenario_for(c, catalog().model("deepseek-v3"), catalog().instance("p6-b300.48xlarge"),
                                  catalog().gpu("B300"), d, req);
  const CandidateCheck check = check_scenario(s);
  EXPECT_EQ(check.verdict, CandidateCheck::Verdict::invalid);
  EXPECT_NE(check.reason.find("deepep-nvshmem"), std::string::npos) << check.reason;
}

}  // namespace
}  // namespace moetwin
