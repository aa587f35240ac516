// compare: the ratio's band comes from the fit's paired errors, so it is narrower than the ratio of the two
// predictions' own bands (their shared error cancels), and it says where it comes from; the verdict follows
// the band; shorthands build the scenarios they name; scaling and cost arithmetic (training_cost.hpp).
#include "moetwin/planning/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "moetwin/common/input_error.hpp"
#include "moetwin/planning/compare_report.hpp"
#include "moetwin/planning/training_cost.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_profile.hpp"
#include "moetwin/test_support/shipped_scenario.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

Scenario qwen3_p5en() {
  return test_support::repo_scenario("scenarios/examples/qwen3-30b-p5en-2n.toml");
}

const FittedProfile& shipped() {
  return test_support::shipped_fitted_profile();
}

// The acceptance: bf16 vs fp8-hybrid of one scenario.
TEST(Compare, PrecisionRatioBandIsNarrowerThanTheOwnBandsRatio) {
  const Comparison c = compare(compare_precisions(qwen3_p5en(), {"bf16", "fp8-hybrid"}), shipped(), 2);
  ASSERT_EQ(c.entries.size(), 2u);
  ASSERT_EQ(c.pairs.size(), 1u);
  const ComparePair& p = c.pairs[0];
  EXPECT_EQ(p.differs, std::vector<std::string>{"precision"});
  EXPECT_DOUBLE_EQ(p.ratio, c.entries[1].iteration_s / c.entries[0].iteration_s);
  EXPECT_LT(p.ratio_lo, p.ratio);
  EXPECT_GT(p.ratio_hi, p.ratio);
  // Narrower (in log width) than the ratio of the own bands, and inside it.
  EXPECT_LT(std::log(p.ratio_hi / p.ratio_lo), std::log(p.own_hi / p.own_lo));
  EXPECT_GT(p.ratio_lo, p.own_lo);
  EXPECT_LT(p.ratio_hi, p.own_hi);
  // u is the profile's paired p90 at least (widened for novelty, never narrowed).
  EXPECT_GE(p.uncertainty, shipped().cross_validated_margin.p90_abs);
  EXPECT_NE(p.band_source.find("[cross_validated_margin]"), std::string::npos) << p.band_source;
  EXPECT_NE(p.band_source.find("differs in precision"), std::string::npos) << p.band_source;
  EXPECT_EQ(p.beyond, p.ratio_lo > 1 || p.ratio_hi < 1);
  const std::string text = render_comparison_text(c);
  EXPECT_NE(text.find("band source: paired out-of-sample errors"), std::string::npos) << text;
}

TEST(Compare, WithoutPairedErrorsTheBandIsTheOwnBandsRatio) {
  const Comparison c =
      compare(compare_precisions(qwen3_p5en(), {"bf16", "fp8-hybrid"}), resolve_fitted_profile("none"), 2);
  const ComparePair& p = c.pairs[0];
  EXPECT_LT(p.uncertainty, 0);
  EXPECT_DOUBLE_EQ(p.ratio_lo, p.own_lo);
  EXPECT_DOUBLE_EQ(p.ratio_hi, p.own_hi);
  EXPECT_NE(p.band_source.find("no paired out-of-sample errors"), std::string::npos);
}

TEST(Compare, DispatchersWithinTheUncertaintyNameTheSettlingRun) {
  const Comparison c =
      compare(compare_dispatchers(qwen3_p5en(), catalog(), {"nccl-alltoall", "deepep-uccl"}), shipped(), 2);
  const ComparePair& p = c.pairs[0];
  EXPECT_EQ(p.differs, std::vector<std::string>{"dispatcher"});
  EXPECT_EQ(p.band_source.find("differs in"), std::string::npos) << p.band_source;
  if (p.beyond) {
    EXPECT_TRUE(p.settle_with.empty());
  } else {
    EXPECT_FALSE(p.settle_with.empty());
  }
  const ResultTable t = comparison_table(c);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][t.column("verdict")].text, "reference");
  EXPECT_EQ(t.rows[1][t.column("dispatcher")].text, "deepep-uccl");
}

TEST(Compare, NodeShorthandKeepsTheLayoutAndSettlesAtBothScales) {
  const Comparison c = compare(compare_node_counts(qwen3_p5en(), {2, 4}), shipped(), 2);
  EXPECT_EQ(c.entries[1].scenario.nodes, 4);
  EXPECT_EQ(c.entries[1].scenario.parallel.dp, 2 * c.entries[0].scenario.parallel.dp);
  EXPECT_EQ(c.entries[1].scenario.parallel.tp, c.entries[0].scenario.parallel.tp);
  const ComparePair& p = c.pairs[0];
  EXPECT_EQ(p.differs, (std::vector<std::string>{"nodes", "layout"}));
  if (!p.beyond) {
    EXPECT_NE(p.settle_with.find("their own node counts"), std::string::npos) << p.settle_with;
  }
}

TEST(Compare, ShorthandsRefuseBadValues) {
  EXPECT_THROW(compare_dispatchers(qwen3_p5en(), catalog(), {"nccl-alltoall"}), InputError);
  EXPECT_THROW(compare_dispatchers(qwen3_p5en(), catalog(), {"nccl-alltoall", "deepep"}), InputError);
  EXPECT_THROW(compare_precisions(qwen3_p5en(), {"bf16", "mxfp8"}), InputError);  // not on Hopper
  EXPECT_THROW(compare_node_counts(qwen3_p5en(), {2, 3}), InputError);            // 24 GPUs, dp not whole
  EXPECT_THROW(compare({}, shipped(), 1), InputError);
}

