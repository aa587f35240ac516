// Recommendation policy: the pp auto order, crossovers, footnoted statuses, and a small grid end to end
// (Qwen3-30B on p5en, two dispatchers, unfitted profile): points, groups, winners and the table.
#include "moetwin/planning/recommend.hpp"

#include <gtest/gtest.h>

#include "moetwin/planning/recommend_report.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

Scenario qwen3_30b() {
  return load_scenario_file(std::string(MOETWIN_SOURCE_DIR) + "/scenarios/examples/qwen3-30b-p5en-2n.toml",
                            catalog());
}

TEST(Recommend, AutoPpOrderNearestFirstSmallerOnTies) {
  EXPECT_EQ(auto_pp_order(8, 61), (std::vector<int>{8, 4, 16, 2, 1}));
  EXPECT_EQ(auto_pp_order(1, 61), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(auto_pp_order(8, 6), (std::vector<int>{2, 1}));                      // at most half the layers
  EXPECT_EQ(auto_pp_order(3, 200), (std::vector<int>{4, 2, 8, 1, 16, 32, 64}));  // 4/3 is nearer than 3/2
}

TEST(Recommend, CrossoversInNodesThenInMicroBatches) {
  const std::map<std::pair<int, int>, std::string> winner_at = {
      {{1, 8}, "a"}, {{1, 16}, "b"}, {{4, 8}, "a"}, {{4, 16}, "a"}, {{4, 64}, "b"}};
  EXPECT_EQ(
      crossovers(winner_at, {8, 16, 32, 64}, {1, 4}),
      (std::vector<std::string>{"mb 1: a at 8 nodes -> b at 16 nodes", "16 nodes: b at mb 1 -> a at mb 4"}));
  EXPECT_TRUE(crossovers({{{1, 8}, "a"}, {{1, 16}, "a"}}, {8, 16}, {1}).empty());
}

TEST(Recommend, StatusesBecomeFootnotes) {
  ResultTable t;
  t.columns = {"nodes", "status", "x"};
  for (const char* s :
       {"ok", "invalid: ep 64 > 32 ranks", "does not fit: 200 GiB > 141 GiB", "invalid: ep 64 > 32 ranks"})
    t.add_row({"8", s, "1"});
  const FootnotedTable f = footnote_statuses(t, {"status", "nodes"});
  ASSERT_EQ(f.table.rows.size(), 4u);
  EXPECT_EQ(f.table.columns, (std::vector<std::string>{"status", "nodes"}));
  EXPECT_EQ(f.table.rows[0][0].text, "ok");
  EXPECT_EQ(f.table.rows[1][0].text, "invalid [1]");
  EXPECT_EQ(f.table.rows[2][0].text, "does not fit [2]");
  EXPECT_EQ(f.table.rows[3][0].text, "invalid [1]");
  EXPECT_EQ(f.footnotes,
            (std::vector<std::string>{"invalid: ep 64 > 32 ranks", "does not fit: 200 GiB > 141 GiB"}));
}

TEST(Recommend, SmallGridEndToEnd) {
  RecommendRequest request;
  request.nodes = {2, 4};
  request.micro_batches = {1};
  request.dispatchers = {"nccl-alltoall", "deepep-uccl"};
  request.pp_auto = false;
  request.threads = 2;
  const FittedProfile unfitted = resolve_fitted_profile("none");
  const Recommendation r = recommend(qwen3_30b(), catalog(), unfitted, request);
  ASSERT_EQ(r.points.size(), 4u);  // mb 1 x nodes {2, 4} x 2 dispatchers
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_TRUE(r.pp_notes.empty());
  for (const RecommendPoint& pt : r.points) {
    EXPECT_EQ(pt.status, "ok") << pt.label();
    EXPECT_EQ(pt.pp, 1);        // the scenario's
    EXPECT_TRUE(pt.own_terms);  // an unfitted profile has no generic terms to spread over
  }
  // The rows are the scenario rescaled: dp from the GPUs, the rest kept.
  EXPECT_EQ(r.rows[r.points[2].row].scenario.name, "qwen3-30b-p5en-2n.n4.mb1.nccl-alltoall");
  EXPECT_EQ(r.rows[r.points[2].row].scenario.parallel.dp, 16);
  for (const RecommendGroup& g : r.groups) {
    ASSERT_EQ(g.ranked.size(), 2u);
    EXPECT_LE(r.predictions[r.points[g.ranked[0]].row].iteration_s,
              r.predictions[r.points[g.ranked[1]].row].iteration_s);
    EXPECT_EQ(g.winner, r.points[g.ranked[0]].dispatcher);
    EXPECT_GE(g.margin, 0);
  }
  EXPECT_EQ(r.winners.size(), 2u);
  EXPECT_EQ(r.winners[0].rfind("nodes 2 (pp 1), mb 1: ", 0), 0u) << r.winners[0];
  EXPECT_EQ(r.crossovers.empty(), r.groups[0].winner == r.groups[1].winner);
  EXPECT_EQ(nothing_valid_message(r), "");
  const ResultTable table = recommendation_table(r, unfitted);
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(table.rows[0][table.column("winner")].text, r.groups[0].winner);
  const std::string text = render_recommendation_text(r, table, unfitted, "qwen3.toml");
  EXPECT_NE(text.find("a margin counts when the two bands do not overlap"), std::string::npos);
  EXPECT_NE(text.find("\nwinners:\n  nodes 2 (pp 1), mb 1: "), std::string::npos);
}

// A stack without rows: each point's band spans its answer on the fitted stack it inherits from, as
// predict's and compare's bands do (a2a_term_spread); a fitted stack replays nothing.
TEST(Recommend, StackWithoutRowsSpansTheInheritedStack) {
  RecommendRequest request;
  request.nodes = {2};
  request.micro_batches = {1};
  request.dispatchers = {"nccl-alltoall"};
  request.pp_auto = false;
  request.threads = 2;
  const FittedProfile fitted = resolve_fitted_profile("");
  ASSERT_TRUE(fitted.fitted) << "the shipped fitted profile";
  Scenario own_stack = qwen3_30b();
  own_stack.parallel.ep = 16;  // one EP group over both nodes: the stacks' EFA mechanisms differ there
  Scenario next = own_stack;
  next.stack = make_stack_choice(catalog().stack("nemo-26.08"), NcclKnobs{}, next.instance, false);
  const Recommendation r = recommend(next, catalog(), fitted, request);
  ASSERT_EQ(r.points.size(), 1u);
  const RecommendPoint& pt = r.points[0];
  ASSERT_EQ(pt.status, "ok");
  const Scenario& row = r.rows[pt.row].scenario;
  const TermSpread spread = a2a_term_spread(row, fitted, r.predictions[pt.row].iteration_s);
  ASSERT_EQ(spread.inherited_stack, "nemo-26.04.01");
  EXPECT_EQ(pt.fastest_s, spread.fastest_s);
  EXPECT_EQ(pt.slowest_s, spread.slowest_s);
  EXPECT_NE(pt.fastest_s, pt.slowest_s);
  ASSERT_FALSE(r.generic_notes.empty());
  EXPECT_NE(r.generic_notes.back().find("inherits the terms of nemo-26.04.01"), std::string::npos)
      << r.generic_notes.back();
  // On the fitted stack: one prediction, no span.
  const Recommendation own = recommend(own_stack, catalog(), fitted, request);
  EXPECT_EQ(own.points[0].fastest_s, own.points[0].slowest_s);
  EXPECT_TRUE(own.generic_notes.empty());
}

TEST(Recommend, NothingValidSaysWhy) {
  RecommendRequest request;
  request.nodes = {3};  // 24 GPUs: tp 2 x pp 5 does not divide them
  request.dispatchers = {"nccl-alltoall"};
  request.pp_auto = false;
  request.pp = {5};
  const Recommendation r = recommend(qwen3_30b(), catalog(), resolve_fitted_profile("none"), request);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].status.rfind("invalid: ", 0), 0u);
  EXPECT_NE(r.points[0].status.find("24 GPUs divisible by tp x cp x pp = 2 x 1 x 5"), std::string::npos)
      << r.points[0].status;
  EXPECT_EQ(r.winners, std::vector<std::string>{"nodes 3 (pp 5), mb 2: no valid dispatcher"});
  EXPECT_EQ(nothing_valid_message(r).rfind(
                "no dispatcher is valid at any point (nodes x pp x mb):\n  invalid: ", 0),
            0u);
}

TEST(Recommend, UnknownDispatcherIsAnInputError) {
  RecommendRequest request;
  request.nodes = {2};
  request.dispatchers = {"deepep-typo"};
  EXPECT_THROW(recommend(qwen3_30b(), catalog(), resolve_fitted_profile("none"), request), InputError);
}

}  // namespace
}  // namespace moetwin
