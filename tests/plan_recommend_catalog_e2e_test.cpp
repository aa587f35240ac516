// End-to-end: `predict` warns when a layout does not fit in HBM and `--require-fit`
// refuses it; `recommend` picks a valid pp per node count (`--pp auto`, the default), gives its reasons in
// full and exits 2 when no point has a valid dispatcher; `plan` refuses out-of-range input and searches the
// node counts asked for; `catalog` lists what exists in text, JSON and CSV, and the layer ops with their
// launches, formulas and sources.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;
const std::string kBinary = e2e::kMoetwin;

struct CliRun {
  int status = -1;
  std::string out, err;
};

// `moetwin --catalog <shipped> ARGS` with the unfitted profile where the command takes one (the figures
// checked here do not depend on the fit).
CliRun moetwin(const std::string& args) {
  const e2e::CliRun r = e2e::run_moetwin(args, e2e::fresh_test_dir("plan_recommend_catalog_e2e"));
  return {r.code, r.out, r.err};
}

const std::string kKimi = kSource + "/scenarios/examples/kimi-k2-p5-32n.toml";
const std::string kFitWarning =
    "does not fit in HBM: 79.9 GiB needed per GPU on stage 1 (the most loaded), 74.5 GiB available "
    "(H100-SXM)";

TEST(PredictHbm, WarnsInTextAndJsonAndRefusesWithRequireFit) {
  const CliRun text = moetwin("predict " + kKimi + " --profile none");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("warning: " + kFitWarning), std::string::npos) << text.out;
  const CliRun json = moetwin("predict " + kKimi + " --profile none --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_TRUE(j.contains("warnings"));
  EXPECT_EQ(j["warnings"][0].get<std::string>().rfind(kFitWarning, 0), 0u) << j["warnings"];
  const CliRun refused = moetwin("predict " + kKimi + " --profile none --require-fit");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find(kFitWarning), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("(--require-fit)"), std::string::npos) << refused.err;
  // A layout that fits says nothing about HBM.
  const CliRun fits =
      moetwin("predict " + kSource + "/scenarios/examples/qwen3-30b-p5en-2n.toml --profile none");
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_EQ(fits.out.find("does not fit in HBM"), std::string::npos);
}

const std::string kDefault = kSource + "/scenarios/default.toml";

