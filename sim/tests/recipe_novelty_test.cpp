// The recipe dimension (issue 53 item 2, session 49; the te-scoped and full-iteration graph scopes since
// session 50): CPU offload, delay_wgrad_compute and each CUDA-graph scope are priced mechanisms no live
// training row checked. A scenario using one is new on the recipe dimension, named, one unit each; its band
// grows by the profile's recipe band (or, in a profile without one, its prior for unmeasured dimensions); a
// scenario without them reads as before.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/novelty.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_profile.hpp"
#include "moetwin/test_support/shipped_scenario.hpp"

namespace moetwin {
namespace {

Scenario live(const std::string& name) {
  return test_support::repo_scenario("scenarios/live/" + name + ".toml");
}

// The covered cell: qwen3-235b on 8 p6-b300, EP32, selective recompute (a fitted row of the shipped profile).
Scenario covered() {
  return live("qwen3-235b-b300-8n-20260624");
}

// The value and warning of the scenario's one recipe novelty; fails when it has none or several.
const NovelValue& only_recipe(const Novelty& n) {
  const NovelValue* found = nullptr;
  int count = 0;
  for (const NovelValue& v : n.novel) {
    if (v.dimension != NoveltyDimension::recipe) continue;
    found = &v;
    ++count;
  }
  EXPECT_EQ(count, 1) << n.summary();
  static const NovelValue none{NoveltyDimension::recipe, "", "", 0};
  return found != nullptr ? *found : none;
}

TEST(RecipeNovelty, EachMechanismAddsAUnitAndIsNamed) {
  const FittedProfile& p = test_support::shipped_fitted_profile();
  const Scenario base = covered();
  const Novelty before = novelty_of(base, p);
  ASSERT_FALSE(before.has(NoveltyDimension::recipe)) << before.summary();
  EXPECT_TRUE(recipe_mechanisms_of(base).empty());

  Scenario offload = base;
  offload.training.cpu_offload_layers = 4;
  Scenario delayed = base;
  delayed.training.delay_wgrad_compute = true;
  Scenario router = base;
  router.training.cuda_graphs = CudaGraphs::te_router;
  Scenario scoped = base;
  scoped.training.cuda_graphs = CudaGraphs::te_scoped;
  Scenario full = base;
  full.training.cuda_graphs = CudaGraphs::full_iteration;
  struct Case {
    const Scenario* s;
    const char* name;
    const char* key;
  };
  for (const Case& c : {Case{&offload, "cpu-offload", "cpu_offload_layers 4"},
                        Case{&delayed, "delay-wgrad", "delay_wgrad_compute"},
                        Case{&router, "te-router", "cuda_graphs te-router"},
                        Case{&scoped, "te-scoped", "cuda_graphs te-scoped"},
                        Case{&full, "full-iteration", "cuda_graphs full-iteration"}}) {
    SCOPED_TRACE(c.name);
    const Novelty n = novelty_of(*c.s, p);
    const NovelValue& v = only_recipe(n);
    EXPECT_EQ(v.value, c.name);
    EXPECT_EQ(v.distance, kCategoricalDistance);
    EXPECT_NE(v.warning.find(c.key), std::string::npos) << v.warning;
    EXPECT_NE(n.summary().find(std::string("recipe=") + c.name), std::string::npos) << n.summary();
    // One unit more than the covered cell, in quadrature with what it already had.
    EXPECT_NEAR(n.distance() * n.distance(), before.distance() * before.distance() + 1.0, 1e-12);
    EXPECT_EQ(n.level(), before.covered() ? "configuration" : before.level());
    // The band widens: the recipe grows by the shipped profile's measured rate (raised to its floor), never
    // 0 (a profile without the band: its prior, AProfileWithoutTheBandTakesItsStatedPrior).
    const double t = 10.0;
    EXPECT_LT(band_for(p, t, n).lo_s, band_for(p, t, before).lo_s);
    EXPECT_GT(band_for(p, t, n).hi_s, band_for(p, t, before).hi_s);
  }
  // Two mechanisms at once: sqrt(2) units, both named.
  Scenario both = delayed;
  both.training.cuda_graphs = CudaGraphs::te_router;
  EXPECT_EQ(recipe_mechanisms_of(both), (std::vector<std::string>{"delay-wgrad", "te-router"}));
  const Novelty n2 = novelty_of(both, p);
  EXPECT_NE(n2.summary().find("recipe=delay-wgrad;recipe=te-router"), std::string::npos) << n2.summary();
  EXPECT_NEAR(n2.distance() * n2.distance(), before.distance() * before.distance() + 2.0, 1e-12);
  // A graph scope with another mechanism: one unit each (the scenario has one scope at a time).
  Scenario offload_full = offload;
  offload_full.training.cuda_graphs = CudaGraphs::full_iteration;
  EXPECT_EQ(recipe_mechanisms_of(offload_full), (std::vector<std::string>{"cpu-offload", "full-iteration"}));
  const Novelty n3 = novelty_of(offload_full, p);
  EXPECT_NEAR(n3.distance() * n3.distance(), before.distance() * before.distance() + 2.0, 1e-12);
  // Without graphs nothing changes: the scenario reads exactly as before (same summary, same distance).
  Scenario none = base;
  none.training.cuda_graphs = CudaGraphs::none;
  EXPECT_EQ(novelty_of(none, p).summary(), before.summary());
  EXPECT_EQ(novelty_of(none, p).distance(), before.distance());
}

// Each scope is its own mechanism: a fit whose rows ran te-scoped graphs covers te-scoped, not
// full-iteration or te-router (they capture other regions and launch otherwise, sim/cuda_graphs.hpp).
TEST(RecipeNovelty, EachGraphScopeIsCoveredOnlyByItself) {
  FitCoverage c;
  Scenario scoped = covered();
  scoped.training.cuda_graphs = CudaGraphs::te_scoped;
  c.add(scoped, "c");
  EXPECT_EQ(c.recipes, std::vector<std::string>{"te-scoped"});
  EXPECT_FALSE(novelty_of(scoped, c).has(NoveltyDimension::recipe));
  for (const CudaGraphs g : {CudaGraphs::full_iteration, CudaGraphs::te_router}) {
    Scenario other = covered();
    other.training.cuda_graphs = g;
    const Novelty n = novelty_of(other, c);
    ASSERT_TRUE(n.has(NoveltyDimension::recipe)) << to_string(g);
    EXPECT_EQ(only_recipe(n).value, to_string(g));
  }
}

// The prior a profile without the dimension's band gives: its widest band without held-out rows (the
// dispatcher, interaction and routing priors of the shipped fit), at least the floor; band_source says so.
TEST(RecipeNovelty, AProfileWithoutTheBandTakesItsStatedPrior) {
  // A profile fitted before the recipe dimension existed: the shipped one without its recipe band.
  FittedProfile p = test_support::shipped_fitted_profile();
  p.novelty_bands.erase("recipe");
  double prior = 0;
  for (const auto& [key, band] : p.novelty_bands)
    if (band.rows == 0) prior = std::max(prior, band.unit_width());
  ASSERT_GT(prior, 0.0);
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::recipe), std::max(prior, kGrowthFloorPerUnit));
  EXPECT_DOUBLE_EQ(growth_per_unit(p, NoveltyDimension::recipe),
                   growth_per_unit(p, NoveltyDimension::routing));
  Scenario s = covered();
  s.training.delay_wgrad_compute = true;
  const std::string source = band_source(p, novelty_of(s, p));
  EXPECT_NE(source.find("recipe delay-wgrad"), std::string::npos) << source;
  EXPECT_NE(source.find("no band in the profile"), std::string::npos) << source;
}

