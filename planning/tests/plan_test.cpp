#include "moetwin/planning/plan.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/planning/plan_report.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "small_plan_request.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

FittedProfile unfitted() {
  return resolve_fitted_profile("none");
}

using planning_test::small_request;

std::string error_of(const PlanRequest& r) {
  return test_support::error_of([&] { check_plan_request(catalog(), r); });
}

// check_plan_request's message for small_request() as `change` leaves it.
std::string error_with(const std::function<void(PlanRequest&)>& change) {
  PlanRequest r = small_request();
  change(r);
  return error_of(r);
}

TEST(PlanRequestCheck, ExactMessages) {
  EXPECT_EQ(
      error_with([](PlanRequest& p) { p.model = "gpt-5"; }),
      "<input>: --model: \"gpt-5\": a catalog model: one of deepseek-v2, deepseek-v2-lite, deepseek-v3, "
      "glm-4.5, glm-4.5-air, gpt-oss-120b, gpt-oss-20b, kimi-k2, llama3-70b, llama3-8b, llama3.1-405b, "
      "mixtral-8x22b, mixtral-8x7b, "
      "qwen3-235b-a22b, qwen3-30b-a3b, qwen3-coder-480b-a35b, uccl-dsv3-proxy");
  EXPECT_EQ(error_with([](PlanRequest& p) { p.instance = "p4d.24xlarge"; }),
            "<input>: --instance: \"p4d.24xlarge\": a catalog instance: one of deepep-testbed-h800, "
            "dgx-b200, dgx-b300, dgx-gb200, "
            "dgx-gb300, dgx-h100, p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge, "
            "p6-b300.48xlarge, p6e-gb200.36xlarge");
  PlanRequest r = small_request();
  const std::string tokens_range =
      "a number of tokens in [1e6, 1e15] (e.g. 1e12; DeepSeek-V3 pre-trained on 1.48e13)";
  r.tokens = 0;
  EXPECT_EQ(error_of(r), "<input>: --tokens: 0: " + tokens_range);
  r.tokens = -5;
  EXPECT_EQ(error_of(r), "<input>: --tokens: -5: " + tokens_range);
  r.tokens = 1e30;  // once printed as 3.8e20 days
  EXPECT_EQ(error_of(r), "<input>: --tokens: 1e+30: " + tokens_range);
  r.tokens = 1e15;
  EXPECT_EQ(error_of(r), "no error");
  EXPECT_EQ(error_with([](PlanRequest& p) { p.deadline_days = -1; }),
            "<input>: --deadline: -1: days > 0 (leave --deadline out for no deadline)");
  EXPECT_EQ(error_with([](PlanRequest& p) { p.max_nodes = 0; }),
            "<input>: --max-nodes: 0: an integer in [1, 4096]");
  EXPECT_EQ(error_with([](PlanRequest& p) {
              p.max_nodes = 4;
              p.min_nodes = 8;
            }),
            "<input>: --min-nodes: 8: an integer in [1, --max-nodes = 4]");
  EXPECT_EQ(error_with([](PlanRequest& p) { p.price_usd_per_hour = -3; }),
            "<input>: --price: -3: USD per node-hour >= 0");
  EXPECT_EQ(error_with([](PlanRequest& p) { p.hbm_headroom = 0.6; }),
            "<input>: --hbm-headroom: 0.6: a share of HBM in [0, 0.5] (default 0.1)");
  EXPECT_EQ(error_of(small_request()), "no error");
}

// Options beyond the HBM headroom rank after every option within it, and are never the fastest, cheapest
// or on the front while an option within it exists.
TEST(PlanHeadroom, OptionsBeyondTheHeadroomRankLast) {
  PlanRequest r = small_request();
  for (const double headroom : {0.0, 0.5}) {
    r.hbm_headroom = headroom;
    const Plan p = make_plan(catalog(), r, unfitted());
    ASSERT_FALSE(p.options.empty());
    bool beyond_seen = false;
    int within = 0;
    for (const PlanOption& o : p.options) {
      const bool in = o.best().memory_bytes <= (1 - headroom) * o.hbm_bytes;
      EXPECT_EQ(o.within_headroom, in) << o.candidate.label();
      if (!in) beyond_seen = true;
      if (in) ++within;
      EXPECT_FALSE(in && beyond_seen) << "within after beyond: " << o.candidate.label();
      if (within > 0 && !in) {
        EXPECT_FALSE(o.pareto) << o.candidate.label();
      }
    }
    if (within > 0) {
      EXPECT_TRUE(p.options[static_cast<std::size_t>(p.fastest)].within_headroom);
      EXPECT_TRUE(p.options[static_cast<std::size_t>(p.cheapest)].within_headroom);
    }
    if (headroom == 0.0) {
      EXPECT_EQ(within, static_cast<int>(p.options.size()));  // every option fits
    }
  }
}

