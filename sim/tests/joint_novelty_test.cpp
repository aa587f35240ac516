// Joint novelty (issue 53): combinations never fitted together, dispatchers without live training rows, a
// new fabric, stacks that inherit their nearest fitted stack's terms, and a band that grows in every new
// dimension.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/novelty.hpp"
#include "moetwin/sim/stack_inheritance.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_profile.hpp"
#include "moetwin/test_support/shipped_scenario.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

Scenario live(const std::string& name) {
  return test_support::repo_scenario("scenarios/live/" + name + ".toml");
}

// What the live campaigns cover, one scenario per campaign cell (scenarios/live).
FitCoverage live_coverage() {
  FitCoverage c;
  for (const char* f : {"dsv3-b300-32n-20260601", "kimik2-b300-16n-20260604", "kimik2-b300-32n-20260604",
                        "kimik2-b300-32n-20260714", "qwen3-235b-b300-4n-20260621-pp1",
                        "qwen3-235b-b300-4n-20260621-pp2", "qwen3-235b-b300-8n-20260621",
                        "qwen3-235b-b300-8n-20260624", "qwen3-30b-h100-8n-20260622", "uccl-p5en-4n-20260430"})
    c.add(live(f), f);
  return c;
}

FittedProfile shipped() {
  return test_support::shipped_fitted_profile();
}

// No live row ran context parallelism or Megatron-FSDP: either is a new layout regime (one unit each way),
// and a cp = 1 layout without FSDP reads as before.
TEST(JointNovelty, ContextParallelismAndFsdpAreNewLayoutRegimes) {
  const FitCoverage c = live_coverage();
  Scenario s = live("qwen3-235b-b300-8n-20260621");
  EXPECT_EQ(tp_regime_of(s), "tp" + std::to_string(s.parallel.tp));
  EXPECT_FALSE(novelty_of(s, c).has(NoveltyDimension::layout)) << novelty_of(s, c).summary();
  Scenario cp = s;
  cp.parallel.cp = 2;
  const Novelty n = novelty_of(cp, c);
  EXPECT_TRUE(n.has(NoveltyDimension::layout)) << n.summary();
  EXPECT_NE(n.summary().find(" cp2"), std::string::npos) << n.summary();
  Scenario fsdp = s;
  fsdp.training.megatron_fsdp = true;
  EXPECT_EQ(tp_regime_of(fsdp), tp_regime_of(s) + " fsdp");
  EXPECT_TRUE(novelty_of(fsdp, c).has(NoveltyDimension::layout)) << novelty_of(fsdp, c).summary();
}

// p5 ran EP16 over 2 nodes, EP32 over 4 nodes ran on p6-b300: EP32 over 4 p5 nodes crosses more of p5's
// rails than any fitted p5 row, a combination never fitted although each value was.
TEST(JointNovelty, P5WithEp32OverFourNodesIsNovelOnTheInstanceEpSpanAxis) {
  const FitCoverage c = live_coverage();
  const Scenario fitted = live("qwen3-30b-h100-8n-20260622");
  EXPECT_TRUE(novelty_of(fitted, c).covered()) << novelty_of(fitted, c).summary();
  Scenario s = fitted;
  s.parallel.ep = 32;
  s.parallel.dp = 2;
  ASSERT_EQ(ep_span_nodes(s), 4);
  const Novelty n = novelty_of(s, c);
  EXPECT_TRUE(n.has(NoveltyDimension::interaction)) << n.summary();
  EXPECT_FALSE(n.has(NoveltyDimension::layout)) << n.summary();  // 4-node EP spans were fitted (on p6-b300)
  EXPECT_FALSE(n.has(NoveltyDimension::instance));
  EXPECT_NE(n.summary().find("interaction=instance x ep-nodes p5.48xlarge x 4"), std::string::npos)
      << n.summary();
  EXPECT_DOUBLE_EQ(n.distance(), 1.0);  // one doubling from the fitted 2-node span on p5
  EXPECT_EQ(n.level(), "configuration");
  // The nearest fitted rows: the p5 campaign first, one unit away.
  ASSERT_FALSE(n.nearest.empty());
  EXPECT_NE(n.nearest.front().key.find("campaign=qwen3-30b-h100-8n-20260622"), std::string::npos)
      << n.nearest.front().key;
  EXPECT_DOUBLE_EQ(n.nearest.front().distance, 1.0);
}

// A dispatcher without a live training row is a new value: it adds a unit of distance and names itself.
TEST(JointNovelty, DispatchersWithoutLiveRowsAddDistance) {
  const FitCoverage c = live_coverage();
  const Scenario base = live("kimik2-b300-32n-20260604");
  const double d0 = novelty_of(base, c).distance();
  for (const char* name : {"deepep-v2-gin", "deepep-ibgda", "hybridep"}) {
    Scenario s = base;
    s.dispatcher = catalog().dispatcher(name);
    const Novelty n = novelty_of(s, c);
    EXPECT_TRUE(n.has(NoveltyDimension::dispatcher)) << name;
    EXPECT_GT(n.distance(), d0) << name;
    EXPECT_NE(n.level(), "covered") << name;
    EXPECT_NE(n.summary().find(std::string("dispatcher=") + name), std::string::npos) << n.summary();
  }
}

