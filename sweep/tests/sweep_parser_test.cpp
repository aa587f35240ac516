// The sweep language: what a sweep file sets, and its error messages word for word (they are what a
// user reads).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/sweep/sweep_spec.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "tiny_sweep.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// An inline base (lines 1-15) and [grid] at line 16; cases append grid lines from line 17.
const std::string kBase = sweep_test::inline_base(4, 16);

std::string with_grid(const std::string& grid) {
  return kBase + grid;
}

std::string error_of(const std::string& text) {
  return test_support::error_of([&] { parse_sweep(text, "s.toml", catalog()); });
}

TEST(SweepParser, InlineBaseAndAbsentAxesTakeTheBaseValues) {
  const SweepSpec s = parse_sweep(with_grid("nodes = [1, 2, 4]\n"), "dir/s.toml", catalog());
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.base_path, "");
  EXPECT_EQ(s.base.model.layers, 4);
  EXPECT_EQ(s.base.parallel.dp, 8);  // derived by the scenario parser: 8 GPUs / (tp 1 * pp 1)
  EXPECT_EQ(s.grid_line, 16);
  ASSERT_EQ(s.models.size(), 1u);
  EXPECT_EQ(s.models[0].layers, 4);  // the base's override stays while the model axis is absent
  EXPECT_EQ(s.nodes, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(s.point_count(), 3u);
  EXPECT_EQ(s.axis_sizes(), (std::vector<std::size_t>{1, 1, 3, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(s.dispatchers.at(0).name, "nccl-alltoall");
  EXPECT_EQ(s.content_hash.size(), 16u);
}

TEST(SweepParser, EveryAxis) {
  const SweepSpec s = parse_sweep(with_grid(R"(model = ["qwen3-30b-a3b", "qwen3-235b-a22b"]
instance = ["p5.48xlarge", "p6-b300.48xlarge"]
nodes = [1, 2]
layouts = [{ tp = 2, pp = 2, vpp = 2, ep = 4, etp = 1, cp = 1 }, { tp = 1, pp = 1 }]
micro_batch = [1, 2, 4]
global_batch = [16, 32]
recompute = ["none", "full"]
overlap_moe_a2a = [false, true]
routing = [{ kind = "balanced" }, { kind = "zipf", zipf_exponent = 1.2, seed = 9 }]
dispatcher = ["nccl-alltoall", "deepep-uccl", "deepep-nvshmem"]
[grid.overlap_on]
vpp = 2
recompute = "none"
)"),
                                  "s.toml", catalog());
  EXPECT_EQ(s.point_count(), 2u * 2 * 2 * 2 * 3 * 2 * 2 * 2 * 2 * 3);
  EXPECT_EQ(s.models[1].name, "qwen3-235b-a22b");
  EXPECT_EQ(s.models[1].layers, 94);  // catalog value: base overrides do not carry over to axis models
  EXPECT_EQ(s.instance_gpus[1].name, s.instances[1].gpu);
  EXPECT_EQ(s.layouts[0].vpp, 2);
  EXPECT_EQ(s.layouts[0].line, 20);
  EXPECT_EQ(s.layouts[1].ep, 1);
  EXPECT_EQ(s.recomputes,
            (std::vector<int>{static_cast<int>(Recompute::none), static_cast<int>(Recompute::full)}));
  EXPECT_EQ(s.overlaps, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.routings[0].seed, 1u);  // the base's seed (default 1)
  EXPECT_EQ(s.routings[1].kind, RoutingKind::zipf);
  EXPECT_DOUBLE_EQ(s.routings[1].zipf_exponent, 1.2);
  EXPECT_EQ(s.routings[1].seed, 9u);
  EXPECT_EQ(*s.overlap_on.vpp, 2);
  EXPECT_EQ(*s.overlap_on.recompute, Recompute::none);
}

TEST(SweepParser, BaseFileRelativeToTheSweepFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "moetwin-sweep-parser-test";
  fs::create_directories(dir / "sub");
  const std::string base_text = kBase.substr(0, kBase.find("[grid]"));
  std::ofstream(dir / "sub" / "base.toml") << base_text;
  const std::string sweep_path = (dir / "s.toml").string();
  const std::string text = "base = \"sub/base.toml\"\n[grid]\nmicro_batch = [1, 2]\n";
  std::ofstream(sweep_path) << text;
  const SweepSpec s = load_sweep_file(sweep_path, catalog());
  EXPECT_EQ(s.base_path, (dir / "sub" / "base.toml").string());
  EXPECT_EQ(s.base.name, "s");  // the base file's own name key
  EXPECT_EQ(s.name, "s");       // the sweep file's stem
  EXPECT_EQ(s.point_count(), 2u);
  // The hash covers both files: the sweep text followed by the base text.
  EXPECT_EQ(s.content_hash, hex64(fnv1a64(text + base_text)));
  fs::remove_all(dir);
}

TEST(SweepParser, HashIsFnv1a64) {
  // Published FNV-1a 64 test vectors (Fowler/Noll/Vo reference: "" and "a").
  EXPECT_EQ(hex64(fnv1a64("")), "cbf29ce484222325");
  EXPECT_EQ(hex64(fnv1a64("a")), "af63dc4c8601ec8c");
}

TEST(SweepParserErrors, GridAxes) {
  EXPECT_EQ(error_of(with_grid("node = [1]\n")),
            "s.toml:17: grid.node: an array: a known axis (model, instance, nodes, layouts, micro_batch, "
            "global_batch, recompute, overlap_moe_a2a, routing, dispatcher, overlap_on)");
  EXPECT_EQ(error_of(with_grid("nodes = []\n")), "s.toml:17: grid.nodes: []: a non-empty array of integers");
  EXPECT_EQ(error_of(with_grid("nodes = 4\n")), "s.toml:17: grid.nodes: 4: a non-empty array of integers");
  EXPECT_EQ(error_of(with_grid("nodes = [1,\n  \"2\"]\n")),
            "s.toml:18: grid.nodes[1]: \"2\": an integer in [1, 100000]");
  EXPECT_EQ(error_of(with_grid("micro_batch = [1, 2, 1]\n")),
            "s.toml:17: grid.micro_batch[2]: 1: a value not already listed (same as grid.micro_batch[0])");
  EXPECT_EQ(error_of(with_grid("dispatcher = [\"nccl\"]\n")),
            "s.toml:17: grid.dispatcher[0]: \"nccl\": one of deepep-ibgda, deepep-nvshmem, deepep-uccl, "
            "deepep-v2-gin, "
            "hybridep, nccl-alltoall");
  EXPECT_EQ(error_of(with_grid("overlap_moe_a2a = [\"on\"]\n")),
            "s.toml:17: grid.overlap_moe_a2a[0]: \"on\": true or false");
  EXPECT_EQ(error_of(with_grid("recompute = [\"some\"]\n")),
            "s.toml:17: grid.recompute[0]: \"some\": one of none, selective, full");
}

TEST(SweepParserErrors, Layouts) {
  EXPECT_EQ(error_of(with_grid("layouts = [{ tp = 1, pp = 1, dp = 4 }]\n")),
            "s.toml:17: grid.layouts[0].dp: 4: no dp key (each point derives dp = gpus / (tp * pp * cp))");
  EXPECT_EQ(error_of(with_grid("layouts = [{ tp = 1 }]\n")),
            "s.toml:17: grid.layouts[0].pp: missing: a value (required key)");
  EXPECT_EQ(error_of(with_grid("layouts = [{ tp = 1, pp = 0 }]\n")),
            "s.toml:17: grid.layouts[0].pp: 0: an integer in [1, 1048576]");
  EXPECT_EQ(error_of(with_grid("layouts = [8]\n")), "s.toml:17: grid.layouts[0]: 8: an inline table");
  EXPECT_EQ(error_of(with_grid("layouts = [{ tp = 1, pp = 1 }, { pp = 1, tp = 1 }]\n")),
            "s.toml:17: grid.layouts[1]: a table: a value not already listed (same as grid.layouts[0])");
}

TEST(SweepParserErrors, RoutingAndOverlap) {
  EXPECT_EQ(
      error_of(with_grid("routing = [{ kind = \"zipf\" }]\n")),
      "s.toml:17: grid.routing[0].zipf_exponent: missing: a number in (0, 5] (required for kind = \"zipf\")");
  EXPECT_EQ(error_of(with_grid("routing = [{ kind = \"zipf\", zipf_exponent = 6 }]\n")),
            "s.toml:17: grid.routing[0].zipf_exponent: 6: a number in (0, 5]");
  EXPECT_EQ(error_of(with_grid("routing = [{ kind = \"balanced\", zipf_exponent = 1 }]\n")),
            "s.toml:17: grid.routing[0].zipf_exponent: 1: only with kind = \"zipf\"");
  EXPECT_EQ(error_of(with_grid("[grid.overlap_on]\nvpp = 0\n")),
            "s.toml:18: grid.overlap_on.vpp: 0: an integer in [1, 1048576]");
}

TEST(SweepParserErrors, Base) {
  EXPECT_EQ(error_of("base = \"b.toml\"\n[model]\nname = \"kimi-k2\"\n"),
            "s.toml:2: model: a table: no inline scenario table together with base = \"b.toml\" (the base is "
            "either a file or inline tables)");
  EXPECT_EQ(error_of("[grid]\nnodes = [1]\n"),
            "s.toml: base: missing: a base scenario: base = \"scenario.toml\" or inline [model], [cluster], "
            "[parallelism] and [training] tables");
  EXPECT_EQ(
      error_of("base = \"nope.toml\"\n"),
      "s.toml:1: base: \"nope.toml\": an existing scenario file, relative to the sweep file (looked for "
      "nope.toml)");
  EXPECT_EQ(error_of("bsae = 1\n"), "s.toml:1: bsae: 1: no such key (did you mean `base`?)");
}

TEST(SweepParserErrors, InlineBaseErrorsNameTheSweepFileLine) {
  // The grid lines are blanked before the scenario parser reads the base, so its lines stay the sweep's.
  std::string text = with_grid("nodes = [1, 2]\n");
  text.replace(text.find("tp = 1"), 6, "tp = 0");
  EXPECT_EQ(error_of(text), "s.toml:9: parallelism.tp: 0: an integer in [1, 1048576]");
  // A [grid] table between scenario tables is blanked alone (the [training] after it still counts).
  const std::string split = R"([model]
name = "qwen3-30b-a3b"
[cluster]
instance = "p5.48xlarge"
nodes = 1
[grid]
nodes = [
  1,
  2,
]
[parallelism]
tp = 1
pp = 1
ep = 8
[training]
micro_batch = 1
global_batch = 16
seq_length = 1024
bogus = 1
)";
  EXPECT_EQ(error_of(split),
            "s.toml:19: training.bogus: 1: no such key (unknown key; see the documentation of this file)");
}

}  // namespace
}  // namespace moetwin
