// The band's replays run with the caller's options (issue 53 leftovers, session 49): a2a_term_spread
// predicts an unmeasured dispatcher again with each measured relative's A2A terms, and a stack without
// rows on the stack it inherits from; under `predict --calibration none` (or `--moe-cost balanced`) those
// far ends are priced as the prediction itself was, not with the default GPU curves. `predict` replays the
// inherited stack once: stack_inheritance takes the spread's answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/novelty.hpp"
#include "moetwin/sim/stack_inheritance.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_profile.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// qwen3-30b-a3b cut to 2 layers on 2 p5en nodes (H200: the shipped calibration has its GEMM curves), one
// EP16 group over both: the A2A terms and the compute pricing both matter.
Scenario small(const std::string& dispatcher, const std::string& stack) {
  std::string text =
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n[cluster]\ninstance = "
      "\"p5en.48xlarge\"\nnodes = 2\n[parallelism]\ntp = 1\npp = 1\nep = 16\ndp = 16\n[training]\n"
      "micro_batch = 1\nglobal_batch = 32\nseq_length = 4096\n[dispatcher]\nname = \"" +
      dispatcher + "\"\n";
  if (!stack.empty()) text += "[stack]\nname = \"" + stack + "\"\n";
  return parse_scenario(text, "t.toml", catalog());
}

// The options `predict --calibration none` predicts with: catalog efficiencies, no GEMM curves.
PredictOptions uncalibrated(const FittedProfile& p, const Scenario& s) {
  PredictOptions o;
  o.profile = p.sim;
  inherit_stack_terms(o.profile, s.stack.spec, p.coverage);
  o.calibration = false;
  return o;
}

TEST(BandReplayOptions, UnmeasuredDispatcherReplaysWithTheCallersCalibration) {
  const FittedProfile p = test_support::shipped_fitted_profile();
  const Scenario gin = small("deepep-v2-gin", "");
  ASSERT_FALSE(has_own_a2a_terms(p, "deepep-v2-gin")) << "no live runs of it in the shipped fit";
  const PredictOptions none = uncalibrated(p, gin);
  const double t = predict(gin, none).iteration_s;
  const TermSpread spread = a2a_term_spread(gin, p, t, none);
  // By hand: the scenario predicted directly with each measured relative's terms under the same options.
  double fastest = t, slowest = t;
  int sources = 0;
  for (const auto& [name, source] : generic_a2a_sources(p)) {
    PredictOptions o = predict_options_for(gin, source);
    o.calibration = false;
    const double x = predict(gin, o).iteration_s;
    fastest = std::min(fastest, x);
    slowest = std::max(slowest, x);
    ++sources;
  }
  ASSERT_GT(sources, 1);
  EXPECT_EQ(spread.replays, sources);
  EXPECT_EQ(spread.fastest_s, fastest);
  EXPECT_EQ(spread.slowest_s, slowest);
  const Novelty novelty = novelty_of(gin, p);
  EXPECT_EQ(spread.band.lo_s, band_for(p, fastest, novelty).lo_s);
  EXPECT_EQ(spread.band.hi_s, band_for(p, slowest, novelty).hi_s);
  // With the default options (the H200's measured GEMM curves) every end moves: the calibration is not
  // what the far ends were priced with before (they took the default curves whatever the caller held).
  const double calibrated_t = predict(gin, predict_options_for(gin, p)).iteration_s;
  ASSERT_NE(calibrated_t, t) << "the H200 calibration changes the prediction";
  const TermSpread calibrated = a2a_term_spread(gin, p, calibrated_t);
  EXPECT_NE(calibrated.fastest_s, spread.fastest_s);
  EXPECT_NE(calibrated.slowest_s, spread.slowest_s);
}

