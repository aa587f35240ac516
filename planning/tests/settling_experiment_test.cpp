// The value of a settling run: the closed-form posterior against refits on drawn measurements, on a
// synthetic two-dispatcher margin model with known answers; and one real tie.
#include "moetwin/planning/settling_experiment.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {
namespace {

TEST(SettlingExperiment, RunThatCarriesTheSameTermsAndNoOtherErrorSettlesEverything) {
  MarginEvidence e;
  e.j_a_target = -0.5;
  e.j_b_target = 0.5;
  e.j_a_run = -0.5;
  e.j_b_run = 0.5;
  e.sigma_terms = 0.1;
  const MarginPosterior p = margin_posterior(e);
  EXPECT_NEAR(p.prior_sd, 0.1 * std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(p.posterior_sd, 0, 1e-9);
  EXPECT_NEAR(margin_posterior_sd_by_refit(e, 2000, 7), 0, 1e-9);
}

TEST(SettlingExperiment, RunInsensitiveToTheTermsTeachesNothing) {
  MarginEvidence e;
  e.j_a_target = -0.4;
  e.j_b_target = 0.3;
  e.sigma_terms = 0.1;
  e.sigma_structural = 0.02;
  e.sigma_noise = 0.01;
  const MarginPosterior p = margin_posterior(e);
  EXPECT_DOUBLE_EQ(p.posterior_sd, p.prior_sd);
}

// Known answer, worked by hand: prior variance 0.01 x (0.16 + 0.09) + 0.0004 = 0.0029 (sd 0.053852);
// cov(target, run) = 0.01 x (0.08 + 0.03) = 0.0011; var(run) = 0.01 x 0.05 + 0.0004 + 0.0001 = 0.001;
// posterior variance 0.0029 - 0.0011^2 / 0.001 = 0.00169 (sd 0.041110).
TEST(SettlingExperiment, ClosedFormMatchesRefitsOnDrawnMeasurements) {
  MarginEvidence e;
  e.j_a_target = -0.4;
  e.j_b_target = 0.3;
  e.j_a_run = -0.2;
  e.j_b_run = 0.1;
  e.sigma_terms = 0.1;
  e.sigma_structural = 0.02;
  e.sigma_noise = 0.01;
  const MarginPosterior p = margin_posterior(e);
  EXPECT_NEAR(p.prior_sd, 0.0538516, 1e-6);
  EXPECT_NEAR(p.posterior_sd, 0.0411096, 1e-6);
  const double mc = margin_posterior_sd_by_refit(e, 40000, 11);
  EXPECT_NEAR(mc / p.posterior_sd, 1, 0.02);
  EXPECT_EQ(mc, margin_posterior_sd_by_refit(e, 40000, 11));  // deterministic
}

TEST(SettlingExperiment, RunAtTheTargetMeasuresItsStructuralErrorToo) {
  MarginEvidence e;
  e.sigma_structural = 0.03;
  e.sigma_noise = 0.01;
  e.same_scale = true;
  const double expected = std::sqrt(0.03 * 0.03 * 0.01 * 0.01 / (0.03 * 0.03 + 0.01 * 0.01));
  EXPECT_NEAR(margin_posterior(e).posterior_sd, expected, 1e-12);
  EXPECT_NEAR(margin_posterior_sd_by_refit(e, 40000, 3) / expected, 1, 0.02);
  e.same_scale = false;  // elsewhere, a structural error independent of the target's teaches nothing
  EXPECT_NEAR(margin_posterior(e).posterior_sd, 0.03, 1e-12);
}

// A real tie on the small p5en example: the run is one of the target's halvings (or the target), costs
// what its predicted times say, and never widens the uncertainty.
TEST(SettlingExperiment, RealTieOnTheP5enExample) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const Scenario base = load_scenario_file(
      std::string(MOETWIN_SOURCE_DIR) + "/scenarios/examples/qwen3-30b-p5en-2n.toml", catalog);
  FittedProfile profile;
  profile.fitted = true;
  profile.cross_validated = {51, 0.07, 0.2, -0.15, 0.17};
  profile.cross_validated_margin = {30, 0.05, 0.5};  // a wide margin uncertainty: any pair is a tie
  profile.in_sample_margin = {30, 0.02, 0.04};
  Scenario a = base;
  a.dispatcher = catalog.dispatchers().at("nccl-alltoall");
  Scenario b = base;
  b.dispatcher = catalog.dispatchers().at("deepep-uccl");
  const SettlingExperiment e = settling_experiment(a, b, profile);
  ASSERT_TRUE(e.needed);
  ASSERT_TRUE(e.found) << e.note;
  EXPECT_TRUE(e.nodes == base.nodes || e.nodes * 2 == base.nodes) << e.nodes;
  EXPECT_EQ(e.iterations, 30);
  EXPECT_GT(e.node_hours, e.nodes * 2 * 600 / 3600.0);  // two jobs' start-up at least
  EXPECT_LE(e.margin_after, e.margin_before);
  EXPECT_DOUBLE_EQ(e.margin_before, 0.5);
  const std::string line = describe(e, a);
  EXPECT_NE(line.find("iterations each of nccl-alltoall and deepep-uccl"), std::string::npos) << line;
  const SettlingExperiment again = settling_experiment(a, b, profile);
  EXPECT_EQ(again.node_hours, e.node_hours);
  EXPECT_EQ(again.margin_after, e.margin_after);
}

}  // namespace
}  // namespace moetwin