TEST(PlanScreening, ProxyOrdersByRecomputeAndBubble) {
  Candidate a;
  a.parallel = {8, 4, 1, 8, 1, 2, 1, {}};
  a.micro_batch = 1;  // 16 / (1 x 2) = 8 microbatches: bubble 3/8
  EXPECT_DOUBLE_EQ(screening_proxy(a, 16), 1.375);
  a.parallel.vpp = 2;  // 3/16
  EXPECT_DOUBLE_EQ(screening_proxy(a, 16), 1.1875);
  a.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(screening_proxy(a, 16), 1.1875 * 4.0 / 3.0);
}

class SmallPlan : public ::testing::Test {
 protected:
  static const Plan& plan() {
    static const Plan p = [] {
      PlanRequest r = small_request();
      r.price_usd_per_hour = 10;
      r.deadline_days = 1000;
      return make_plan(catalog(), r, unfitted());
    }();
    return p;
  }
};

TEST_F(SmallPlan, PriceOverrideAndCosts) {
  const Plan& p = plan();
  EXPECT_EQ(p.price_usd_per_hour, 10);
  EXPECT_EQ(p.price_source, "--price");
  // Two groups (the cap), each with its vpp / overlap variants: one option per variant.
  ASSERT_GE(p.options.size(), 2u);
  EXPECT_EQ(p.enumerated, 144);  // PlanCandidates.EnumerationCountsOnOneNode by hand
  ASSERT_EQ(p.searched.size(), 1u);
  EXPECT_EQ(p.searched[0].groups_predicted, 2);
  for (const PlanOption& o : p.options) {
    // 1e9 tokens / (16 x 4096 tokens per iteration) iterations.
    const double iterations = 1e9 / (16.0 * 4096.0);
    EXPECT_NEAR(o.days, iterations * o.best().iteration_s / 86400.0, 1e-12);
    EXPECT_NEAR(o.node_hours, o.days * 24.0, 1e-9);
    EXPECT_NEAR(o.cost_usd, o.node_hours * 10.0, 1e-9);
    // Unfitted band: predicted / 1.5 .. predicted / 0.5.
    EXPECT_NEAR(o.best().band.lo_s, o.best().iteration_s / 1.5, 1e-12);
    EXPECT_NEAR(o.best().band.hi_s, o.best().iteration_s * 2.0, 1e-12);
    EXPECT_NEAR(o.days_hi, 2 * o.days, 1e-9);
    EXPECT_TRUE(o.meets_deadline);
    EXPECT_LE(o.memory_bytes, o.hbm_bytes);
    for (const DispatcherOutcome& d : o.outcomes) {
      EXPECT_GT(d.memory_bytes, 0);
      EXPECT_LE(d.memory_bytes, o.hbm_bytes) << d.dispatcher;
    }
  }
  EXPECT_LE(p.options[0].days, p.options[1].days);
  // One node count: the front is the fastest option alone, and it is the cheapest too.
  EXPECT_TRUE(p.options[0].pareto);
  EXPECT_FALSE(p.options[1].pareto);
  EXPECT_EQ(p.recommended, 0);
  EXPECT_EQ(p.fastest, 0);
  EXPECT_EQ(p.cheapest, 0);
  EXPECT_TRUE(p.recommended_meets_deadline);
}

