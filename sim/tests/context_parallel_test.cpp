// Context parallelism (context_parallel.hpp): the ring's per-rank work and KV bytes by hand, the step
// formulas, the attention core of a replayed CP scenario against them through a comm seam of known P2P time,
// the dp x cp gradient group, and the scenario rule for sliding-window layers.
#include "moetwin/sim/context_parallel.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/workload_ops.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

TEST(ContextParallel, LoadBalancedRingComputesHalfTheSquareOverCp) {
  // seq 8192: causal attention is 8192^2 / 2 = 33.55M pairs per sequence; each of cp = 2 ranks computes
  // half of them, 16.78M, where (seq / cp)^2 / 2 = 8.39M would be a quarter.
  EXPECT_DOUBLE_EQ(ring_attention_pairs(8192, 1), 8192.0 * 8192 / 2);
  EXPECT_DOUBLE_EQ(ring_attention_pairs(8192, 2), 16777216.0);
  EXPECT_DOUBLE_EQ(ring_attention_pairs(8192, 8), 8192.0 * 8192 / 16);
  EXPECT_THROW(ring_attention_pairs(8192, 0), std::invalid_argument);
}

TEST(ContextParallel, KvBytesAreTheShardOfTheRanksKvHeads) {
  const ModelSpec& llama70 = catalog().model("llama3-70b");  // GQA, 8 KV groups of 128
  ASSERT_EQ(llama70.query_groups, 8);
  ASSERT_EQ(llama70.head_dim, 128);
  // mb 1, seq 8192, cp 2, tp 4: 4096 tokens x (K + V) 2 groups x 128 x 2 = 512 elements x 2 B = 4 MiB.
  EXPECT_DOUBLE_EQ(cp_kv_bytes(llama70, 1, 8192, 2, 4), 4096.0 * 512 * 2);
  // tp 16 > 8 groups: one group per rank (Megatron replicates KV heads), not half of one.
  EXPECT_DOUBLE_EQ(cp_kv_bytes(llama70, 1, 8192, 2, 16), 4096.0 * 256 * 2);
  // mb 2 doubles the shard.
  EXPECT_DOUBLE_EQ(cp_kv_bytes(llama70, 2, 8192, 2, 4), 2 * 4096.0 * 512 * 2);
}

TEST(ContextParallel, StepFormulasByHand) {
  // Tile 1 ms, transfer 0.4 ms, cp 2: forward max(1, 0.4) + 1 = 2 ms; backward max(1, 0.4) + max(1, 0.4)
  // + the last dKV hop 0.4 = 2.4 ms.
  EXPECT_DOUBLE_EQ(ring_attention_forward_s(1e-3, 0.4e-3, 2), 2e-3);
  EXPECT_DOUBLE_EQ(ring_attention_backward_s(1e-3, 0.4e-3, 2), 2.4e-3);
  // cp 4, transfer 0.6 ms: forward 3 x 1 + 1 = 4 ms; backward 1 + 2 x max(1, 1.2) + 1 + 0.6 = 5 ms (the
  // middle steps carry KV and dKV and outlast their tiles).
  EXPECT_DOUBLE_EQ(ring_attention_forward_s(1e-3, 0.6e-3, 4), 4e-3);
  EXPECT_NEAR(ring_attention_backward_s(1e-3, 0.6e-3, 4), 5e-3, 1e-15);
  // Transfer-bound: 10 ms hops under 1 ms tiles, cp 2: forward 10 + 1, backward 10 + 10 + 10.
  EXPECT_DOUBLE_EQ(ring_attention_forward_s(1e-3, 10e-3, 2), 11e-3);
  EXPECT_DOUBLE_EQ(ring_attention_backward_s(1e-3, 10e-3, 2), 30e-3);
  // cp 1: the tile alone.
  EXPECT_DOUBLE_EQ(ring_attention_forward_s(1e-3, 10e-3, 1), 1e-3);
  EXPECT_DOUBLE_EQ(ring_attention_backward_s(1e-3, 10e-3, 1), 1e-3);
  EXPECT_THROW(ring_attention_forward_s(1e-3, -1, 2), std::invalid_argument);
  EXPECT_THROW(ring_attention_backward_s(1e-3, 1, 0), std::invalid_argument);
}