// InfiniBand against an EFA-only fit: the fabric is a platform dimension of its own.
TEST(JointNovelty, DgxB200NamesTheFabric) {
  const FitCoverage c = live_coverage();
  Scenario s = live("kimik2-b300-32n-20260604");
  s.instance = catalog().instance("dgx-b200");
  s.gpu = catalog().gpu(s.instance.gpu);
  const Novelty n = novelty_of(s, c);
  EXPECT_TRUE(n.has(NoveltyDimension::fabric)) << n.summary();
  EXPECT_NE(n.summary().find("fabric=infiniband"), std::string::npos) << n.summary();
  EXPECT_EQ(n.level(), "platform");
  EXPECT_FALSE(novelty_of(live("kimik2-b300-32n-20260604"), c).has(NoveltyDimension::fabric));
}

// Every dimension widens the band: growth per unit > 0 for each, whatever its held-out rows showed.
TEST(JointNovelty, GrowthPerUnitIsPositiveForEveryDimension) {
  const FittedProfile p = shipped();
  for (const NoveltyDimension d : banded_novelty_dimensions()) {
    EXPECT_GT(growth_per_unit(p, d), 0.0) << to_string(d);
    // Measured on enough held-out groups: down to what the measurement resolves; else the campaign floor.
    const auto it = p.novelty_bands.find(to_string(d));
    const bool measured = it != p.novelty_bands.end() && it->second.groups >= kMinMeasuredGroups;
    EXPECT_GE(growth_per_unit(p, d), measured ? kMeasuredFloorPerUnit : kGrowthFloorPerUnit) << to_string(d);
  }
  EXPECT_EQ(banded_novelty_dimensions().size(), static_cast<std::size_t>(kNoveltyDimensions));
}

// A stack without rows inherits from the nearest fitted stack; each changed component is a unit of distance.
TEST(JointNovelty, StackWithoutRowsNamesItsNearestFittedStackAndChangedComponents) {
  const FitCoverage c = live_coverage();
  const StackSpec& next = catalog().stack("nemo-26.08");
  EXPECT_EQ(nearest_fitted_stack(next, c), "nemo-26.04.01");
  const std::vector<std::string> changed = changed_stack_components(catalog().stack("nemo-26.04.01"), next);
  EXPECT_NE(std::find(changed.begin(), changed.end(), "aws-ofi-nccl"), changed.end());
  EXPECT_NE(std::find(changed.begin(), changed.end(), "NCCL"), changed.end());
  Scenario s = live("kimik2-b300-32n-20260604");
  s.stack = make_stack_choice(next, NcclKnobs{}, s.instance, false);
  const Novelty n = novelty_of(s, c);
  ASSERT_TRUE(n.has(NoveltyDimension::stack));
  EXPECT_NEAR(n.distance(), std::sqrt(static_cast<double>(changed.size())), 1e-9) << n.summary();
  EXPECT_NE(n.warnings().front().find("inherits the terms of the nearest fitted stack nemo-26.04.01"),
            std::string::npos)
      << n.warnings().front();
}

// Issue 53's cell: Kimi-K2 on 32 p6-b300 (TP8 PP8 EP32 DP4, mb 4, full recompute), NCCL, on nemo-26.08
// against nemo-26.04.01: every difference between the two predictions is attributed to a named component.
TEST(JointNovelty, KimiK2CellAttributesEveryStackDifferenceToAComponent) {
  const FittedProfile p = shipped();
  Scenario s = live("kimik2-b300-32n-20260604");  // the cell: mb 4, full recompute, nccl-alltoall
  s.stack = make_stack_choice(catalog().stack("nemo-26.08"), NcclKnobs{}, s.instance, false);
  const StackInheritance inh = stack_inheritance(s, p);
  ASSERT_TRUE(inh.inherited);
  EXPECT_EQ(inh.from, "nemo-26.04.01");
  ASSERT_FALSE(inh.differences.empty());
  double sum = 0;
  for (const StackComponentDifference& d : inh.differences) {
    EXPECT_FALSE(d.component.empty());
    sum += d.delta_s;
  }
  EXPECT_NEAR(inh.inherited_s + sum, inh.predicted_s, 1e-9);
  EXPECT_EQ(inh.lines().size(), inh.differences.size() + 1);

  // The band every command prints spans the inherited stack's answer: the modelled differences (the P2P
  // chunk, multi-receive) were never measured in training on nemo-26.08, so the two answers' bands overlap.
  const TermSpread spread = a2a_term_spread(s, p, inh.predicted_s);
  EXPECT_EQ(spread.inherited_stack, "nemo-26.04.01");
  EXPECT_DOUBLE_EQ(spread.inherited_stack_s, inh.inherited_s);
  EXPECT_EQ(spread.replays, 1);
  EXPECT_LE(spread.band.lo_s, std::min(inh.predicted_s, inh.inherited_s));
  EXPECT_GE(spread.band.hi_s, std::max(inh.predicted_s, inh.inherited_s));
  // On its own fitted stack nothing is replayed and the band is band_for's.
  Scenario fitted = live("kimik2-b300-32n-20260604");
  const TermSpread own = a2a_term_spread(fitted, p, inh.inherited_s);
  EXPECT_TRUE(own.inherited_stack.empty());
  EXPECT_EQ(own.replays, 0);
  EXPECT_DOUBLE_EQ(own.band.hi_s, band_for(p, inh.inherited_s, novelty_of(fitted, p)).hi_s);
}

}  // namespace
}  // namespace moetwin
