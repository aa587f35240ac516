// The scenario language: shipped scenarios, defaults, derived values, overrides and routing options.
#include "moetwin/scenario/scenario_parser.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "moetwin/test_support/parallel_layout.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

using test_support::catalog;

std::string scenarios_dir() {
  return std::string(MOETWIN_SOURCE_DIR) + "/scenarios";
}

// A scenario of `model` on `nodes` nodes of `instance` (then `cluster_extra`, from line 7), the [parallelism]
// lines `parallelism`, and micro-batch 1 of 64 sequences of 4,096 tokens (then `training_extra`).
std::string scenario_text(const std::string& model, const std::string& instance, int nodes,
                          const std::string& cluster_extra, const std::string& parallelism,
                          const std::string& training_extra = "") {
  return "\n[model]\nname = \"" + model + "\"\n[cluster]\ninstance = \"" + instance +
         "\"\nnodes = " + std::to_string(nodes) + "\n" + cluster_extra + "[parallelism]\n" + parallelism +
         "[training]\nmicro_batch = 1\nglobal_batch = 64\nseq_length = 4096\n" + training_extra;
}

// A minimal valid scenario (Qwen3-30B-A3B, 2 p5en nodes, tp 2 ep 8); tests append or replace tables.
const std::string kMinimal =
    scenario_text("qwen3-30b-a3b", "p5en.48xlarge", 2, "", "tp = 2\npp = 1\nep = 8\n");

TEST(ScenarioParser, DefaultScenario) {
  const Scenario s = load_scenario_file(scenarios_dir() + "/default.toml", catalog());
  EXPECT_EQ(s.name, "dsv3-b300-32n");
  EXPECT_EQ(s.source, scenarios_dir() + "/default.toml");
  EXPECT_EQ(s.model.name, "deepseek-v3");
  EXPECT_EQ(s.model.layers, 61);
  EXPECT_EQ(s.instance.name, "p6-b300.48xlarge");
  EXPECT_EQ(s.gpu.name, s.instance.gpu);
  EXPECT_EQ(s.nodes, 32);
  EXPECT_EQ(s.gpus(), 256);
  EXPECT_EQ(s.parallel, test_support::parallel_layout(8, 8, 32, 4));  // vpp, etp, cp 1
  EXPECT_EQ(s.parallel.edp(), 1);                                     // 8 * 1 * 4 / (32 * 1)
  EXPECT_EQ(s.training.micro_batch, 4);
  EXPECT_EQ(s.training.global_batch, 256);
  EXPECT_EQ(s.training.microbatches(s.parallel), 16);
  EXPECT_EQ(s.training.recompute, Recompute::full);
  EXPECT_FALSE(s.training.overlap_moe_a2a);
  EXPECT_EQ(s.dispatcher.name, "nccl-alltoall");
  EXPECT_EQ(s.routing.kind, RoutingKind::balanced);
  EXPECT_EQ(s.routing.seed, 1u);
  EXPECT_EQ(s.calibration_profile, "");
}

TEST(ScenarioParser, MinimalUsesDefaultsAndDerivesDp) {
  const Scenario s = parse_scenario(kMinimal, "/tmp/x/my-run.toml", catalog());
  EXPECT_EQ(s.name, "my-run");  // file stem
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.parallel.dp, 8);  // 16 GPUs / (tp 2 * cp 1 * pp 1)
  EXPECT_EQ(s.parallel.vpp, 1);
  EXPECT_EQ(s.parallel.etp, 1);
  EXPECT_EQ(s.parallel.cp, 1);
  EXPECT_EQ(s.parallel.edp(), 2);  // 2 * 8 / 8
  EXPECT_EQ(s.training.recompute, Recompute::none);
  EXPECT_TRUE(s.training.bf16);
  EXPECT_TRUE(s.training.distributed_optimizer);
  EXPECT_FALSE(s.training.overlap_moe_a2a);
  EXPECT_TRUE(s.training.overlap_grad_reduce);
  EXPECT_TRUE(s.training.overlap_param_gather);
  EXPECT_EQ(s.training.microbatches(s.parallel), 8);  // 64 / (1 * 8)
  EXPECT_EQ(s.dispatcher.name, "nccl-alltoall");
  EXPECT_EQ(s.routing.kind, RoutingKind::balanced);
  EXPECT_EQ(s.routing.seed, 1u);
}

