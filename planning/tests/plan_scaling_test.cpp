// Scaling across node counts in plan (each node count's fastest against the smallest's) and the time to
// train and cost columns plan and recommend share: the same option gives the same days, node-hours and cost
// in both.
#include <gtest/gtest.h>

#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/plan.hpp"
#include "moetwin/planning/plan_report.hpp"
#include "moetwin/planning/recommend.hpp"
#include "moetwin/planning/recommend_report.hpp"
#include "moetwin/planning/training_cost.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "small_plan_request.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// small_request() on one or two nodes, 1e10 tokens in batches of 32.
PlanRequest two_counts() {
  return planning_test::small_request(1e10, 2, 32);
}

TEST(PlanScaling, EachNodeCountAgainstTheSmallest) {
  const Plan plan = make_plan(catalog(), two_counts(), resolve_fitted_profile("none"));
  ASSERT_EQ(plan.searched.size(), 2u);
  const NodeCountSearch& one = plan.searched[0];
  const NodeCountSearch& two = plan.searched[1];
  ASSERT_GT(one.fastest_s, 0);
  ASSERT_GT(two.fastest_s, 0);
  EXPECT_EQ(plan.reference_nodes, 1);
  EXPECT_DOUBLE_EQ(plan.reference_s, one.fastest_s);
  EXPECT_DOUBLE_EQ(one.speedup, 1);
  EXPECT_DOUBLE_EQ(two.speedup, one.fastest_s / two.fastest_s);
  EXPECT_DOUBLE_EQ(two.scaling_efficiency, two.speedup / 2);
  EXPECT_DOUBLE_EQ(two.node_hours_per_gtoken, node_hours_per_gtoken(two.fastest_s, 2, 32.0 * 4096));
  for (const PlanOption& o : plan.options) {
    EXPECT_DOUBLE_EQ(o.speedup, plan.reference_s / o.best().iteration_s);
    EXPECT_DOUBLE_EQ(o.scaling_efficiency, o.speedup / o.candidate.nodes);
    // A token budget's node-hours are its node-hours per 1e9 tokens scaled.
    EXPECT_NEAR(o.node_hours, o.node_hours_per_gtoken * 10, 1e-9 * o.node_hours);
  }
  const std::string text = render_plan_text(plan, false);
  EXPECT_NE(text.find("scaling_eff"), std::string::npos);
  EXPECT_NE(text.find("speedup against 1 node,"), std::string::npos) << text;
  const ResultTable t = plan_options_table(plan);
  EXPECT_EQ(t.rows[0][t.column("precision")].text, "bf16");
  EXPECT_EQ(t.rows[0][t.column("routing")].text, "balanced");
}

// recommend --tokens on a plan option's scenario gives plan's days, node-hours and cost for it.
TEST(PlanScaling, RecommendAndPlanAgreeOnTimeAndCost) {
  PlanRequest request = two_counts();
  request.min_nodes = request.max_nodes = 1;
  const FittedProfile profile = resolve_fitted_profile("none");
  const Plan plan = make_plan(catalog(), request, profile);
  ASSERT_FALSE(plan.options.empty());
  const PlanOption& o = plan.options[0];
  const InstanceSpec& instance = catalog().instance(request.instance);
  const Scenario s =
      scenario_for(o.candidate, catalog().model(request.model), instance, catalog().gpu(instance.gpu),
                   catalog().dispatcher(o.best().dispatcher), plan.request);
  RecommendRequest rr;
  rr.nodes = {1};
  rr.dispatchers = {o.best().dispatcher};
  rr.pp_auto = false;
  rr.tokens = request.tokens;
  rr.threads = 2;
  const Recommendation r = recommend(s, catalog(), profile, rr);
  const ResultTable t = recommendation_table(r, profile);
  ASSERT_EQ(t.rows.size(), 1u);
  const auto cell = [&t](const char* column) { return std::stod(t.rows[0][t.column(column)].text); };
  EXPECT_EQ(t.rows[0][t.column("tp")].text, std::to_string(o.candidate.parallel.tp));
  EXPECT_EQ(t.rows[0][t.column("ep")].text, std::to_string(o.candidate.parallel.ep));
  EXPECT_EQ(t.rows[0][t.column("dp")].text, std::to_string(o.candidate.parallel.dp));
  EXPECT_DOUBLE_EQ(cell("predicted_iter_s"), std::stod(format_fixed(o.best().iteration_s, 6)));
  EXPECT_NEAR(cell("days"), o.days, 5e-4);
  EXPECT_NEAR(cell("days_lo"), o.days_lo, 5e-4);
  EXPECT_NEAR(cell("days_hi"), o.days_hi, 5e-4);
  EXPECT_NEAR(cell("node_hours"), o.node_hours, 0.05);
  EXPECT_NEAR(cell("cost_usd"), o.cost_usd, 0.5);
  EXPECT_DOUBLE_EQ(cell("speedup"), 1);
}

}  // namespace
}  // namespace moetwin