// The shipped profile measures the recipe band on NVIDIA's never-fitted rows that run a recipe mechanism
// (held out by system: the CPU-offload rows on GB200 and GB300, the full-iteration graph rows on B200 and
// GB200: 8 rows, 3 systems, refit of session 50): a measured rate, never 0.
TEST(RecipeNovelty, TheShippedProfileMeasuresTheRecipeBand) {
  const FittedProfile& p = test_support::shipped_fitted_profile();
  const auto it = p.novelty_bands.find("recipe");
  ASSERT_NE(it, p.novelty_bands.end()) << "refit with the recipe dimension (session 49)";
  EXPECT_GE(it->second.rows, 8);
  EXPECT_GE(it->second.groups, 3);
  EXPECT_NE(it->second.source.find("measured"), std::string::npos) << it->second.source;
  EXPECT_GT(growth_per_unit(p, NoveltyDimension::recipe), 0.0);
}

// A fitted row that ran a mechanism covers it; a coverage that recorded nothing covers every recipe.
TEST(RecipeNovelty, FittedRowsWithTheMechanismCoverIt) {
  Scenario s = covered();
  s.training.cuda_graphs = CudaGraphs::te_router;
  FitCoverage without;
  without.add(covered(), "c");
  EXPECT_TRUE(novelty_of(s, without).has(NoveltyDimension::recipe));
  FitCoverage with = without;
  with.add(s, "c2");
  EXPECT_EQ(with.recipes, std::vector<std::string>{"te-router"});
  EXPECT_FALSE(novelty_of(s, with).has(NoveltyDimension::recipe));
  EXPECT_FALSE(novelty_of(s, FitCoverage{}).has(NoveltyDimension::recipe));
  // The profile text keeps the list (and an old profile without it reads as none ran).
  FittedProfile p = test_support::shipped_fitted_profile();
  p.coverage.recipes = with.recipes;
  const FittedProfile back = parse_fitted_profile(fitted_profile_toml(p), "round-trip.toml");
  EXPECT_EQ(back.coverage.recipes, with.recipes);
  EXPECT_FALSE(novelty_of(s, back).has(NoveltyDimension::recipe));
  EXPECT_TRUE(test_support::shipped_fitted_profile().coverage.recipes.empty());
}

}  // namespace
}  // namespace moetwin
