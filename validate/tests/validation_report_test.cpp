// The validation report on four rows of two campaigns with made-up predictions: its tables, its headline
// in sample and out of sample, the dispatcher ranking with a wrong winner, and the coverage lines.
#include "moetwin/validate/validation_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {
namespace {

LiveRunTable sample_table() {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return read_live_runs(std::string(MOETWIN_SOURCE_DIR) + "/validate/tests/data/two-campaigns.csv", catalog);
}

// Predictions `factor[i]` x the measured time (0: the row failed).
std::vector<RowPrediction> predictions(const std::vector<LiveRun>& runs, const std::vector<double>& factor) {
  std::vector<RowPrediction> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RowPrediction r;
    r.ok = factor[i] > 0;
    r.error = r.ok ? "" : "cannot replay";
    r.iteration_s = runs[i].iter_s * factor[i];
    r.detail.iteration_s = r.iteration_s;
    r.detail.gpus = 32;
    r.detail.model_flops = 1e15;
    out.push_back(r);
  }
  return out;
}

const std::string* find(const ValidationReport& r, const std::string& key) {
  for (const auto& [k, v] : r.headline) {
    if (k == key) return &v;
  }
  return nullptr;
}

TEST(ValidationReport, InSample) {
  const LiveRunTable t = sample_table();
  // Rows: 4n nccl 15.18, 4n uccl 17.85, 8n nccl 12.21, 8n uccl 13.06 s; the 8n prediction swaps them.
  const ValidationReport r =
      make_validation_report(t.header, t.runs, predictions(t.runs, {1.1, 1.1, 1.1, 0.9}), {}, {},
                             FittedProfile{}, "two-campaigns.csv", "");
  EXPECT_FALSE(r.out_of_sample);
  ASSERT_EQ(r.rows.rows.size(), 4u);
  EXPECT_EQ(r.rows.rows[0][r.rows.column("error_pct")].text, "10.00");
  EXPECT_EQ(r.rows.rows[0][r.rows.column("status")].text, "ok");
  EXPECT_EQ(r.rows.rows[0][r.rows.column("novelty_level")].text, "covered");  // unfitted: nothing to compare
  EXPECT_THROW(r.rows.column("in_sample_iter_s"), std::logic_error);
  ASSERT_EQ(r.summary.rows.size(), 3u);  // two campaigns and all
  EXPECT_EQ(r.summary.rows[2][0].text, "all");
  EXPECT_EQ(r.summary.rows[2][1].text, "4");
  ASSERT_EQ(r.cells.rows.size(), 2u);
  EXPECT_EQ(r.margins.rows.size(), 1u);
  EXPECT_EQ(r.margins.rows[0][0].text, "in_sample");
  ASSERT_NE(find(r, "runs"), nullptr);
  EXPECT_EQ(*find(r, "runs"), "two-campaigns.csv (4 rows, 4 predicted)");
  EXPECT_EQ(*find(r, "profile"), "unfitted defaults (no fitted profile)");
  EXPECT_EQ(find(r, "errors")->rfind("in sample: median |error| 10.0%", 0), 0u) << *find(r, "errors");
  EXPECT_EQ(*find(r, "dispatcher winner"), "1 of 2 cells right; 1 of 2 where the measured lead is >= 5%");
  EXPECT_EQ(find(r, "objective"), nullptr);
  ASSERT_EQ(r.misses.size(), 1u);
  EXPECT_NE(r.misses[0].find("measured nccl-alltoall (+7.0%), predicted deepep-uccl"), std::string::npos);
  const std::string text = render_validation_text(r);
  EXPECT_NE(text.find("\nwrong winner where the measured lead is >= 5%:\n  "), std::string::npos);
  EXPECT_NE(text.find("\nper row:\n"), std::string::npos);
}

TEST(ValidationReport, OutOfSampleBesideInSample) {
  const LiveRunTable t = sample_table();
  FittedProfile profile;
  profile.cv_scheme = "leave-one-campaign-out";
  const std::vector<double> oos = {15.18 * 1.2, 0, 12.21 * 1.2, 13.06 * 1.2};
  // Each fold: its held-out rows as above, its training rows exact.
  FoldPredictions folds;
  for (std::size_t f = 0; f < t.runs.size(); ++f) {
    std::vector<double>& p = folds[t.runs[f].campaign];
    if (!p.empty()) continue;
    for (std::size_t i = 0; i < t.runs.size(); ++i)
      p.push_back(t.runs[i].campaign == t.runs[f].campaign ? oos[i] : t.runs[i].iter_s);
  }
  const ValidationReport r =
      make_validation_report(t.header, t.runs, predictions(t.runs, {1, 1, 1, 0}), oos, folds, profile,
                             "a.csv + b.csv", "mean squared log ratio 1 -> 0");
  EXPECT_TRUE(r.out_of_sample);
  EXPECT_EQ(r.rows.rows[0][r.rows.column("error_pct")].text, "20.00");
  EXPECT_EQ(r.rows.rows[0][r.rows.column("in_sample_error_pct")].text, "0.00");
  EXPECT_EQ(r.rows.rows[1][r.rows.column("error_pct")].text, "");  // no out-of-sample prediction
  EXPECT_EQ(r.rows.rows[3][r.rows.column("status")].text, "error: cannot replay");
  EXPECT_EQ(*find(r, "runs"), "a.csv + b.csv (4 rows, 3 predicted)");
  EXPECT_EQ(find(r, "errors")->rfind("out of sample (leave-one-campaign-out): median |error| 20.0%", 0), 0u);
  ASSERT_NE(find(r, "in sample"), nullptr);
  EXPECT_EQ(*find(r, "objective"), "mean squared log ratio 1 -> 0");
  EXPECT_EQ(r.margins.rows.size(), 2u);
  EXPECT_EQ(r.margins.rows[0][0].text, "out_of_sample");
  EXPECT_EQ(r.intervals.rows.front()[0].text, "out_of_sample");
  EXPECT_EQ(r.headline.back().first, "objective");
}

TEST(ValidationReport, CoverageLine) {
  const std::vector<IntervalCoverage> c = {
      {"covered", 40, 32, 0.8, 1.3}, {"platform", 7, 5, 5.0 / 7, 1.9}, {"all", 47, 37, 37.0 / 47, 1.38}};
  EXPECT_EQ(
      interval_coverage_line(c),
      "79% of 47 rows inside their 80% interval, median hi/lo 1.38 (covered 80% of 40, platform 71% of 7)");
  const ResultTable t = interval_coverage_table({{"in_sample", c}});
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[2][4].text, "78.7");
}

}  // namespace
}  // namespace moetwin