TEST(RecommendPp, NoValidPointExitsTwoWithEveryReason) {
  // 12 nodes (96 GPUs) of tp8 ep32: no power-of-two pp leaves tp x dp a multiple of 32.
  const CliRun r = moetwin("recommend " + kDefault + " --nodes 12 --mb 4 --profile none");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no dispatcher is valid at any point"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pp 4: invalid: " + kDefault +
                       ": parallelism.ep: 32: ep * etp = 32 * 1 dividing tp * cp "
                       "* dp = 8 * 1 * 3 = 24"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(pp 3 would: pass --pp)"), std::string::npos) << r.err;
  // The table's reasons are footnotes, in full.
  EXPECT_NE(r.out.find("invalid [1]"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("  [1] invalid: " + kDefault + ": nodes: 12: 96 GPUs divisible by tp x cp x pp = 8 x 1 x 8"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("..."), std::string::npos);
}

TEST(RecommendPp, AutoPicksAValidPpAndSaysWhich) {
  // 16 nodes: the scenario's pp 8 leaves tp x dp = 16 < ep 32; pp 4 is the nearest valid size (the CSV's
  // layout columns: nodes, tp, pp, vpp, ep, dp, mb).
  const CliRun r = moetwin("recommend " + kDefault + " --nodes 16 --mb 4 --profile none --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("16 nodes: pp 4 (the scenario's pp 8 does not do: invalid: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nodes 16 (pp 4), mb 4: "), std::string::npos) << r.out;
  const CliRun csv = moetwin("recommend " + kDefault + " --nodes 16 --mb 4 --profile none --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n"
                         "deepseek-v3,p6-b300.48xlarge,16,8,4,1,32,4,4,deepep-uccl,ok,"),
            std::string::npos)
      << csv.out;
  // An explicit pp is kept, and a bad one named.
  EXPECT_EQ(moetwin("recommend " + kDefault + " --nodes 16 --mb 4 --pp x --profile none").status, 2);
}

TEST(PlanInput, RangesAndNodeCountsAsAsked) {
  const std::string base = "plan --model qwen3-30b-a3b --instance p5en.48xlarge --gbs 16 --profile none ";
  const CliRun zero = moetwin(base + "--tokens 1e9 --deadline 0");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("--deadline: 0: days > 0 (leave --deadline out for no deadline)"),
            std::string::npos)
      << zero.err;
  const CliRun huge = moetwin(base + "--tokens 1e30");
  EXPECT_EQ(huge.status, 2);
  EXPECT_NE(huge.err.find("--tokens: 1e+30: a number of tokens in [1e6, 1e15]"), std::string::npos)
      << huge.err;
  // --max-nodes 3 searches 1, 2 and 3 (3 x 8 = 24 GPUs).
  const CliRun r = moetwin(base + "--tokens 1e9 --max-nodes 3 --screen 1 --max-layouts 1 --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("node counts searched (1..3):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n    3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("objective: no deadline given: the fastest and the cheapest option"),
            std::string::npos);
  EXPECT_NE(r.out.find("\nfastest: rank 1: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncheapest: rank "), std::string::npos) << r.out;
}

TEST(Catalog, ListsEveryKindWithSourcesInEachFormat) {
  const CliRun text = moetwin("catalog");
  ASSERT_EQ(text.status, 0) << text.err;
  for (const char* heading :
       {"models (", "instances (", "gpus (", "dispatchers (", "stacks (", "ops (", "op_symbols ("})
    EXPECT_NE(text.out.find(heading), std::string::npos) << heading;
  EXPECT_NE(text.out.find("deepep-uccl"), std::string::npos);
  const CliRun json = moetwin("catalog gpus --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  bool h100 = false;
  for (const auto& g : j["gpus"]) {
    if (g["gpu"] == "H100-SXM") {
      h100 = true;
      EXPECT_NEAR(g["hbm_gib"].get<double>(), 74.5, 0.05);  // the figure predict's HBM warning uses
      EXPECT_FALSE(g["source"].get<std::string>().empty());
    }
  }
  EXPECT_TRUE(h100);
  const CliRun csv = moetwin("catalog models --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("model,layers,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\ndeepseek-v3,61,3,1,7168,"), std::string::npos) << csv.out;
  EXPECT_EQ(moetwin("catalog --format csv").status, 2);  // several tables: one CSV each
  EXPECT_EQ(moetwin("catalog widgets").status, 2);
}

TEST(Catalog, ListsTheLayerOpsWithFormulasAndSources) {
  const CliRun csv = moetwin("catalog ops --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(
      csv.out.rfind("op,phase,class,launches,gemm_calls_per_expert,flops,bytes,dtype_bytes,source\n", 0), 0u)
      << csv.out;
  EXPECT_NE(
      csv.out.find("\nattn.qkv_bwd,backward,gemm,6,0,4 T h (q + 2 kv) / t,4 (h (q + 2 kv) / t + T (h + (q + "
                   "2 kv) / t)),2,\"estimate: RoPE backward"),
      std::string::npos)
      << csv.out;
  const CliRun json = moetwin("catalog ops --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  bool experts = false;
  for (const auto& op : j["ops"]) {
    if (op["op"] == "moe.experts") {
      experts = true;
      EXPECT_EQ(op["launches"].get<int>(), 4);
      EXPECT_EQ(op["gemm_calls_per_expert"].get<int>(), 2);
      EXPECT_EQ(op["class"], "grouped_gemm");
    }
  }
  EXPECT_TRUE(experts);
  EXPECT_FALSE(j["op_symbols"].empty());  // the formulas' symbols come with the table
  const CliRun text = moetwin("catalog ops");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("op_symbols ("), std::string::npos) << text.out;
}

// issue 52, item 4, as a user meets it: compare refuses a verdict on the Kimi-K2 p5 example (107% of HBM)
// unless --ignore-memory and shows each side's memory; its CSV carries the context (profile) a report
// reads; --write-scenarios refuses a folder holding another plan unless --force, and lists what it
// replaced.
TEST(CompareMemory, RefusedUnlessIgnoredAndTheCsvCarriesItsContext) {
  const CliRun refused =
      moetwin("compare " + kKimi + " --precision bf16,fp8-hybrid --profile none --threads 2");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("bf16: does not fit in HBM: 79.9 GiB needed"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--ignore-memory compares it anyway"), std::string::npos) << refused.err;
  const CliRun ignored =
      moetwin("compare " + kKimi + " --precision bf16,fp8-hybrid --profile none --threads 2 --ignore-memory");
  ASSERT_EQ(ignored.status, 0) << ignored.err;
  EXPECT_NE(ignored.out.find("79.9 GiB 107%!!"), std::string::npos) << ignored.out;
  EXPECT_NE(ignored.out.find("memory: bf16 does NOT fit in HBM (--ignore-memory)"), std::string::npos)
      << ignored.out;
  const CliRun csv =
      moetwin("compare " + kSource +
              "/scenarios/examples/qwen3-30b-p5en-2n.toml --precision bf16,fp8-hybrid --profile "
              "none --threads 2 --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("# moetwin_version: ", 0), 0u) << csv.out.substr(0, 300);
  EXPECT_NE(csv.out.find("\n# command: compare\n# profile: unfitted defaults"), std::string::npos)
      << csv.out.substr(0, 300);
  EXPECT_NE(csv.out.find(",within_hbm_headroom,memory_warning,memory_note\n"), std::string::npos);
}

TEST(PlanWriteScenarios, AnotherPlansFolderNeedsForceWhichListsWhatItReplaced) {
  const fs::path dir = fs::path(testing::TempDir()) / ("write_scenarios." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string plan =
      "plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e9 --max-nodes 1 --screen 1 "
      "--max-layouts 2 --threads 2 --profile none --write-scenarios " +
      (dir / "s").string();
  ASSERT_EQ(moetwin(plan + " --gbs 16").status, 0);
  ASSERT_EQ(moetwin(plan + " --gbs 16").status, 0);  // the same plan again: no mix
  const CliRun other = moetwin(plan + " --gbs 32");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("a new or empty folder (it holds "), std::string::npos) << other.err;
  const CliRun forced = moetwin(plan + " --gbs 32 --force");
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(forced.err.find("plan: replaced "), std::string::npos) << forced.err;
  for (const auto& e : fs::directory_iterator(dir / "s"))
    EXPECT_NE(e2e::read_whole_file(e.path()).find("--gbs 32"), std::string::npos) << e.path();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace moetwin