TEST(BandReplayOptions, UnmeasuredDispatcherReplaysWithTheCallersMoeCost) {
  const FittedProfile p = test_support::shipped_fitted_profile();
  const Scenario gin = small("deepep-v2-gin", "");
  PredictOptions balanced = uncalibrated(p, gin);
  balanced.calibration = true;
  balanced.moe_cost = PredictOptions::MoeCost::balanced;  // `predict --moe-cost balanced`
  const double t = predict(gin, balanced).iteration_s;
  const TermSpread spread = a2a_term_spread(gin, p, t, balanced);
  double fastest = t, slowest = t;
  for (const auto& [name, source] : generic_a2a_sources(p)) {
    PredictOptions o = predict_options_for(gin, source);
    o.moe_cost = PredictOptions::MoeCost::balanced;
    o.seams.moe = nullptr;  // the balanced NCCL default, no routing plans or dispatcher model
    const double x = predict(gin, o).iteration_s;
    fastest = std::min(fastest, x);
    slowest = std::max(slowest, x);
  }
  EXPECT_EQ(spread.fastest_s, fastest);
  EXPECT_EQ(spread.slowest_s, slowest);
  const TermSpread dispatcher = a2a_term_spread(gin, p, t);  // the far ends priced by the dispatcher model
  EXPECT_TRUE(dispatcher.fastest_s != spread.fastest_s || dispatcher.slowest_s != spread.slowest_s);
}

TEST(BandReplayOptions, InheritedStackReplaysOnceWithTheCallersOptions) {
  const FittedProfile p = test_support::shipped_fitted_profile();
  const Scenario s = small("nccl-alltoall", "nemo-26.08");
  const Scenario on_fitted = small("nccl-alltoall", "nemo-26.04.01");
  const PredictOptions none = uncalibrated(p, s);
  const double t = predict(s, none).iteration_s;
  const TermSpread spread = a2a_term_spread(s, p, t, none);
  ASSERT_EQ(spread.inherited_stack, "nemo-26.04.01");
  EXPECT_EQ(spread.replays, 1);  // nccl-alltoall has its own terms: only the inherited stack is replayed
  // By hand: the scenario on the fitted stack, predicted directly under the same options.
  PredictOptions direct = predict_options_for(on_fitted, p);
  direct.calibration = false;
  const double inherited = predict(on_fitted, direct).iteration_s;
  EXPECT_EQ(spread.inherited_stack_s, inherited);
  EXPECT_EQ(spread.fastest_s, std::min(t, inherited));
  EXPECT_EQ(spread.slowest_s, std::max(t, inherited));
  const TermSpread calibrated = a2a_term_spread(s, p, predict(s, predict_options_for(s, p)).iteration_s);
  EXPECT_NE(calibrated.inherited_stack_s, spread.inherited_stack_s);

  // `predict`'s attribution takes both ends from the spread: one replay per component between them.
  const std::vector<std::string> changed =
      changed_stack_components(catalog().stack("nemo-26.04.01"), s.stack.spec);
  ASSERT_GE(changed.size(), 2u);
  const StackInheritance alone = stack_inheritance(s, p, none);
  const StackInheritance taken = stack_inheritance(s, p, none, &spread);
  EXPECT_EQ(alone.replays, static_cast<int>(changed.size()) + 1);
  EXPECT_EQ(taken.replays, static_cast<int>(changed.size()) - 1);
  EXPECT_EQ(taken.inherited_s, spread.inherited_stack_s);
  EXPECT_EQ(alone.inherited_s, spread.inherited_stack_s);  // the same replay, made twice before
  EXPECT_EQ(alone.predicted_s, t);
  EXPECT_EQ(taken.predicted_s, t);
  ASSERT_EQ(taken.differences.size(), alone.differences.size());
  for (std::size_t k = 0; k < taken.differences.size(); ++k) {
    EXPECT_EQ(taken.differences[k].component, alone.differences[k].component);
    EXPECT_EQ(taken.differences[k].predicted_s, alone.differences[k].predicted_s);
    EXPECT_EQ(taken.differences[k].delta_s, alone.differences[k].delta_s);
  }
  EXPECT_EQ(taken.lines(), alone.lines());
}

}  // namespace
}  // namespace moetwin
