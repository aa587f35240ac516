// plan --write-scenarios: a written option is the scenario the plan predicted (predict on it gives the
// plan's number exactly), every table is written out, and the file reads back through the strict parser.
#include "moetwin/planning/scenario_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/planning/plan.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "small_plan_request.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

using test_support::catalog;

using planning_test::small_request;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / ("scenario_file_test_" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(ScenarioFile, WrittenOptionsPredictThePlansNumberExactly) {
  PlanRequest r = small_request();
  r.choices.precision = Precision::fp8_hybrid;
  r.choices.routing = parse_routing_choice("zipf:1.2", "--routing");
  const FittedProfile profile = resolve_fitted_profile("none");
  const Plan plan = make_plan(catalog(), r, profile);
  ASSERT_GE(plan.options.size(), 2u);
  const fs::path dir = fresh_dir("predict");
  const std::vector<std::string> files =
      write_plan_scenarios(plan, catalog(), dir.string(), 2, "moetwin plan ...").written;
  ASSERT_EQ(files.size(), 2u);
  for (std::size_t i = 0; i < files.size(); ++i) {
    const PlanOption& o = plan.options[i];
    EXPECT_EQ(fs::path(files[i]).filename().string(), option_file_name(i + 1, o));
    const std::string text = read_text_file(files[i]);
    EXPECT_NE(text.find("# Written by `moetwin plan ...`"), std::string::npos) << text;
    for (const char* table :
         {"[model]", "[cluster]", "[parallelism]", "[training]", "[dispatcher]", "[stack]", "[routing]"})
      EXPECT_NE(text.find(table), std::string::npos) << table;
    EXPECT_NE(text.find("precision = \"fp8-hybrid\""), std::string::npos) << text;
    EXPECT_NE(text.find("zipf_exponent = 1.2"), std::string::npos) << text;
    const Scenario s = load_scenario_file(files[i], catalog());
    EXPECT_EQ(s.parallel.tp, o.candidate.parallel.tp);
    EXPECT_EQ(s.parallel.pp, o.candidate.parallel.pp);
    EXPECT_EQ(s.parallel.ep, o.candidate.parallel.ep);
    EXPECT_EQ(s.parallel.dp, o.candidate.parallel.dp);
    EXPECT_EQ(s.training.micro_batch, o.candidate.micro_batch);
    EXPECT_EQ(s.training.recompute, o.candidate.recompute);
    EXPECT_EQ(s.dispatcher.name, o.best().dispatcher);
    EXPECT_EQ(s.training.precision, Precision::fp8_hybrid);
    EXPECT_EQ(s.routing.kind, RoutingKind::zipf);
    // Exactly the plan's number: the same scenario, the same profile.
    EXPECT_EQ(predict(s, predict_options_for(s, profile)).iteration_s, o.best().iteration_s);
  }
}

// A Megatron layout string is written out and reads back as the same layout (scenario_file_text).
TEST(ScenarioFile, APipelineLayoutStringReadsBack) {
  // Megatron-Bridge's DeepSeek-V3 H100 string (PP8 VP4), on one p5en node.
  const std::string text =
      "name = \"t\"\n[model]\nname = \"deepseek-v3\"\n[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 1\n"
      "[parallelism]\ntp = 1\npp = 8\nvpp = 4\npipeline_layout = \"Et|(tt|)*30mL\"\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\n"
      "[dispatcher]\nname = \"nccl-alltoall\"\n";
  const Scenario s = parse_scenario(text, "in.toml", catalog());
  const std::string written = scenario_file_text(s, {"round trip"});
  EXPECT_NE(written.find("pipeline_layout = \"Et|(tt|)*30mL\""), std::string::npos) << written;
  const Scenario back = parse_scenario(written, "out.toml", catalog());
  EXPECT_EQ(back.parallel, s.parallel);
  EXPECT_EQ(predict(back).iteration_s, predict(s).iteration_s);
}

TEST(ScenarioFile, TopDefaultsToAllWhenFewerAndFolderRules) {
  const Plan plan = make_plan(catalog(), small_request(), resolve_fitted_profile("none"));
  const fs::path dir = fresh_dir("top");
  const std::vector<std::string> files =
      write_plan_scenarios(plan, catalog(), dir.string(), 1000, "x").written;
  EXPECT_EQ(files.size(), plan.options.size());
  // The folder's parent must exist; a file is not a folder; a folder that is not empty needs --force.
  EXPECT_THROW(check_scenario_dir((dir / "missing" / "deeper").string()), InputError);
  EXPECT_THROW(check_scenario_dir(files.front()), InputError);
  try {
    check_scenario_dir(dir.string());
    ADD_FAILURE() << "a folder that is not empty was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--write-scenarios: " + dir.string() +
                                         ": a new or empty folder (it holds " + std::to_string(files.size()) +
                                         " entries, the first 01-n1-"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_scenario_dir(dir.string(), true));
  // A rerun of the same command (the same plan) is no mix; another command's is.
  EXPECT_NO_THROW(check_scenario_dir(dir.string(), false, "x"));
  EXPECT_THROW(check_scenario_dir(dir.string(), false, "y"), InputError);
  EXPECT_THROW(write_plan_scenarios(plan, catalog(), dir.string(), 1, "z"), InputError);
}

// issue 52: --write-scenarios into a folder holding another plan mixed the two and overwrote silently.
// With --force the earlier plan's files are all replaced (listed), a file of the user's is left (listed),
// and the folder holds the new plan's files alone.
TEST(ScenarioFile, ForceReplacesAnEarlierPlanAndListsIt) {
  const Plan plan = make_plan(catalog(), small_request(), resolve_fitted_profile("none"));
  ASSERT_GE(plan.options.size(), 2u);
  const fs::path dir = fresh_dir("force");
  const std::vector<std::string> first =
      write_plan_scenarios(plan, catalog(), dir.string(), 1000, "a").written;
  write_file_atomically((dir / "notes.toml").string(), "# mine\n");
  const WrittenScenarios w = write_plan_scenarios(plan, catalog(), dir.string(), 1, "b", true);
  ASSERT_EQ(w.written.size(), 1u);
  std::vector<std::string> earlier;
  for (const std::string& f : first) earlier.push_back(fs::path(f).filename().string());
  std::sort(earlier.begin(), earlier.end());
  EXPECT_EQ(w.replaced, earlier);
  EXPECT_EQ(w.kept, std::vector<std::string>{"notes.toml"});
  std::vector<std::string> now;
  for (const auto& e : fs::directory_iterator(dir)) now.push_back(e.path().filename().string());
  std::sort(now.begin(), now.end());
  EXPECT_EQ(now, (std::vector<std::string>{fs::path(w.written[0]).filename().string(), "notes.toml"}));
  EXPECT_NE(read_text_file(w.written[0]).find("# Written by `b`"), std::string::npos);
}

TEST(ScenarioChoices, ParsesAndRefuses) {
  EXPECT_EQ(parse_precision_choice("fp8-hybrid", "--precision"), Precision::fp8_hybrid);
  EXPECT_EQ(parse_recompute_choice("selective", "--recompute"), Recompute::selective);
  const RoutingConfig z = parse_routing_choice("zipf:0.8", "--routing");
  EXPECT_EQ(z.kind, RoutingKind::zipf);
  EXPECT_DOUBLE_EQ(z.zipf_exponent, 0.8);
  EXPECT_EQ(routing_choice_text(z), "zipf:0.8");
  EXPECT_EQ(parse_routing_choice("balanced", "--routing").kind, RoutingKind::balanced);
  EXPECT_EQ(parse_routing_choice("group-limited", "--routing").kind, RoutingKind::group_limited);
  try {
    parse_precision_choice("fp4", "--precision");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "<input>: --precision: \"fp4\": one of bf16, fp8-hybrid, fp8-current, fp8-blockwise, mxfp8, "
              "nvfp4");
  }
  EXPECT_EQ(parse_precision_choice("nvfp4", "--precision"), Precision::nvfp4);
  for (const char* bad :
       {"zipf", "zipf:0", "zipf:6", "zipf:x", "balanced:1", "histogram:/no/such.csv", "uniform"})
    EXPECT_THROW(parse_routing_choice(bad, "--routing"), InputError) << bad;
  EXPECT_THROW(parse_recompute_choice("block", "--recompute"), InputError);
}

TEST(ScenarioChoices, PlanRefusesFp8OnAGpuWithoutIt) {
  PlanRequest r = small_request();
  r.instance = "p6-b300.48xlarge";
  r.choices.precision = Precision::mxfp8;
  EXPECT_NO_THROW(check_plan_request(catalog(), r));  // Blackwell runs MXFP8
  r.instance = "p5en.48xlarge";
  EXPECT_THROW(check_plan_request(catalog(), r), InputError);  // Hopper does not
}

TEST(ScenarioChoices, FixedRecomputeIsEveryOptions) {
  PlanRequest r = small_request();
  r.choices.recompute = Recompute::full;
  const Plan plan = make_plan(catalog(), r, resolve_fitted_profile("none"));
  ASSERT_FALSE(plan.options.empty());
  for (const PlanOption& o : plan.options) EXPECT_EQ(o.candidate.recompute, Recompute::full);
}

}  // namespace
}  // namespace moetwin