TEST(ScenarioParser, NonAsciiInStringsAndComments) {
  // U+2014 and U+4E2D in a string, anything in a comment (see the U+00F6 error case for what is refused).
  const std::string text = "description = \"a \u2014 \u4e2d\"  # \u00b5s \u03d2\n" + kMinimal;
  const Scenario s = parse_scenario(text, "u.toml", catalog());
  EXPECT_EQ(s.description, "a \u2014 \u4e2d");
}

TEST(ScenarioParser, ModelOverrides) {
  const std::string text = kMinimal + R"(
[routing]
kind = "zipf"
zipf_exponent = 1.2
seed = 42
)";
  std::string with_overrides = text;
  with_overrides.replace(with_overrides.find("name = \"qwen3-30b-a3b\""), 22,
                         "name = \"qwen3-30b-a3b\"\nlayers = 24\nexperts = 64\ntop_k = 4\nvocab = 1000");
  const Scenario s = parse_scenario(with_overrides, "o.toml", catalog());
  EXPECT_EQ(s.model.layers, 24);
  EXPECT_EQ(s.model.experts, 64);
  EXPECT_EQ(s.model.top_k, 4);
  EXPECT_EQ(s.model.vocab, 1000);
  EXPECT_EQ(s.model.hidden, catalog().model("qwen3-30b-a3b").hidden);  // untouched fields kept
  EXPECT_EQ(s.routing.kind, RoutingKind::zipf);
  EXPECT_DOUBLE_EQ(s.routing.zipf_exponent, 1.2);
  EXPECT_EQ(s.routing.seed, 42u);
}

TEST(ScenarioParser, HistogramResolvedRelativeToTheScenarioFile) {
  const std::string dir = scenarios_dir() + "/tests/data";
  const std::string text = kMinimal + "[routing]\nkind = \"histogram\"\nhistogram = \"loads.csv\"\n";
  const Scenario s = parse_scenario(text, dir + "/h.toml", catalog());
  EXPECT_EQ(s.routing.kind, RoutingKind::histogram);
  EXPECT_EQ(s.routing.histogram_path, dir + "/loads.csv");
}

TEST(ScenarioParser, GroupLimitedRoutingOnDeepSeek) {
  Scenario s = load_scenario_file(scenarios_dir() + "/default.toml", catalog());
  std::string text = read_text_file(scenarios_dir() + "/default.toml");
  text.replace(text.find("kind = \"balanced\""), 17, "kind = \"group-limited\"");
  s = parse_scenario(text, "g.toml", catalog());
  EXPECT_EQ(s.routing.kind, RoutingKind::group_limited);
  EXPECT_EQ(s.name, "dsv3-b300-32n");
}

TEST(ScenarioParser, EveryShippedScenarioLoads) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(scenarios_dir())) {
    const std::string p = entry.path().string();
    // Sweep files (scenarios/sweeps/) hold a grid around a base scenario, not a scenario; sweep/ tests them.
    if (entry.path().extension() != ".toml" || p.find("/tests/") != std::string::npos ||
        p.find("/sweeps/") != std::string::npos)
      continue;
    SCOPED_TRACE(p);
    EXPECT_NO_THROW(load_scenario_file(p, catalog()));
    ++count;
  }
  // default, 10 live-run layouts (8 B300, 1 p5en, 1 p5), 6 examples (Kimi-K2 p5, Qwen3-30B H200, and
  // DeepSeek-V3 and Kimi-K2 each on the u-p6e-gb200x72 UltraServer and on 18 p6-b300)
  EXPECT_EQ(count, 17);
}

