// Bands by kind of novelty from held-out campaigns, and the coverage of the intervals they give.
#include "moetwin/validate/novelty_bands.hpp"

#include <gtest/gtest.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

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

TEST(NoveltyBands, HeldOutNoveltyAndMeasuredOrPriorBands) {
  const Rows r = sample_rows();
  const std::vector<Novelty> n = held_out_novelty(r.runs);
  // Kimi-K2 at 16 nodes is covered by the 32-node Kimi-K2 campaign but pp4 vs pp8 stays "pp>1": covered.
  EXPECT_EQ(n[4].level(), "covered");
  // DeepSeek-V3 is the only campaign of its model: configuration novelty.
  EXPECT_EQ(n[0].level(), "configuration");
  EXPECT_TRUE(n[0].has(NoveltyDimension::model));
  // p5en is new in GPU, instance, stack, precision, model and TP degree.
  EXPECT_EQ(n[12].level(), "platform");

  const auto bands = novelty_bands(r.runs, r.predicted, n);
  // GPU: the 5 p5en rows, |error| p90 of {.20,.22,.24,.26,.28} = 0.272 (linear interpolation).
  ASSERT_TRUE(bands.count("gpu"));
  EXPECT_EQ(bands.at("gpu").rows, 5);
  EXPECT_NEAR(bands.at("gpu").error_hi, 0.272, 1e-9);
  EXPECT_NEAR(bands.at("gpu").error_lo, -0.272, 1e-9);
  // Model: 4 DeepSeek-V3 rows + 5 p5en rows (9 >= 5): measured.
  EXPECT_EQ(bands.at("model").rows, 9);
  // Scale: p5en's 4 nodes lie below the others' 16-32.
  EXPECT_EQ(bands.at("scale").rows, 5);
  EXPECT_EQ(bands.size(), banded_novelty_dimensions().size());
}

TEST(NoveltyBands, PriorIsTheWidestMeasuredBandOfTheSameLevel) {
  Rows r = sample_rows();
  r.runs.resize(16);  // four p5en rows: too few for platform bands of their own
  r.predicted.resize(16);
  const auto bands = novelty_bands(r.runs, r.predicted, held_out_novelty(r.runs));
  // Model: 4 DeepSeek-V3 + 4 p5en rows, p90 |error| of {.05,.05,.1,.1,.2,.22,.24,.26} = 0.246.
  EXPECT_EQ(bands.at("model").rows, 8);
  EXPECT_NEAR(bands.at("model").error_hi, 0.246, 1e-9);
  // Scale (4 p5en rows below the others' 16-32 nodes) is a configuration novelty: the model band stands in.
  EXPECT_EQ(bands.at("scale").rows, 0);
  EXPECT_NEAR(bands.at("scale").error_lo, -0.246, 1e-9);
  EXPECT_NE(bands.at("scale").source.find("the widest measured configuration band (model) stands in"),
            std::string::npos);
  // No platform novelty measured: the unfitted twin's +-50%, not a configuration band.
  EXPECT_EQ(bands.at("gpu").rows, 0);
  EXPECT_EQ(bands.at("gpu").error_lo, -0.5);
  EXPECT_NE(bands.at("gpu").source.find("prior: 4 held-out rows new in gpu"), std::string::npos);
}

TEST(NoveltyBands, NothingMeasuredGivesTheUnfittedPrior) {
  Rows r = sample_rows();
  r.runs.resize(4);  // one campaign: nothing to hold it out against, no novelty measured
  r.predicted.resize(4);
  const auto bands = novelty_bands(r.runs, r.predicted, held_out_novelty(r.runs));
  EXPECT_EQ(bands.at("model").rows, 0);
  EXPECT_EQ(bands.at("model").error_hi, 0.5);
  EXPECT_EQ(bands.at("gpu").error_lo, -0.5);
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
  // the prior (+-50% here: nothing else measured) holds them.
  const std::vector<RowInterval> out = out_of_sample_intervals(r.runs, r.predicted, profile);
  for (std::size_t i = 12; i < out.size(); ++i) {
    EXPECT_EQ(out[i].level, "platform");
    EXPECT_TRUE(out[i].inside) << i;
  }
  const std::vector<IntervalCoverage> oc = interval_coverage(out);
  EXPECT_EQ(oc.back().level, "all");
  EXPECT_EQ(oc.back().rows, 17);
}

}  // namespace
}  // namespace moetwin
