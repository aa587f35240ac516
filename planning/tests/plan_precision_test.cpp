// issue 52, item 4: plan's search and summary respect memory and precision. DeepSeek-V3 on 16 p5en with
// the shipped profile, as the issue reported it:
//   moetwin plan --model deepseek-v3 --instance p5en.48xlarge --precision fp8-hybrid --tokens 1e12
//       --min-nodes 16 --max-nodes 16 --gbs 256
// recommended 24.499 s/iteration against 9.260 s for bf16, while tp4 pp16 ep8 dp2 mb2 (full recompute,
// nccl-alltoall) runs 9.240 s within the HBM headroom: the search's window was set by an option beyond the
// headroom (19.1 s at 100% of HBM). Each precision's recommendation must be within 3% of the best option
// within the headroom that a 4x wider search (--screen 24 --window 0.2) finds; the searched table's
// fastest is the recommended option's time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "moetwin/planning/plan.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_profile.hpp"
#include "small_plan_request.hpp"

namespace moetwin {
namespace {

const std::string kSource = MOETWIN_SOURCE_DIR;

using test_support::catalog;

const FittedProfile& shipped() {
  return test_support::shipped_fitted_profile();
}

PlanRequest deepseek_p5en_16(Precision precision) {
  PlanRequest r = planning_test::plan_request("deepseek-v3", "p5en.48xlarge", 1e12, 16, 16, 256);
  r.choices.precision = precision;
  return r;
}

// The default search at each precision, made once for the tests below (each takes seconds).
const Plan& default_plan(Precision precision) {
  static std::map<Precision, Plan> plans;
  auto it = plans.find(precision);
  if (it == plans.end())
    it = plans.emplace(precision, make_plan(catalog(), deepseek_p5en_16(precision), shipped())).first;
  return it->second;
}

double fastest_within_headroom(const Plan& p) {
  double best = std::numeric_limits<double>::infinity();
  for (const PlanOption& o : p.options) {
    if (o.within_headroom) best = std::min(best, o.best().iteration_s);
  }
  return best;
}

class PlanPrecision : public ::testing::TestWithParam<Precision> {};

TEST_P(PlanPrecision, RecommendationWithinThreePercentOfAFourTimesWiderSearch) {
  PlanRequest r = deepseek_p5en_16(GetParam());
  const Plan& plan = default_plan(GetParam());
  r.seed_layouts *= 4;
  r.explore_window *= 4;
  const Plan wide = make_plan(catalog(), r, shipped());
  ASSERT_GE(plan.recommended, 0);
  const PlanOption& chosen = plan.options[static_cast<std::size_t>(plan.recommended)];
  EXPECT_TRUE(chosen.within_headroom) << chosen.candidate.label();
  const double best = fastest_within_headroom(wide);
  ASSERT_TRUE(std::isfinite(best));
  EXPECT_LE(chosen.best().iteration_s, best * 1.03)
      << to_string(GetParam()) << ": recommended " << chosen.candidate.label() << " "
      << chosen.best().iteration_s << " s; the wider search's best within the headroom " << best << " s";
  // One set of options: the headline fastest, the searched table's fastest and the recommendation agree.
  ASSERT_EQ(plan.searched.size(), 1u);
  EXPECT_EQ(plan.searched[0].fastest_s, chosen.best().iteration_s);
  EXPECT_EQ(plan.recommended, plan.fastest);
  EXPECT_EQ(plan.reference_s, chosen.best().iteration_s);
}

INSTANTIATE_TEST_SUITE_P(DeepSeekV3On16P5en, PlanPrecision,
                         ::testing::Values(Precision::fp8_hybrid, Precision::bf16),
                         [](const ::testing::TestParamInfo<Precision>& p) {
                           return p.param == Precision::bf16 ? std::string("bf16")
                                                             : std::string("fp8_hybrid");
                         });

// The numbers with the shipped profile (refit of 2026-12-07, session 51: the combined 1F1B's extra
// VPP warm-up; session 48 priced TE quantization per recipe): FP8 at 9.2905 s (it was 24.499 s), bf16
// at 9.2592 s with a faster layout beyond the headroom named in the searched table's note rather than shown
// as its fastest.
TEST(PlanPrecisionNumbers, Fp8FindsTheLayoutWithinTheHeadroom) {
  const Plan& fp8 = default_plan(Precision::fp8_hybrid);
  const PlanOption& f = fp8.options[static_cast<std::size_t>(fp8.recommended)];
  EXPECT_EQ(f.candidate.label(), "n16 tp4 pp16 vpp1 ep8 dp2 mb2 recompute=full overlap=off");
  EXPECT_NEAR(f.best().iteration_s, 9.2905, 5e-4);
  const Plan& bf16 = default_plan(Precision::bf16);
  const PlanOption& b = bf16.options[static_cast<std::size_t>(bf16.recommended)];
  EXPECT_NEAR(b.best().iteration_s, 9.2592, 5e-4);
  EXPECT_NEAR(bf16.searched[0].fastest_s, 9.2592, 5e-4);
  EXPECT_NEAR(bf16.searched[0].fastest_beyond_s, 9.0736, 5e-4);  // ranked last, named in the note
}

}  // namespace
}  // namespace moetwin