TEST(ScenarioParser, KimiK2OnP5Parses) {
  const Scenario s = load_scenario_file(scenarios_dir() + "/examples/kimi-k2-p5-32n.toml", catalog());
  EXPECT_EQ(s.model.name, "kimi-k2");
  EXPECT_EQ(s.instance.name, "p5.48xlarge");
  EXPECT_EQ(s.gpus(), 256);
  EXPECT_EQ(s.parallel.dp, 4);
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.recompute, Recompute::full);
}

// Each shipped live scenario is exactly one cell of the live-run table (same layout and settings).
TEST(ScenarioParser, LiveScenariosAreLiveRunCells) {
  const LiveRunTable table =
      read_live_runs(std::vector<std::string>{scenarios_dir() + "/tests/data/live-runs.csv",
                                              scenarios_dir() + "/../validate/data/live-runs-p5en.csv",
                                              scenarios_dir() + "/../validate/data/live-runs-p5-h100.csv"},
                     catalog());
  int matched = 0;
  for (const auto& entry : fs::directory_iterator(scenarios_dir() + "/live")) {
    const Scenario s = load_scenario_file(entry.path().string(), catalog());
    SCOPED_TRACE(entry.path().string());
    int hits = 0;
    for (const LiveRun& run : table.runs) {
      const Scenario& r = run.scenario;
      if (s.name.rfind(run.campaign, 0) == 0 && r.model.name == s.model.name &&
          r.model.layers == s.model.layers && r.nodes == s.nodes && r.instance.name == s.instance.name &&
          r.parallel.tp == s.parallel.tp && r.parallel.pp == s.parallel.pp &&
          r.parallel.vpp == s.parallel.vpp && r.parallel.ep == s.parallel.ep &&
          r.parallel.dp == s.parallel.dp && r.training.micro_batch == s.training.micro_batch &&
          r.training.global_batch == s.training.global_batch &&
          r.training.recompute == s.training.recompute &&
          r.training.overlap_moe_a2a == s.training.overlap_moe_a2a &&
          r.dispatcher.name == s.dispatcher.name && r.training.precision == s.training.precision &&
          r.stack.spec.name == s.stack.spec.name &&
          r.stack.nccl.max_nchannels == s.stack.nccl.max_nchannels) {
        ++hits;
      }
    }
    EXPECT_EQ(hits, 1);
    ++matched;
  }
  EXPECT_EQ(matched, 10);
}

TEST(ScenarioParser, Qwen3OverlapCellBuildsNinetySixLayers) {
  const Scenario s =
      load_scenario_file(scenarios_dir() + "/live/qwen3-235b-b300-8n-20260621.toml", catalog());
  EXPECT_EQ(s.model.layers, 96);
  const PipelineLayout l = make_pipeline_layout(s.model, s.parallel, {s.source, 0});
  EXPECT_EQ(l.rule, "even");
  EXPECT_EQ(l.decoder_layers_on_stage(0), 24);
}

TEST(ValidateScenario, ProgrammaticScenarioHeldToTheSameRules) {
  Scenario s = load_scenario_file(scenarios_dir() + "/default.toml", catalog());
  EXPECT_NO_THROW(validate_scenario(s, {"sweep", 3}));
  s.parallel.ep = 64;  // 8 * 1 * 4 = 32 ranks per stage cannot hold 64 expert ranks
  try {
    validate_scenario(s, {"sweep", 3});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "sweep:3: parallelism.ep: 64: ep * etp = 64 * 1 dividing tp * cp * dp = 8 * 1 * 4 = 32 "
                 "(Megatron-Core carves ep * etp * edp = tp * cp * dp from the ranks of a pipeline stage)");
  }
  s.parallel.ep = 0;
  EXPECT_THROW(validate_scenario(s, {"sweep", 3}), InputError);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// [cluster] nvlink_domain_gpus: the GPUs of one NVLink domain the job sees, a multiple of the node up to the
