// Bands by kind of novelty from held-out campaigns, and the coverage of the intervals they give.
#include "moetwin/validate/novelty_bands.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {
namespace {

// Three B300 campaigns of 4 rows (one of them the only DeepSeek-V3 one) and a p5en campaign of 5 rows.
struct Rows {
  std::vector<LiveRun> runs;
  std::vector<double> predicted;
};

Rows sample_rows() {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const auto load = [&](const char* f) {
    return load_scenario_file(std::string(MOETWIN_SOURCE_DIR) + "/scenarios/live/" + f, catalog);
  };
  Rows r;
  const auto add = [&](const Scenario& s, const std::string& campaign, double measured, double predicted) {
    LiveRun run;
    run.scenario = s;
    run.campaign = campaign;
    run.iter_s = measured;
    r.runs.push_back(run);
    r.predicted.push_back(predicted);
  };
  const Scenario dsv3 = load("dsv3-b300-32n-20260601.toml");
  const Scenario kimi16 = load("kimik2-b300-16n-20260604.toml");
  const Scenario kimi32 = load("kimik2-b300-32n-20260604.toml");
  const Scenario p5en = load("uccl-p5en-4n-20260430.toml");
  // Errors (predicted / measured - 1): DeepSeek-V3 +-10%, Kimi-K2 +-5%, p5en -20%..-28%.
  for (double e : {0.1, -0.1, 0.05, -0.05}) add(dsv3, "dsv3", 10, 10 * (1 + e));
  for (double e : {0.05, -0.05, 0.02, -0.02}) add(kimi16, "kimi16", 10, 10 * (1 + e));
  for (double e : {0.04, -0.04, 0.01, -0.01}) add(kimi32, "kimi32", 10, 10 * (1 + e));
  for (double e : {-0.2, -0.22, -0.24, -0.26, -0.28}) add(p5en, "p5en", 1, 1 + e);
  return r;
}

// The in-family log half-widths of a set of errors, as novelty_bands takes them (signed p10 / p90).
std::pair<double, double> in_family_widths(const std::vector<double>& errors) {
  return {-std::log1p(percentile(errors, 0.1)), std::log1p(percentile(errors, 0.9))};
}

TEST(NoveltyBands, HeldOutNoveltyWithDistancesAndMeasuredOrPriorGrowth) {
  const Rows r = sample_rows();
  const std::vector<Novelty> n = held_out_novelty(r.runs);
  // Kimi-K2 at 16 nodes is covered by the 32-node Kimi-K2 campaign but pp4 vs pp8 stays "pp>1": covered.
  EXPECT_EQ(n[4].level(), "covered");
  EXPECT_EQ(n[4].distance(), 0);
  // DeepSeek-V3 is the only campaign of its model: configuration novelty, 0.58 doublings from Kimi-K2
  // (256 vs 384 experts, the rest of its shape the same).
  EXPECT_EQ(n[0].level(), "configuration");
  EXPECT_TRUE(n[0].has(NoveltyDimension::model));
  EXPECT_NEAR(n[0].distance(), std::log2(384.0 / 256.0), 1e-12);
  // p5en is new in GPU, instance, stack, precision, model, TP degree and scale (4 nodes, 2 doublings below
  // the others' 16): far from the rest.
  EXPECT_EQ(n[12].level(), "platform");
  EXPECT_TRUE(n[12].has(NoveltyDimension::scale));
  EXPECT_GT(n[12].distance(), 3.0);

  const auto bands = novelty_bands(r.runs, r.predicted, n);
  EXPECT_EQ(bands.size(), banded_novelty_dimensions().size());
  // Each novel row's excess over the in-family width, per unit of its distance.
  std::vector<double> errors;
  for (std::size_t i = 0; i < r.runs.size(); ++i) errors.push_back(r.predicted[i] / r.runs[i].iter_s - 1);
  const auto [w_lo, w_hi] = in_family_widths(errors);
  std::vector<double> p5en_rates, model_rates;
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    if (n[i].covered()) continue;
    const double l = std::log1p(errors[i]);
    const double side = l < 0 ? w_lo : w_hi;
    const double rate = std::sqrt(std::max(0.0, l * l - side * side)) / n[i].distance();
    model_rates.push_back(rate);
    if (i >= 12) p5en_rates.push_back(rate);
  }
  // GPU: the 5 p5en rows, their rates' 80th percentile (two of them beyond the in-family width).
  ASSERT_TRUE(bands.count("gpu"));
  EXPECT_EQ(bands.at("gpu").rows, 5);
  EXPECT_NEAR(bands.at("gpu").per_unit, percentile(p5en_rates, 0.8), 1e-12);
  EXPECT_GT(bands.at("gpu").per_unit, 0);
  EXPECT_NEAR(bands.at("gpu").error_hi, std::expm1(bands.at("gpu").per_unit), 1e-12);
  // Model: 4 DeepSeek-V3 rows + 5 p5en rows (9 >= 5): measured.
  EXPECT_EQ(bands.at("model").rows, 9);
  EXPECT_NEAR(bands.at("model").per_unit, percentile(model_rates, 0.8), 1e-12);
  // Scale: 5 p5en rows; routing: no held-out campaign was new in it (all forced balance): the prior, at
  // least the in-family half-width per unit.
  EXPECT_EQ(bands.at("scale").rows, 5);
  EXPECT_EQ(bands.at("routing").rows, 0);
  EXPECT_GE(bands.at("routing").per_unit, std::max(w_lo, w_hi) - 1e-12);
  EXPECT_NE(bands.at("routing").source.find("conservative rule"), std::string::npos)
      << bands.at("routing").source;
}