TEST_F(SmallPlan, EveryOptionComparesEveryDispatcherAndRejectionsAreExplained) {
  const Plan& p = plan();
  // Every predicted layout has every catalog dispatcher either predicted or rejected with a reason; on this
  // EFA instance the InfiniBand-only transports are rejected per layout whose EP group leaves the node.
  for (const Rejection& r : p.rejected) {
    if (r.reason.find("infiniband only") != std::string::npos) {
      EXPECT_TRUE(r.dispatcher == "deepep-ibgda" || r.dispatcher == "hybridep") << r.dispatcher;
    }
  }
  for (const PlanOption& o : p.options) {
    std::size_t rejected = 0;
    for (const Rejection& r : p.rejected) {
      // Per layout, or for every layout ("*": a dispatcher that cannot run on the instance at all).
      if (r.label == o.candidate.label() || r.label == "*") ++rejected;
    }
    EXPECT_EQ(o.outcomes.size() + rejected, catalog().dispatchers().size()) << o.candidate.label();
    for (std::size_t i = 1; i < o.outcomes.size(); ++i)
      EXPECT_LE(o.outcomes[i - 1].iteration_s, o.outcomes[i].iteration_s);
    for (std::size_t i = 0; i < o.outcomes.size(); ++i) EXPECT_EQ(o.outcomes[i].spread_known, i < 2);
  }
  const PlanOption& f = p.options[0];
  ASSERT_GE(f.outcomes.size(), 2u);
  EXPECT_NEAR(f.margin_pct, (f.outcomes[1].iteration_s / f.outcomes[0].iteration_s - 1) * 100, 1e-9);
  int not_predicted = 0;
  for (const Rejection& r : p.rejected) {
    EXPECT_FALSE(r.reason.empty());
    if (r.reason.rfind("not predicted: the search stopped at --max-layouts 2 groups", 0) == 0)
      ++not_predicted;
  }
  EXPECT_GT(not_predicted, 0);
  EXPECT_TRUE(p.searched[0].capped);
  const ResultTable t = plan_options_table(p);
  EXPECT_EQ(t.rows.size(), p.options.size());
  EXPECT_EQ(t.rows[0][t.column("recommended")].text, "true");
  EXPECT_EQ(t.rows[0][t.column("fastest")].text, "true");
  EXPECT_EQ(t.rows[0][t.column("gpus")].text, "8");
  const std::string text = render_plan_text(p, true);
  EXPECT_NE(text.find("recommendation: rank 1: 1 x p5en.48xlarge"), std::string::npos) << text;
  EXPECT_NE(
      text.find("objective: the cheapest option (fewest node-hours) that meets the 1000.0-day deadline"),
      std::string::npos);
  EXPECT_NE(text.find("search stopped at --max-layouts 2"), std::string::npos);
  EXPECT_NE(text.find("rejected candidates:"), std::string::npos);
}

// The search against an exhaustive run (every group a seed) on a small grid: qwen3-30b-a3b on 1 and 2
// p5en nodes, every fitting layout with every dispatcher. The search must find the fastest option of each
// node count and keep every option within 5% of it.
TEST(PlanSearch, MatchesAnExhaustiveRunWithinFivePercent) {
  PlanRequest r = small_request();
  r.max_nodes = 2;
  r.seed_layouts = 2;
  r.max_layouts_per_node_count = 1000;
  const Plan searched = make_plan(catalog(), r, unfitted());
  r.seed_layouts = 1000;
  const Plan exhaustive = make_plan(catalog(), r, unfitted());
  ASSERT_EQ(exhaustive.searched.size(), 2u);
  int within = 0;
  for (std::size_t n = 0; n < exhaustive.searched.size(); ++n) {
    const NodeCountSearch& all = exhaustive.searched[n];
    const NodeCountSearch& some = searched.searched[n];
    EXPECT_EQ(all.groups_predicted, all.groups);  // exhaustive indeed
    EXPECT_LT(some.groups_predicted, all.groups) << "the small grid must exercise the search";
    EXPECT_FALSE(some.capped);
    EXPECT_DOUBLE_EQ(some.fastest_s, all.fastest_s) << all.nodes << " nodes";
    for (const PlanOption& o : exhaustive.options) {
      if (o.candidate.nodes != all.nodes || o.best().iteration_s > all.fastest_s * 1.05) continue;
      ++within;
      bool kept = false;
      for (const PlanOption& k : searched.options) {
        if (k.candidate.label() == o.candidate.label()) {
          kept = true;
          EXPECT_EQ(k.best().dispatcher, o.best().dispatcher);
          EXPECT_DOUBLE_EQ(k.best().iteration_s, o.best().iteration_s);
        }
      }
      EXPECT_TRUE(kept) << o.candidate.label() << " " << o.best().iteration_s << " s, fastest "
                        << all.fastest_s << " s";
    }
  }
  EXPECT_GT(within, 2);
}