// instance's domain (an NVL72 tray: 4 .. 72); the catalog's domain without it.
// [training] overlap_p2p_comm: "auto" (or absent) defers to the stack, whose catalog entries all say false
// (catalog/data/stacks.toml); true/false override it; with vpp == 1 it never applies (Megatron turns it off).
TEST(ScenarioParser, OverlapP2pCommAutoTakesTheStack) {
  auto load = [&](const std::string& vpp, const std::string& key) {
    return parse_scenario(
        scenario_text("qwen3-30b-a3b", "p5en.48xlarge", 2, "", "tp = 1\npp = 2\n" + vpp, key), "o.toml",
        catalog());
  };
  const Scenario absent = load("vpp = 2\n", "");
  EXPECT_FALSE(absent.training.overlap_p2p_comm.has_value());
  EXPECT_FALSE(absent.stack.spec.overlap_p2p_comm);
  EXPECT_FALSE(overlap_p2p_comm(absent));
  const Scenario autod = load("vpp = 2\n", "overlap_p2p_comm = \"auto\"\n");
  EXPECT_FALSE(autod.training.overlap_p2p_comm.has_value());
  Scenario stack_on = autod;
  stack_on.stack.spec.overlap_p2p_comm = true;
  EXPECT_TRUE(overlap_p2p_comm(stack_on));
  const Scenario on = load("vpp = 2\n", "overlap_p2p_comm = true\n");
  EXPECT_EQ(on.training.overlap_p2p_comm, std::optional<bool>(true));
  EXPECT_TRUE(overlap_p2p_comm(on));
  Scenario off = load("vpp = 2\n", "overlap_p2p_comm = false\n");
  off.stack.spec.overlap_p2p_comm = true;  // an explicit false wins over the stack
  EXPECT_FALSE(overlap_p2p_comm(off));
  EXPECT_FALSE(overlap_p2p_comm(load("", "overlap_p2p_comm = true\n")));  // vpp 1: ignored
  for (const auto& [name, stack] : catalog().stacks()) EXPECT_FALSE(stack.overlap_p2p_comm) << name;
}

TEST(ScenarioParser, NvlinkDomainOverride) {
  // deepseek-v3 on 16 GB200 trays, [cluster] lines `extra` from line 7.
  auto gb200 = [](const std::string& extra) {
    return scenario_text("deepseek-v3", "p6e-gb200.36xlarge", 16, extra, "tp = 1\npp = 1\nep = 64\n");
  };
  EXPECT_EQ(parse_scenario(gb200(""), "d.toml", catalog()).instance.nvlink_domain_gpus, 72);
  EXPECT_EQ(
      parse_scenario(gb200("nvlink_domain_gpus = 36\n"), "d.toml", catalog()).instance.nvlink_domain_gpus,
      36);
  for (const char* bad :
       {"nvlink_domain_gpus = 6\n", "nvlink_domain_gpus = 76\n", "nvlink_domain_gpus = 2\n"}) {
    const std::string e = test_support::error_of([&] { parse_scenario(gb200(bad), "d.toml", catalog()); });
    EXPECT_NE(e.find("d.toml:7: cluster.nvlink_domain_gpus"), std::string::npos) << bad << ": " << e;
  }
  // An 8-GPU instance's domain is its node: nothing to cut.
  EXPECT_NE(test_support::error_of([] {
              parse_scenario(scenario_text("qwen3-30b-a3b", "p5en.48xlarge", 2, "nvlink_domain_gpus = 16\n",
                                           "tp = 2\nep = 8\n"),
                             "p.toml", catalog());
            }).find("p.toml:7: cluster.nvlink_domain_gpus"),
            std::string::npos);
}

}  // namespace
}  // namespace moetwin
