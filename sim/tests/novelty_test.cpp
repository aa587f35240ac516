// Novelty of a prediction relative to the fit's coverage: per dimension, with the level that picks its band.
#include "moetwin/sim/novelty.hpp"

#include <gtest/gtest.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {
namespace {

Scenario load(const Catalog& catalog, const std::string& relative) {
  return load_scenario_file(std::string(MOETWIN_SOURCE_DIR) + "/" + relative, catalog);
}

TEST(Novelty, CoverageOfTheB300CampaignsAndTheP5enCampaign) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  FitCoverage b300;
  for (const char* f :
       {"scenarios/live/dsv3-b300-32n-20260601.toml", "scenarios/live/kimik2-b300-16n-20260604.toml",
        "scenarios/live/qwen3-235b-b300-4n-20260621-pp1.toml"})
    b300.add(load(catalog, f));
  EXPECT_EQ(b300.gpus, (std::vector<std::string>{"B300"}));
  EXPECT_EQ(b300.pp_regimes, (std::vector<std::string>{"pp1", "pp>1"}));
  EXPECT_EQ(b300.tps, (std::vector<std::string>{"tp8"}));
  EXPECT_EQ(b300.nodes, (std::vector<int>{4, 16, 32}));
  b300.dispatchers.clear();  // the live scenarios name one dispatcher each; an empty list covers all

  // The default scenario (DeepSeek-V3, 32 p6-b300 nodes) is covered.
  const Scenario dflt = load(catalog, "scenarios/default.toml");
  EXPECT_TRUE(novelty_of(dflt, b300).covered());
  EXPECT_EQ(novelty_of(dflt, b300).level(), "covered");
  EXPECT_EQ(novelty_of(dflt, b300).summary(), "");

  // The p5en campaign is new in GPU, instance, stack, precision, model and TP degree: a new platform.
  const Scenario p5en = load(catalog, "scenarios/live/uccl-p5en-4n-20260430.toml");
  const Novelty n = novelty_of(p5en, b300);
  EXPECT_EQ(n.level(), "platform");
  EXPECT_TRUE(n.has(NoveltyDimension::gpu));
  EXPECT_TRUE(n.has(NoveltyDimension::stack));
  EXPECT_TRUE(n.has(NoveltyDimension::model));
  EXPECT_TRUE(n.has(NoveltyDimension::layout));
  EXPECT_FALSE(n.has(NoveltyDimension::scale));  // 4 nodes: inside 4..32
  EXPECT_NE(n.summary().find("gpu=H200-SXM;instance=p5en.48xlarge;"), std::string::npos);
  EXPECT_NE(n.summary().find("layout=tp1"), std::string::npos);
  for (const std::string& w : n.warnings())
    EXPECT_NE(w.find("no live runs in the fit"), std::string::npos) << w;

  // Once the p5en campaign is in the coverage, it is covered.
  FitCoverage both = b300;
  both.add(p5en);
  EXPECT_TRUE(novelty_of(p5en, both).covered());
}

TEST(Novelty, ScaleLayoutAndDispatcherLevels) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  Scenario s = load(catalog, "scenarios/default.toml");
  FitCoverage c;
  c.add(s);
  // Twice the fitted node count: a new scale, a configuration-level novelty.
  Scenario big = s;
  big.nodes = 64;
  Novelty n = novelty_of(big, c);
  ASSERT_EQ(n.novel.size(), 1u);
  EXPECT_EQ(n.novel[0].dimension, NoveltyDimension::scale);
  EXPECT_EQ(n.novel[0].value, "64 nodes");
  EXPECT_EQ(n.novel[0].warning, "64 nodes: no live runs in the fit at this scale (fitted 32-32 nodes)");
  EXPECT_EQ(n.level(), "configuration");
  // An EP group over 8 nodes instead of 4 is a new layout regime.
  Scenario wide = s;
  wide.parallel.ep = 64;
  n = novelty_of(wide, c);
  ASSERT_EQ(n.novel.size(), 1u);
  EXPECT_EQ(n.summary(), "layout=ep-nodes8");
  // A dispatcher without runs leaves the level covered (its band is the A2A term spread's).
  Scenario other = s;
  other.dispatcher.name = "deepep-v2-gin";
  n = novelty_of(other, c);
  EXPECT_EQ(n.level(), "covered");
  EXPECT_EQ(n.summary(), "dispatcher=deepep-v2-gin");
  // An empty coverage covers everything.
  EXPECT_TRUE(novelty_of(big, FitCoverage{}).covered());
}

}  // namespace
}  // namespace moetwin
