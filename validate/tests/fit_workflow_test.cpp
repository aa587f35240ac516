// The fit workflow against a closed-form stand-in for the replay: the parameters it fits and in which
// stages, the provenance and residuals it writes into the profile, cross-validation, and what it reports.
#include "moetwin/validate/fit_workflow.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin {
namespace {

// Four rows of two campaigns (qwen3-235b on 4 and 8 B300 nodes, NCCL and DeepEP-UCCL).
std::vector<LiveRun> sample_runs() {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return read_live_runs(std::string(MOETWIN_SOURCE_DIR) + "/validate/tests/data/two-campaigns.csv", catalog)
      .runs;
}

// The stand-in: every row's measured time at layer_host_s = 4 ms, e^(100 / s x (layer_host_s - 4 ms)) of it
// elsewhere; compute half of each iteration (so the second stage adds compute_time_scale).
constexpr double kTrueLayerHost = 4e-3;
RowPredictor closed_form(const std::vector<LiveRun>& runs, int* calls = nullptr) {
  return [&runs, calls](const std::vector<std::size_t>& which, const FittedProfile& p) {
    if (calls != nullptr) ++*calls;
    std::vector<RowPrediction> out;
    for (std::size_t i : which) {
      RowPrediction r;
      r.ok = true;
      r.iteration_s = runs[i].iter_s * std::exp(100 * (p.sim.layer_host_s - kTrueLayerHost));
      r.detail.iteration_s = r.iteration_s;
      r.detail.compute.median_s = 0.5 * r.iteration_s;
      out.push_back(r);
    }
    return out;
  };
}

FitWorkflowOptions options_for_test() {
  FitWorkflowOptions o;
  o.fitted_at = "2026-12-02";
  o.fitted_on = "two-campaigns.csv without x";
  o.path = "out/fit.toml";
  return o;
}

// What an observer saw, in order.
struct Seen {
  std::vector<std::string> events;
  int replays = 0;
  FitObserver observer() {
    FitObserver o;
    o.message = [this](const std::string& line) { events.push_back("message: " + line); };
    o.stage_begin = [this](const std::string& label, std::size_t expected, const std::string& step) {
      events.push_back("begin: " + label + " " + std::to_string(expected) + " " + step);
    };
    o.step = [this](const std::string& step) { events.push_back("step: " + step); };
    o.replayed = [this] { ++replays; };
    o.stage_end = [this] { events.push_back("end"); };
    return o;
  }
  int count(const std::string& prefix) const {
    return static_cast<int>(std::count_if(events.begin(), events.end(),
                                          [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }));
  }
};

TEST(FitWorkflow, NamedParametersAndProvenance) {
  const std::vector<LiveRun> runs = sample_runs();
  FitWorkflowOptions o = options_for_test();
  o.parameters = {"layer_host_s"};
  Seen seen;
  const FitWorkflowResult r = fit_profile(runs, FittedProfile{}, o, closed_form(runs), seen.observer());
  const FittedProfile& p = r.profile;
  EXPECT_TRUE(p.fitted);
  EXPECT_EQ(p.fitted_keys, std::vector<std::string>{"layer_host_s"});
  EXPECT_NEAR(p.sim.layer_host_s, kTrueLayerHost, 2e-4);
  EXPECT_EQ(p.fitted_at, "2026-12-02");
  EXPECT_EQ(p.fitted_on, "two-campaigns.csv without x");
  EXPECT_EQ(p.path, "out/fit.toml");
  EXPECT_EQ(p.git_revision, std::string(kGitRevision));
  EXPECT_EQ(p.fit_objective, "huber 0.1");
  EXPECT_EQ(p.cv_scheme, "none");
  EXPECT_EQ(p.cross_validated.rows, 0);
  EXPECT_EQ(p.in_sample.rows, 4);
  EXPECT_LT(p.in_sample.p90_abs, 0.01);
  EXPECT_EQ(p.in_sample_margin.pairs, 2);  // one pair of dispatchers in each campaign's cell
  EXPECT_EQ(p.coverage.dispatchers, (std::vector<std::string>{"deepep-uccl", "nccl-alltoall"}));
  EXPECT_TRUE(r.out_of_sample.empty());
  EXPECT_EQ(r.objective.rfind("mean Huber (knee 0.1) log ratio ", 0), 0u) << r.objective;
  EXPECT_NE(r.objective.find(" replays of the row set)"), std::string::npos);
  // One stage: "fitting 1 parameters on 4 rows", the bar's size estimate (2 replays per model, 5 models).
  EXPECT_EQ(seen.events.front(), "message: fitting 1 parameters on 4 rows");
  EXPECT_EQ(seen.events[1], "begin: validate --fit 10 round 1/4");
  EXPECT_EQ(seen.count("begin: "), 1);
  EXPECT_EQ(seen.events.back(), "end");
  EXPECT_GT(seen.replays, 0);
}

TEST(FitWorkflow, SquaredObjective) {
  const std::vector<LiveRun> runs = sample_runs();
  FitWorkflowOptions o = options_for_test();
  o.parameters = {"layer_host_s"};
  o.huber = 0;
  const FitWorkflowResult r = fit_profile(runs, FittedProfile{}, o, closed_form(runs));
  EXPECT_EQ(r.profile.fit_objective, "squared log ratio");
  EXPECT_EQ(r.objective.rfind("mean squared log ratio ", 0), 0u) << r.objective;
}

TEST(FitWorkflow, DefaultSetInTwoStages) {
  const std::vector<LiveRun> runs = sample_runs();
  Seen seen;
  const FitWorkflowResult r =
      fit_profile(runs, FittedProfile{}, options_for_test(), closed_form(runs), seen.observer());
  // First stage without time shares; at the fit compute is half of every row: compute_time_scale joins.
  const std::vector<std::string>& keys = r.profile.fitted_keys;
  EXPECT_EQ(keys.front(), "compute_time_scale");
  EXPECT_NE(std::find(keys.begin(), keys.end(), "launch_s"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "deepep-uccl.a2a_time_scale"), keys.end());
  EXPECT_EQ(seen.count("begin: validate --fit"), 2);
  EXPECT_EQ(seen.count("message: time shares at the fit: compute 50.0%, exposed TP/PP/DP collectives 0.0%"),
            1);
  EXPECT_NEAR(r.profile.sim.layer_host_s, kTrueLayerHost, 2e-4);
}

TEST(FitWorkflow, CrossValidationLeavesOneCampaignOut) {
  const std::vector<LiveRun> runs = sample_runs();
  FitWorkflowOptions o = options_for_test();
  o.parameters = {"layer_host_s"};
  o.cv = "leave-one-campaign-out";
  Seen seen;
  const FitWorkflowResult r = fit_profile(runs, FittedProfile{}, o, closed_form(runs), seen.observer());
  ASSERT_EQ(r.out_of_sample.size(), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_NEAR(r.out_of_sample[i] / runs[i].iter_s, 1, 0.02);
  EXPECT_EQ(r.profile.cv_scheme, "leave-one-campaign-out");
  EXPECT_EQ(r.profile.cross_validated.rows, 4);
  EXPECT_EQ(r.profile.cross_validated_margin.pairs, 2);
  EXPECT_FALSE(r.profile.novelty_bands.empty());
  EXPECT_EQ(seen.count("message: cross-validating: leave one campaign out"), 1);
  EXPECT_EQ(seen.count("begin: validate --cv 2 fold 1/2"), 1);  // one replay per fold, two campaigns
}

TEST(FitWorkflow, UnknownParameterIsAnInputError) {
  const std::vector<LiveRun> runs = sample_runs();
  FitWorkflowOptions o = options_for_test();
  o.parameters = {"launch_s", "lunch_s"};
  int calls = 0;
  try {
    fit_profile(runs, FittedProfile{}, o, closed_form(runs, &calls));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--params: lunch_s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("<dispatcher>.a2a_time_scale"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 0);  // refused before any replay
  EXPECT_NO_THROW(check_fit_parameters({"launch_s", "deepep-uccl.a2a_latency_s"}));
}

TEST(FitWorkflow, RowErrorsSkipRowsWithoutAPrediction) {
  const std::vector<LiveRun> runs = sample_runs();
  std::vector<double> predicted;
  for (const LiveRun& r : runs) predicted.push_back(r.iter_s * 1.1);
  predicted[1] = 0;
  const RowErrors e = row_errors(runs, predicted);
  ASSERT_EQ(e.all.size(), 3u);
  EXPECT_NEAR(e.all[0], 0.1, 1e-12);
  EXPECT_EQ(e.by_campaign.size(), 2u);
  EXPECT_EQ(e.by_campaign.at(runs[0].campaign).size(), 1u);
  const ResidualSummary s = residual_summary(e.all);
  EXPECT_EQ(s.rows, 3);
  EXPECT_NEAR(s.median_abs, 0.1, 1e-12);
}

TEST(FitWorkflow, TodayIsADate) {
  const std::string d = today_utc();
  ASSERT_EQ(d.size(), 10u);
  EXPECT_EQ(d[4], '-');
  EXPECT_EQ(d[7], '-');
}

}  // namespace
}  // namespace moetwin
