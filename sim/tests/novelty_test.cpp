// Novelty of a prediction relative to the fit's coverage: per dimension, with the level that picks its band.
#include "moetwin/sim/novelty.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/test_support/shipped_profile.hpp"

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
  EXPECT_EQ(n.novel[0].warning,
            "64 nodes: no live runs in the fit at this scale (fitted 32-32 nodes; 1.0 doublings beyond)");
  EXPECT_DOUBLE_EQ(n.novel[0].distance, 1.0);
  EXPECT_EQ(n.level(), "configuration");
  // An EP group over 8 nodes instead of 4 is a new layout regime.
  Scenario wide = s;
  wide.parallel.ep = 64;
  n = novelty_of(wide, c);
  ASSERT_EQ(n.novel.size(), 1u);
  EXPECT_EQ(n.summary(), "layout=ep-nodes8");
  EXPECT_DOUBLE_EQ(n.distance(), 1.0);  // one doubling from the fitted 4-node span
  // A dispatcher without live training rows is new: a unit of distance at the configuration level (issue 53;
  // its A2A terms are its measured relatives', a2a_term_spread).
  Scenario other = s;
  other.dispatcher.name = "deepep-v2-gin";
  n = novelty_of(other, c);
  EXPECT_EQ(n.level(), "configuration");
  EXPECT_EQ(n.summary(), "dispatcher=deepep-v2-gin");
  EXPECT_DOUBLE_EQ(n.distance(), 1.0);
  // An empty coverage covers everything.
  EXPECT_TRUE(novelty_of(big, FitCoverage{}).covered());
}