TEST(PlanNodes, RangeAsAskedAndEmptyCountsExplained) {
  EXPECT_EQ(node_counts(1, 48), (std::vector<int>{1, 2, 4, 8, 16, 32, 48}));
  EXPECT_EQ(node_counts(3, 16), (std::vector<int>{3, 4, 8, 16}));
  EXPECT_EQ(node_counts(12, 12), (std::vector<int>{12}));
  // deepseek-v3 does not fit on one p5en node: the node count is listed with the lightest layout's
  // verdict, and no option is invented.
  PlanRequest r = small_request();
  r.model = "deepseek-v3";
  const Plan p = make_plan(catalog(), r, unfitted());
  ASSERT_EQ(p.searched.size(), 1u);
  EXPECT_EQ(p.searched[0].fitting, 0);
  EXPECT_NE(p.searched[0].none_reason.find("does not fit: "), std::string::npos) << p.searched[0].none_reason;
  EXPECT_TRUE(p.options.empty());
  EXPECT_EQ(p.recommended, -1);
  const std::string text = render_plan_text(p, false);
  EXPECT_NE(text.find("none fits: the lightest layout, n1 "), std::string::npos) << text;
  EXPECT_NE(text.find("recommendation: none"), std::string::npos) << text;
}

TEST(PlanObjectives, FastestAndCheapestWithoutADeadline) {
  PlanRequest r = small_request();
  r.max_nodes = 2;
  r.max_layouts_per_node_count = 2;
  const Plan p = make_plan(catalog(), r, unfitted());
  ASSERT_GE(p.options.size(), 2u);
  EXPECT_EQ(p.fastest, 0);
  EXPECT_EQ(p.recommended, p.fastest);
  for (const PlanOption& o : p.options)
    EXPECT_GE(o.node_hours, p.options[static_cast<std::size_t>(p.cheapest)].node_hours);
  const std::string text = render_plan_text(p, false);
  EXPECT_NE(text.find("objective: no deadline given: the fastest and the cheapest option"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nfastest: rank 1: "), std::string::npos) << text;
  EXPECT_NE(text.find("\ncheapest: rank " + std::to_string(p.cheapest + 1) + ": "), std::string::npos)
      << text;
}

TEST(PlanDeadline, NoOptionMeetsAnImpossibleDeadline) {
  PlanRequest r = small_request();
  r.tokens = 1e15;
  r.deadline_days = 1;
  r.max_layouts_per_node_count = 1;
  const Plan p = make_plan(catalog(), r, unfitted());
  ASSERT_GE(p.options.size(), 1u);
  EXPECT_FALSE(p.options[0].meets_deadline);
  EXPECT_EQ(p.recommended, 0);
  EXPECT_FALSE(p.recommended_meets_deadline);
  EXPECT_EQ(p.price_usd_per_hour, 63.296);  // the catalog's p5en price
  EXPECT_NE(render_plan_text(p, false).find("no option meets the deadline"), std::string::npos);
}

TEST(PlanReport, DispatcherWithoutRunsIsStarredWithAFootnote) {
  // One option whose runner-up the profile has no runs of: starred where shown, explained once, and
  // labelled in the options table.
  PlanRequest r = small_request();
  r.tokens = 1e15;
  r.max_layouts_per_node_count = 1;
  Plan p = make_plan(catalog(), r, unfitted());
  ASSERT_GE(p.options.size(), 1u);
  p.options.resize(1);
  p.options[0].outcomes.resize(1);
  const std::string plain = render_plan_text(p, false);
  EXPECT_EQ(plain.find("no live runs of this dispatcher"), std::string::npos);
  EXPECT_EQ(p.options[0].best().a2a_terms, "defaults");  // unfitted profile
  DispatcherOutcome generic = p.options[0].best();
  generic.dispatcher = "deepep-v2-gin";
  generic.a2a_terms = "generic";
  generic.iteration_s *= 1.05;
  p.options[0].outcomes.push_back(generic);
  p.options[0].margin_pct = 5;
  const std::string text = render_plan_text(p, false);
  EXPECT_NE(text.find("+5.0% vs deepep-v2-gin* (within the uncertainty)"), std::string::npos) << text;
  EXPECT_NE(text.find("* no live runs of this dispatcher in the fitted profile"), std::string::npos);
  const ResultTable t = plan_options_table(p);
  EXPECT_EQ(t.rows[0][t.column("a2a_terms")].text, "defaults");
  EXPECT_EQ(t.rows[0][t.column("runner_up")].text, "deepep-v2-gin");
}

}  // namespace
}  // namespace moetwin