// Every collective free, every send/recv 10 ms: the ring's transfers dominate its tiles.
class SlowP2p : public CommCostModel {
 public:
  std::string name() const override { return "slow-p2p"; }
  double seconds(CollectiveOp op, double, const std::vector<int>&) const override {
    return op == CollectiveOp::send_recv ? 10e-3 : 0.0;
  }
};

Scenario llama_cp(int cp, int dp) {
  const std::string text =
      "name = \"t\"\n[model]\nname = \"llama3-8b\"\nlayers = 2\ndense_layers = 2\n[cluster]\n"
      "instance = \"dgx-b200\"\nnodes = 1\n[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = 1\netp = 1\ncp = " +
      std::to_string(cp) + "\ndp = " + std::to_string(dp) +
      "\n[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(dp) + "\nseq_length = 8192\n";
  return parse_scenario(text, "test.toml", catalog());
}

TEST(ContextParallel, ReplayedAttentionCoreFollowsTheRingFormulas) {
  WorkloadSeams seams;
  seams.comm = std::make_shared<SlowP2p>();
  SimProfile prof;
  prof.launch_s = prof.backward_launch_s = 0;
  const BuiltWorkload one = build_workload(llama_cp(1, 8), prof, seams);
  const BuiltWorkload two = build_workload(llama_cp(2, 4), prof, seams);
  const BuiltWorkload four = build_workload(llama_cp(4, 2), prof, seams);
  const std::vector<TimeNs> f1 = test_support::rank0_durations(one, "attn.core"),
                            f2 = test_support::rank0_durations(two, "attn.core"),
                            f4 = test_support::rank0_durations(four, "attn.core");
  const std::vector<TimeNs> b2 = test_support::rank0_durations(two, "attn.core_bwd"),
                            b4 = test_support::rank0_durations(four, "attn.core_bwd");
  ASSERT_EQ(f1.size(), 2u);  // one per layer
  ASSERT_EQ(f2.size(), 2u);
  ASSERT_EQ(b4.size(), 2u);
  const TimeNs hop = 10'000'000;  // ns
  // The tiles are small next to a 10 ms hop: forward (cp - 1) hops + one tile, backward exactly
  // 2 hops + (cp - 2) double hops + the last dKV hop.
  EXPECT_GT(f2[0], hop);
  EXPECT_LT(f2[0], hop + f1[0]);  // one tile of cp 2 is a quarter of cp 1's causal work
  EXPECT_GT(f4[0], 3 * hop);
  EXPECT_LT(f4[0] - 3 * hop, f2[0] - hop);  // cp 4's tile is a quarter of cp 2's
  EXPECT_EQ(b2[0], 3 * hop);
  EXPECT_EQ(b4[0], 2 * hop + 2 * 2 * hop + hop);
  // The tiles: cp 2 computes seq^2 / 4 pairs in 2 tiles (an eighth of seq^2 each), cp 4 seq^2 / 8 in 4
  // tiles (a 32nd each), so cp 2's tile holds 4x cp 4's pairs.
  const double tile2 = static_cast<double>(f2[0] - hop), tile4 = static_cast<double>(f4[0] - 3 * hop);
  EXPECT_GT(tile2 / tile4, 1.5);  // kernel efficiency falls with the tile's size: at most 4x
  EXPECT_LE(tile2 / tile4, 4.0 + 1e-9);
}

TEST(ContextParallel, GradientGroupIsDpTimesCp) {
  ParallelLayout p;
  p.tp = 2;
  p.cp = 2;
  p.dp = 2;
  const RankGroups g = megatron_rank_groups(p, 8);
  // Rank order tp-cp-dp-pp: rank = tp + 2 (cp + 2 dp).
  EXPECT_EQ(g.dp, (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(g.cp, (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  p.cp = 1;
  p.dp = 4;
  const RankGroups plain = megatron_rank_groups(p, 8);
  EXPECT_TRUE(plain.cp.empty());
  EXPECT_EQ(plain.dp, (std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
}

TEST(ContextParallel, SlidingWindowLayersUnderCpAreRefused) {
  const std::string text =
      "name = \"t\"\n[model]\nname = \"gpt-oss-120b\"\n[cluster]\ninstance = \"dgx-b200\"\nnodes = 1\n"
      "[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = 4\netp = 1\ncp = 2\ndp = 4\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 4\nseq_length = 8192\n";
  try {
    parse_scenario(text, "bad.toml", catalog());
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("parallelism.cp: 2"), std::string::npos) << what;
    EXPECT_NE(what.find("sliding-window attention under context parallelism is not modelled"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace moetwin