TEST(NoveltyBands, UnmeasuredDimensionsTakeTheConservativePrior) {
  Rows r = sample_rows();
  r.runs.resize(16);  // four p5en rows: too few for platform bands of their own
  r.predicted.resize(16);
  const auto bands = novelty_bands(r.runs, r.predicted, held_out_novelty(r.runs));
  // Model: 4 DeepSeek-V3 + 4 p5en rows: measured.
  EXPECT_EQ(bands.at("model").rows, 8);
  // GPU: 4 rows, the prior: the largest of the in-family half-width, the novel rows' excess and the widest
  // measured rate, never below the measured model rate.
  EXPECT_EQ(bands.at("gpu").rows, 0);
  EXPECT_GE(bands.at("gpu").per_unit, bands.at("model").per_unit);
  EXPECT_NE(bands.at("gpu").source.find("prior: 4 held-out rows new in gpu"), std::string::npos);
  EXPECT_EQ(bands.at("gpu").per_unit, bands.at("routing").per_unit);
}

TEST(NoveltyBands, NothingNovelGivesTheInFamilyWidthPerUnit) {
  Rows r = sample_rows();
  r.runs.resize(4);  // one campaign: nothing to hold it out against, no novelty measured
  r.predicted.resize(4);
  const auto bands = novelty_bands(r.runs, r.predicted, held_out_novelty(r.runs));
  std::vector<double> errors;
  for (std::size_t i = 0; i < 4; ++i) errors.push_back(r.predicted[i] / r.runs[i].iter_s - 1);
  const auto [w_lo, w_hi] = in_family_widths(errors);
  EXPECT_EQ(bands.at("model").rows, 0);
  EXPECT_NEAR(bands.at("model").per_unit, std::max({w_lo, w_hi, std::log(1.1)}), 1e-12);
  // No prediction at all: the unfitted twin's +-50% per unit.
  const auto none = novelty_bands(r.runs, std::vector<double>(4, 0.0), held_out_novelty(r.runs));
  EXPECT_NEAR(none.at("gpu").per_unit, std::log(1.5), 1e-12);
}

TEST(NoveltyBands, CoveragePerLevel) {
  const Rows r = sample_rows();
  FittedProfile profile;
  profile.fitted = true;
  profile.cross_validated = {17, 0.05, 0.2, -0.08, 0.08};  // in-family: measured within -7.4%..+8.7%
  for (const LiveRun& run : r.runs) profile.coverage.add(run.scenario);
  const std::vector<RowInterval> in = in_sample_intervals(r.runs, r.predicted, profile);
  // Covered by the profile: every row has the in-family band; p5en's -20..-28% fall outside it.
  const std::vector<IntervalCoverage> c = interval_coverage(in);
  ASSERT_EQ(c.size(), 2u);  // covered, all
  EXPECT_EQ(c[0].level, "covered");
  EXPECT_EQ(c[0].rows, 17);
  EXPECT_EQ(c[0].inside, 10);  // the 12 B300 rows less DeepSeek-V3's two +-10%
  EXPECT_NEAR(c[0].median_hi_lo, 1.08 / 0.92, 1e-12);

  // Out of sample, the p5en rows get the band measured without them: no other campaign is new in GPU, so
  // the prior (here its +-10% per unit floor, 4 units away) holds them.
  const std::vector<RowInterval> out = out_of_sample_intervals(r.runs, r.predicted, profile);
  for (std::size_t i = 12; i < out.size(); ++i) {
    EXPECT_EQ(out[i].level, "platform");
    EXPECT_TRUE(out[i].inside) << i << " " << out[i].lo_s << " " << out[i].hi_s;
  }
  const std::vector<IntervalCoverage> oc = interval_coverage(out);
  EXPECT_EQ(oc.back().level, "all");
  EXPECT_EQ(oc.back().rows, 17);
  // Per fold and distance bucket: each campaign's rows at their distance, then every fold per bucket.
  const std::vector<DistanceCoverage> d = coverage_by_distance(r.runs, out);
  const auto find = [&d](const std::string& fold, const std::string& bucket) {
    for (const DistanceCoverage& dc : d) {
      if (dc.fold == fold && dc.bucket == bucket) return dc;
    }
    return DistanceCoverage{};
  };
  EXPECT_EQ(find("dsv3", "(0,1]").rows, 4);
  EXPECT_EQ(find("kimi16", "0").rows, 4);
  EXPECT_EQ(find("p5en", ">4").rows + find("p5en", "(2,4]").rows, 5);
  EXPECT_EQ(find("all", "0").rows, 8);
  EXPECT_EQ(find("all", "0").inside, find("kimi16", "0").inside + find("kimi32", "0").inside);
  EXPECT_EQ(d.back().fold, "all");
}

}  // namespace
}  // namespace moetwin
