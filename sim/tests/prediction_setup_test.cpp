#include "moetwin/sim/prediction_setup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/workload_template_cache.hpp"
#include "moetwin/test_support/same_prediction.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// qwen3-30b-a3b cut to 4 layers: `instance` (p5en: a calibrated H200; p6-b300: catalog efficiencies and
// NVLink defaults), `nodes` x 8 GPUs, tp 2, pp 2, ep 4, `dispatcher`, full recompute so that every
// collective of the layer appears twice.
Scenario scenario(const std::string& instance, int nodes, const std::string& dispatcher) {
  const int dp = nodes * 8 / 4;
  std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n";
  t += "[cluster]\ninstance = \"" + instance + "\"\nnodes = " + std::to_string(nodes) + "\n";
  t += "[parallelism]\ntp = 2\npp = 2\nep = 4\netp = 1\ndp = " + std::to_string(dp) + "\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(4 * dp) +
       "\nseq_length = 2048\nrecompute = \"full\"\n";
  t += "[dispatcher]\nname = \"" + dispatcher + "\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

// The deepep-v2-gin cell on 2 p6-b300 nodes (no live runs in the shipped fit: its spread replays with each
// generic source), with balanced and with zipf (exponent 1) routing.
std::vector<Scenario> gin_balanced_and_zipf() {
  Scenario balanced = scenario("p6-b300.48xlarge", 2, "deepep-v2-gin");
  Scenario zipf = balanced;
  zipf.routing.kind = RoutingKind::zipf;
  zipf.routing.zipf_exponent = 1.0;
  return {balanced, zipf};
}

// Every field a command reads from a Prediction.
void expect_same(const Prediction& a, const Prediction& b, const std::string& what) {
  SCOPED_TRACE(what);
  test_support::expect_same_prediction(a, b);
}

TEST(PredictionSetupCache, PredictionsThroughTheCacheEqualPlainOnesOnAnyThreadCount) {
  const FittedProfile profile = resolve_fitted_profile("");
  std::vector<Scenario> scenarios;
  for (const std::string instance : {"p5en.48xlarge", "p6-b300.48xlarge"}) {
    for (const int nodes : {1, 2}) {
      for (const std::string dispatcher : {"nccl-alltoall", "deepep-uccl", "deepep-nvshmem"})
        scenarios.push_back(scenario(instance, nodes, dispatcher));
    }
  }
  std::vector<Prediction> plain;
  for (const Scenario& s : scenarios) plain.push_back(predict(s, predict_options_for(s, profile)));
  for (const int threads : {1, 2, 4}) {
    const auto cache = std::make_shared<const PredictionSetupCache>();
    std::vector<Prediction> cached(scenarios.size());
    // Twice over: the second pass finds every set-up and collective answer already made.
    for (int pass = 0; pass < 2; ++pass) {
      parallel_for(scenarios.size(), threads, [&](std::size_t k) {
        PredictOptions options = predict_options_for(scenarios[k], profile);
        options.setup_cache = cache;
        cached[k] = predict(scenarios[k], options);
      });
      for (std::size_t k = 0; k < scenarios.size(); ++k) {
        expect_same(plain[k], cached[k],
                    scenarios[k].instance.name + " " + std::to_string(scenarios[k].nodes) + " nodes " +
                        scenarios[k].dispatcher.name + ", " + std::to_string(threads) + " threads, pass " +
                        std::to_string(pass));
      }
    }
    // One set-up per (instance, nodes): the dispatchers share it.
    EXPECT_EQ(cache->size(), 4u);
  }
}

TEST(PredictionSetupCache, TermSpreadThroughTheCacheEqualsThePlainOne) {
  const FittedProfile profile = resolve_fitted_profile("");
  ASSERT_TRUE(profile.fitted) << "the shipped fitted profile";
  // deepep-v2-gin has no live runs in the shipped fit: its spread replays with each generic source.
  const Scenario s = scenario("p6-b300.48xlarge", 2, "deepep-v2-gin");
  const double t = predict(s, predict_options_for(s, profile)).iteration_s;
  const TermSpread plain = a2a_term_spread(s, profile, t);
  const auto cache = std::make_shared<const PredictionSetupCache>();
  PredictOptions through_cache;
  through_cache.setup_cache = cache;
  const TermSpread cached = a2a_term_spread(s, profile, t, through_cache);
  EXPECT_GT(plain.replays, 0);
  test_support::expect_same_spread(cached, plain);
  EXPECT_EQ(cache->size(), 1u);
}

// a2a_term_spread replays a dispatcher without runs with each generic source's terms through one MoE cost
// seam (the sources differ in generic_a2a only, which the seam does not read): each of those replays equals
// the replay with a seam of its own in every field, and the spread's ends are those replays' extremes.
// Balanced and zipf routing (a seam whose routing plans and cost classes the first replay filled).
TEST(PredictionSetupCache, TermSpreadOneMoeSeamEqualsASeamPerSource) {
  const FittedProfile profile = resolve_fitted_profile("");
  ASSERT_TRUE(profile.fitted) << "the shipped fitted profile";
  for (const Scenario& s : gin_balanced_and_zipf()) {
    const auto sources = generic_a2a_sources(profile);
    ASSERT_GE(sources.size(), 2u) << "the shared seam serves a second source";
    const PredictOptions first = predict_options_for(s, sources.front().second);
    double fastest = 12.5, slowest = 12.5;
    for (const auto& source : sources) {
      const Prediction own = predict(s, predict_options_for(s, source.second));
      PredictOptions shared = first;
      shared.profile = source.second.sim;
      expect_same(own, predict(s, shared), source.first);
      fastest = std::min(fastest, own.iteration_s);
      slowest = std::max(slowest, own.iteration_s);
    }
    const TermSpread spread = a2a_term_spread(s, profile, 12.5);
    EXPECT_EQ(spread.replays, static_cast<int>(sources.size()));
    EXPECT_EQ(spread.fastest_s, fastest);
    EXPECT_EQ(spread.slowest_s, slowest);
  }
}

// plan runs an option's band replays with the central prediction's MoE cost seam (the profile differs from
// the generic sources in generic_a2a only, which the seam does not read): each source's replay through
// the seam the central prediction filled equals the replay with a seam of its own in every field, and the
// spread through it (with and without the shared set-up and programs) equals the plain spread. Balanced
// and zipf routing.
TEST(PredictionSetupCache, TermSpreadThroughTheCentralSeamEqualsThePlainOne) {
  const FittedProfile profile = resolve_fitted_profile("");
  ASSERT_TRUE(profile.fitted) << "the shipped fitted profile";
  for (const Scenario& s : gin_balanced_and_zipf()) {
    SCOPED_TRACE(to_string(s.routing.kind));
    const PredictOptions central = predict_options_for(s, profile);
    ASSERT_NE(central.seams.moe, nullptr);
    const double t = predict(s, central).iteration_s;  // fills the seam's plans and cost classes
    for (const auto& source : generic_a2a_sources(profile)) {
      ASSERT_EQ(source.second.sim.model_params, profile.sim.model_params) << "the seam is shared";
      PredictOptions shared = central;
      shared.profile = source.second.sim;
      expect_same(predict(s, predict_options_for(s, source.second)), predict(s, shared), source.first);
    }
    const TermSpread plain = a2a_term_spread(s, profile, t);
    const auto setup = std::make_shared<const PredictionSetupCache>();
    const auto programs = std::make_shared<WorkloadTemplateCache>();
    PredictOptions with_caches = central;
    with_caches.setup_cache = setup;
    with_caches.programs = programs;
    for (const TermSpread& through :
         {a2a_term_spread(s, profile, t, central), a2a_term_spread(s, profile, t, with_caches)}) {
      EXPECT_GT(plain.replays, 0);
      test_support::expect_same_spread(through, plain);
    }
  }
}

// A model that counts its calls and answers a pure function of its arguments.
class CountingComm final : public CommCostModel {
 public:
  std::string name() const override { return "counting"; }
  double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override {
    ++calls;
    return static_cast<double>(op) + bytes * 1e-9 + static_cast<double>(ranks.size());
  }
  CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override {
    ++calls;
    CommUsage u;
    u.known = true;
    u.network_s = seconds(op, bytes, ranks);
    --calls;
    return u;
  }
  mutable int calls = 0;
};

TEST(MemoCommCost, AnswersEachQuestionOnceWithTheInnerModelsAnswer) {
  const auto inner = std::make_shared<CountingComm>();
  const MemoCommCost memo(inner);
  EXPECT_EQ(memo.name(), "counting");
  const std::vector<int> a = {0, 1, 2, 3}, b = {0, 8};
  EXPECT_EQ(memo.seconds(CollectiveOp::all_gather, 1e6, a), inner->seconds(CollectiveOp::all_gather, 1e6, a));
  const int after_first = inner->calls;
  EXPECT_EQ(memo.seconds(CollectiveOp::all_gather, 1e6, a), inner->seconds(CollectiveOp::all_gather, 1e6, a));
  EXPECT_EQ(inner->calls, after_first + 1);  // the direct call only
  // Another op, size or group is another question.
  EXPECT_NE(memo.seconds(CollectiveOp::reduce_scatter, 1e6, a),
            memo.seconds(CollectiveOp::all_gather, 1e6, a));
  EXPECT_NE(memo.seconds(CollectiveOp::all_gather, 2e6, a), memo.seconds(CollectiveOp::all_gather, 1e6, a));
  EXPECT_NE(memo.seconds(CollectiveOp::all_gather, 1e6, b), memo.seconds(CollectiveOp::all_gather, 1e6, a));
  EXPECT_EQ(memo.usage(CollectiveOp::all_to_all, 4e6, b).network_s,
            inner->usage(CollectiveOp::all_to_all, 4e6, b).network_s);
  EXPECT_TRUE(memo.usage(CollectiveOp::all_to_all, 4e6, b).known);
  EXPECT_EQ(memo.size(), 5u);  // 4 seconds questions, 1 usage question
}

}  // namespace
}  // namespace moetwin