// Distances: doublings beyond the fitted node range, a model's size and shape, routing a new dimension, and
// an FP8 recipe beside a fitted one at half a unit.
TEST(Novelty, DistancesGrowWithHowFarAPredictionReaches) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  Scenario s = load(catalog, "scenarios/default.toml");
  FitCoverage c;
  c.add(s);
  Scenario small = s;
  small.nodes = 4;
  c.add(small);  // nodes 4..32
  double last = 0;
  for (const int nodes : {64, 4096, 100000}) {
    Scenario big = s;
    big.nodes = nodes;
    const Novelty n = novelty_of(big, c);
    ASSERT_EQ(n.novel.size(), 1u);
    EXPECT_NEAR(n.distance(), std::log2(nodes / 32.0), 1e-12);
    EXPECT_GT(n.distance(), last);
    last = n.distance();
  }
  Scenario two = s;
  two.nodes = 1;
  EXPECT_NEAR(novelty_of(two, c).distance(), 2.0, 1e-12);  // 4 -> 1 node: two doublings below

  // Zipf routing on a fit of forced-balance rows: the routing dimension, a configuration novelty.
  Scenario zipf = s;
  zipf.routing.kind = RoutingKind::zipf;
  zipf.routing.zipf_exponent = 1.2;
  Novelty n = novelty_of(zipf, c);
  ASSERT_TRUE(n.has(NoveltyDimension::routing));
  EXPECT_EQ(n.summary(), "routing=zipf");
  EXPECT_EQ(n.level(), "configuration");
  EXPECT_NE(n.warnings()[0].find("every fitted row ran balanced routing"), std::string::npos)
      << n.warnings()[0];

  // A model: its distance to the nearest fitted shape (DeepSeek-V3 -> Kimi-K2: 384 vs 256 experts).
  Scenario kimi = s;
  kimi.model = catalog.model("kimi-k2");
  n = novelty_of(kimi, c);
  ASSERT_TRUE(n.has(NoveltyDimension::model));
  EXPECT_NEAR(n.distance(), std::log2(384.0 / 256.0), 1e-12);
  EXPECT_NE(n.warnings()[0].find("0.6 doublings of size and shape from deepseek-v3"), std::string::npos)
      << n.warnings()[0];
  // Without recorded shapes (an older profile) a new model is one unit away.
  FitCoverage no_shapes = c;
  no_shapes.model_shapes.clear();
  EXPECT_DOUBLE_EQ(novelty_of(kimi, no_shapes).distance(), 1.0);

  // Three new dimensions reach farther than any one of them.
  Scenario three = zipf;
  three.nodes = 64;
  three.model = catalog.model("kimi-k2");
  const Novelty t = novelty_of(three, c);
  EXPECT_EQ(t.novel.size(), 3u);
  for (const NovelValue& v : t.novel) EXPECT_GT(t.distance(), v.distance);

  // FP8: fp8-current on a fit with fp8-hybrid is half a unit (the model prices them alike); on a bf16-only
  // fit a whole one.
  Scenario hybrid = s;
  hybrid.training.precision = Precision::fp8_hybrid;
  FitCoverage fp8 = c;
  fp8.add(hybrid);
  Scenario current = s;
  current.training.precision = Precision::fp8_current;
  n = novelty_of(current, fp8);
  ASSERT_EQ(n.novel.size(), 1u);
  EXPECT_DOUBLE_EQ(n.distance(), kFp8RecipeDistance);
  EXPECT_NE(n.warnings()[0].find("the model prices every FP8 recipe alike"), std::string::npos);
  EXPECT_DOUBLE_EQ(novelty_of(current, c).distance(), 1.0);
  EXPECT_EQ(fp8_recipe_note(Precision::bf16), "");
  EXPECT_NE(fp8_recipe_note(Precision::fp8_blockwise).find("fp8-blockwise"), std::string::npos);
  EXPECT_EQ(fp8_recipe_note(Precision::nvfp4), "");  // its own rate and quantization, no FP8 recipe
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// The shipped profile: the same scenario farther from the fit gets a strictly wider band (32 nodes is
// inside the fitted range; 64, 4,096 and 100,000 beyond it), three new dimensions a wider band than any
// one, and zipf routing names the routing dimension (every fitted row forced balanced routing).
TEST(Novelty, ShippedProfileBandsWidenWithDistance) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const FittedProfile& profile = test_support::shipped_fitted_profile();
  const Scenario s = load(catalog, "scenarios/default.toml");
  double hi = 0, lo = 1e300;
  for (const int nodes : {32, 64, 4096, 100000}) {
    Scenario at = s;
    at.nodes = nodes;
    const UncertaintyBand b = band_for(profile, 10, novelty_of(at, profile));
    EXPECT_GT(b.hi_s, hi) << nodes;
    EXPECT_LT(b.lo_s, lo) << nodes;
    hi = b.hi_s;
    lo = b.lo_s;
  }
  Scenario zipf = s;
  zipf.routing.kind = RoutingKind::zipf;
  zipf.routing.zipf_exponent = 1.2;
  const Novelty z = novelty_of(zipf, profile);
  EXPECT_TRUE(z.has(NoveltyDimension::routing));
  EXPECT_NE(z.summary().find("routing=zipf"), std::string::npos);
  // Three new dimensions (GPU, scale, routing) against each alone. (Since the p5 campaign joined the fit,
  // leave-one-campaign-out measures no growth beyond the in-family band for a new GPU: the GPU alone gets
  // the in-family band; scale and routing take the conservative prior.)
  Scenario gpu = s;
  gpu.instance = catalog.instance("p6-b200.48xlarge");
  gpu.gpu = catalog.gpu(gpu.instance.gpu);
  Scenario scale = s;
  scale.nodes = 4096;
  Scenario three = zipf;
  three.instance = gpu.instance;
  three.gpu = gpu.gpu;
  three.nodes = scale.nodes;
  const double wide = band_for(profile, 10, novelty_of(three, profile)).hi_s;
  for (const Scenario* one : {&gpu, &scale, &zipf})
    EXPECT_GT(wide, band_for(profile, 10, novelty_of(*one, profile)).hi_s)
        << one->instance.name << " " << one->nodes;
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// An NVLink domain larger than every fitted instance's (issue 42 item 2): its own platform dimension, named
// with the GPUs of the domain; covered when a fitted instance had the same domain.
TEST(Novelty, NvlinkDomainBeyondTheFittedNodes) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  FitCoverage b300;
  b300.add(load(catalog, "scenarios/live/dsv3-b300-32n-20260601.toml"));
  const Scenario ultra = load(catalog, "scenarios/examples/dsv3-p6e-gb200x72.toml");
  EXPECT_EQ(nvlink_domain_of(ultra), "nvl64");  // the scenario's [cluster] nvlink_domain_gpus
  const Novelty n = novelty_of(ultra, b300);
  EXPECT_TRUE(n.has(NoveltyDimension::nvlink_domain));
  EXPECT_EQ(n.level(), "platform");
  EXPECT_NE(n.summary().find("nvlink-domain=nvl64"), std::string::npos) << n.summary();
  // EP64 in one domain spans one NVLink group (NCCL's reach is the domain), not 16 trays.
  EXPECT_EQ(ep_span_nodes(ultra), 1);
  // A fit that saw the same instance covers its catalog domain (72), not the 64 the scenario cut it to.
  FitCoverage same;
  same.add(ultra);
  EXPECT_TRUE(novelty_of(ultra, same).has(NoveltyDimension::nvlink_domain));
  Scenario whole = ultra;
  whole.instance.nvlink_domain_gpus = 72;
  EXPECT_FALSE(novelty_of(whole, same).has(NoveltyDimension::nvlink_domain));
  // An 8-GPU instance's domain is its node: no new dimension against the B300 fit.
  EXPECT_FALSE(
      novelty_of(load(catalog, "scenarios/default.toml"), b300).has(NoveltyDimension::nvlink_domain));
}

}  // namespace
}  // namespace moetwin
