#include "moetwin/validate/accuracy.hpp"

#include <gtest/gtest.h>

namespace moetwin {
namespace {

LiveRun run(const std::string& campaign, int mb, const std::string& dispatcher, double iter_s) {
  LiveRun r;
  r.campaign = campaign;
  // Not = "m": GCC 12 -O3 flags assigning a one-character literal (-Wrestrict false positive, GCC bug
  // 105329).
  r.scenario.model.name = std::string("m");
  r.scenario.nodes = 4;
  r.scenario.training.micro_batch = mb;
  r.scenario.dispatcher.name = dispatcher;
  r.iter_s = iter_s;
  return r;
}

TEST(Percentile, InterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], 90) == 3.7; median of an even set is the mean of the middle two.
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0);
}

TEST(ErrorStats, AbsoluteAndSignedQuantiles) {
  const ErrorStats s = error_stats({-0.1, 0.05, 0.2, -0.3});
  EXPECT_EQ(s.rows, 4);
  EXPECT_DOUBLE_EQ(s.median_abs, 0.15);            // |e| sorted 0.05 0.1 0.2 0.3
  EXPECT_NEAR(s.p90_abs, 0.2 + 0.7 * 0.1, 1e-12);  // position 2.7
  EXPECT_NEAR(s.mean_signed, -0.0375, 1e-12);
  EXPECT_NEAR(s.signed_p10, -0.3 + 0.3 * 0.2, 1e-12);  // sorted -0.3 -0.1 0.05 0.2, position 0.3
}

TEST(RankCells, WinnerLeadAndPairwiseAgreement) {
  std::vector<LiveRun> runs = {run("c", 1, "nccl", 10), run("c", 1, "uccl", 12), run("c", 1, "nvshmem", 11),
                               run("c", 4, "nccl", 8),  run("c", 4, "uccl", 6),  run("d", 1, "nccl", 5)};
  // Cell mb1: measured order nccl < nvshmem < uccl; predicted nvshmem < nccl < uccl.
  // Cell mb4: measured uccl < nccl, predicted the same. Campaign d has one row: no cell.
  const std::vector<double> predicted = {3, 4, 2, 9, 7, 1};
  const std::vector<CellRanking> cells = rank_cells(runs, predicted);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].measured_winner, "nccl");
  EXPECT_EQ(cells[0].predicted_winner, "nvshmem");
  EXPECT_FALSE(cells[0].winner_right());
  EXPECT_NEAR(cells[0].measured_lead, 0.1, 1e-12);
  EXPECT_EQ(cells[0].pairs, 3);
  EXPECT_EQ(cells[0].pairs_agree, 2);  // (nccl, uccl) and (uccl, nvshmem) agree; (nccl, nvshmem) not
  EXPECT_EQ(cells[1].measured_winner, "uccl");
  EXPECT_TRUE(cells[1].winner_right());
  EXPECT_NEAR(cells[1].measured_lead, 8.0 / 6.0 - 1, 1e-12);
  EXPECT_EQ(cells[1].pairs_agree, 1);
}

// The p5en cell's shape (live-runs-p5en.csv): two NCCL variants 1% apart, two UCCL-EP variants 20% faster.
// Only the two dispatchers' pairs measured >= 5% apart are decisive; a prediction 0.4% apart is a near tie.
TEST(RankCells, DecisivePairsAndNearTies) {
  std::vector<LiveRun> runs = {run("c", 1, "nccl", 1.18), run("c", 1, "nccl", 1.19), run("c", 1, "uccl", 0.95),
                               run("c", 1, "uccl", 0.98)};
  const std::vector<CellRanking> tie = rank_cells(runs, {1.085, 1.085, 1.087, 1.087});
  ASSERT_EQ(tie.size(), 1u);
  EXPECT_EQ(tie[0].pairs, 6);
  EXPECT_EQ(tie[0].decisive_pairs, 4);  // nccl x uccl; the variants' pairs (1% and 3% apart) are not
  EXPECT_EQ(tie[0].decisive_agree, 0);
  EXPECT_EQ(tie[0].decisive_near_ties, 4);
  const std::vector<CellRanking> called = rank_cells(runs, {1.15, 1.16, 1.04, 1.05});
  EXPECT_EQ(called[0].decisive_agree, 4);
  EXPECT_EQ(called[0].decisive_near_ties, 0);
}

TEST(RankCells, KeyKeepsDistinctLayoutsApart) {
  LiveRun a = run("c", 1, "nccl", 10);
  LiveRun b = run("c", 1, "uccl", 12);
  b.scenario.parallel.pp = 2;
  EXPECT_NE(cell_key(a), cell_key(b));
  EXPECT_TRUE(rank_cells({a, b}, {1, 2}).empty());
}

TEST(RankCells, FailedPredictionsAreLeftOut) {
  const std::vector<CellRanking> cells =
      rank_cells({run("c", 1, "nccl", 10), run("c", 1, "uccl", 12), run("c", 1, "nvshmem", 11)}, {1, 0, 2});
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].rows.size(), 2u);
  EXPECT_EQ(cells[0].pairs, 1);
}

TEST(PairMarginErrors, PredictedRatioAgainstMeasuredRatioEitherWay) {
  std::vector<LiveRun> runs = {run("c", 1, "nccl", 10), run("c", 1, "uccl", 12), run("c", 1, "nvshmem", 11),
                               run("c", 4, "nccl", 8),  run("c", 4, "uccl", 6),  run("d", 1, "nccl", 5)};
  // mb1: nccl/uccl measured 10/12, predicted 10/15 -> off by 1.25x; nccl/nvshmem 10/11 vs 10/11 -> 0;
  // uccl/nvshmem 12/11 vs 15/11 -> 1.25x. mb4: nccl/uccl 8/6 vs 6/8 -> (4/3)^2 the other way.
  const std::vector<double> predicted = {10, 15, 11, 6, 8, 1};
  const std::vector<double> e = pair_margin_errors(rank_cells(runs, predicted), runs, predicted);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_NEAR(e[0], 0.25, 1e-12);
  EXPECT_NEAR(e[1], 0, 1e-12);
  EXPECT_NEAR(e[2], 0.25, 1e-12);
  EXPECT_NEAR(e[3], 16.0 / 9.0 - 1, 1e-12);
  // A common factor on every prediction of a cell (the shared part of its error) is no margin error.
  std::vector<double> scaled = predicted;
  for (double& t : scaled) t *= 1.3;
  const std::vector<double> es = pair_margin_errors(rank_cells(runs, scaled), runs, scaled);
  for (std::size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(es[i], e[i], 1e-12);
}

}  // namespace
}  // namespace moetwin