// issue 52: compare never looked at memory (the Kimi-K2 p5 example at 107% of HBM and its FP8 twin at
// 118% compared as a ratio with a verdict). A side that does not fit is refused, naming it and its memory,
// unless ignore_memory; then each side's memory and the note travel with the verdict.
TEST(CompareMemory, ASideThatDoesNotFitIsRefusedUnlessIgnored) {
  const Scenario kimi = test_support::repo_scenario("scenarios/examples/kimi-k2-p5-32n.toml");
  const std::vector<CompareInput> inputs = compare_precisions(kimi, {"bf16", "fp8-hybrid"});
  try {
    (void)compare(inputs, shipped(), 2);
    ADD_FAILURE() << "compared layouts that do not fit";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bf16: does not fit in HBM: 79.9 GiB needed per GPU on stage 1"), std::string::npos)
        << what;
    EXPECT_NE(what.find("; fp8-hybrid: does not fit in HBM: 88.3 GiB"), std::string::npos) << what;
    EXPECT_NE(what.find("(--ignore-memory compares it anyway)"), std::string::npos) << what;
  }
  CompareMemory ignore;
  ignore.ignore_memory = true;
  const Comparison c = compare(inputs, shipped(), 2, ignore);
  ASSERT_EQ(c.entries.size(), 2u);
  for (const CompareEntry& e : c.entries) {
    EXPECT_FALSE(e.fits) << e.label;
    EXPECT_FALSE(e.within_headroom) << e.label;
    EXPECT_EQ(e.memory_warning.rfind("does not fit in HBM: ", 0), 0u) << e.memory_warning;
  }
  EXPECT_NE(
      c.pairs[0].memory_note.find("bf16 does NOT fit in HBM (--ignore-memory): 79.9 of 74.5 GiB (107%)"),
      std::string::npos)
      << c.pairs[0].memory_note;
  const std::string text = render_comparison_text(c);
  EXPECT_NE(text.find("79.9 GiB 107%!!"), std::string::npos) << text;
  EXPECT_NE(text.find("memory warnings:\n  bf16: does not fit in HBM"), std::string::npos) << text;
  const ResultTable t = comparison_table(c);
  EXPECT_EQ(t.rows[1][t.column("fits_hbm")].text, "false");
  EXPECT_EQ(t.rows[1][t.column("memory_gib")].text, "88.28");
}

// A pair within HBM but beyond the headroom is compared, with its warning; within it, nothing is said.
TEST(CompareMemory, BeyondTheHeadroomIsWarnedWithinItIsQuiet) {
  const Comparison quiet = compare(compare_precisions(qwen3_p5en(), {"bf16", "fp8-hybrid"}), shipped(), 2);
  for (const CompareEntry& e : quiet.entries) {
    EXPECT_TRUE(e.fits && e.within_headroom) << e.label;
    EXPECT_EQ(e.memory_warning, "");
  }
  EXPECT_EQ(quiet.pairs[0].memory_note, "");
  EXPECT_EQ(render_comparison_text(quiet).find("memory warnings:"), std::string::npos);
  // The same pair with all of HBM but a sliver kept free: both are beyond that headroom.
  CompareMemory tight;
  tight.hbm_headroom = 0.5;
  const Comparison warned =
      compare(compare_precisions(qwen3_p5en(), {"bf16", "fp8-hybrid"}), shipped(), 2, tight);
  bool any_beyond = false;
  for (const CompareEntry& e : warned.entries) {
    if (e.within_headroom) continue;
    any_beyond = true;
    EXPECT_TRUE(e.fits);
    EXPECT_NE(e.memory_warning.find("above the"), std::string::npos) << e.memory_warning;
  }
  if (any_beyond) {
    EXPECT_NE(warned.pairs[0].memory_note.find("is beyond the HBM headroom"), std::string::npos);
  }
}

TEST(TrainingCost, ArithmeticAndScaling) {
  // 1e9 tokens of 16 x 4096 per iteration: 15258.8 iterations of 2 s on 4 nodes.
  const TrainingCost c = training_cost(2.0, 1.5, 3.0, 4, 1e9, 16.0 * 4096, 10.0);
  const double iterations = 1e9 / (16.0 * 4096);
  EXPECT_DOUBLE_EQ(c.days, iterations * 2.0 / 86400);
  EXPECT_DOUBLE_EQ(c.days_lo, iterations * 1.5 / 86400);
  EXPECT_DOUBLE_EQ(c.days_hi, iterations * 3.0 / 86400);
  EXPECT_DOUBLE_EQ(c.node_hours, 4 * c.days * 24);
  EXPECT_DOUBLE_EQ(c.cost_usd, c.node_hours * 10.0);
  EXPECT_LT(training_cost(2.0, 1.5, 3.0, 4, 1e9, 16.0 * 4096, 0).cost_usd, 0);
  EXPECT_DOUBLE_EQ(node_hours_per_gtoken(2.0, 4, 16.0 * 4096), c.node_hours);  // 1e9 tokens
  // Twice the nodes, 1.6x faster: 80% efficient.
  const Scaling s = scaling_against(10.0, 16, 6.25, 32);
  EXPECT_DOUBLE_EQ(s.speedup, 1.6);
  EXPECT_DOUBLE_EQ(s.efficiency, 0.8);
}

}  // namespace
}  // namespace moetwin
