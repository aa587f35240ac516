// Megatron-Bridge's recipe settings joined to NVIDIA's dense rows (recipe_settings.hpp): the join and the
// mapping by hand, then the shipped files joined independently: no replayed row runs under a setting its
// recipe contradicts, and every row without a recipe says UNVERIFIED.
#include "moetwin/validate/recipe_settings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/validate/dense_runs.hpp"

namespace moetwin {
namespace {

const std::string kSource = MOETWIN_SOURCE_DIR;
const std::string kDense = kSource + "/validate/data/nvidia-dense-runs.csv";
const std::string kRecipes = kSource + "/validate/data/megatron-bridge-llama-recipes.csv";

using test_support::catalog;

std::string write_file(const std::string& name, const std::string& text) {
  const std::string dir = testing::TempDir() + "recipe_settings_test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* const kHeader =
    "release,bridge_ref,commit,model,gpu,precision,variant,num_gpus,tp,pp,cp,vp,mbs,gbs,megatron_fsdp,nccl_"
    "ub,"
    "cpu_offload_layers,cuda_graph_impl,cuda_graph_scope,recompute,tp_comm_overlap,pp_p2p,source\n";

DenseRecipeKey key_70b_h100() {
  DenseRecipeKey k;
  k.container = "26.04";
  k.model = "llama3-70b";
  k.instance = "dgx-h100";
  k.precision = "fp8-current";
  k.gpus = 64;
  k.tp = 4;
  k.pp = 8;
  k.vpp = 5;
  k.mb = 1;
  k.gbs = 256;
  return k;
}

TEST(RecipeSettings, JoinsOnReleaseModelGpuPrecisionAndLayout) {
  const std::string path = write_file(
      "join.csv",
      std::string(kHeader) +
          "26.04,v0.4.0,abc,llama3_70b,h100,fp8_cs,v2,64,4,8,1,5,1,256,False,False,,none(recipe "
          "default),,none,True,overlap_p2p_comm,src\n"
          // another layout of the same release: not this row's
          "26.04,v0.4.0,abc,llama3_70b,h100,fp8_cs,v1,64,2,8,1,5,1,256,False,False,,local,full_iteration,"
          "none,"
          "False,overlap_p2p_comm,src\n"
          // the 26.06.01 mapping the file marks as assumed
          "26.06.01(?),v0.5.1,def,llama3_70b,h100,fp8cs,v2,64,4,8,1,5,1,256,False,False,,local,full_"
          "iteration,"
          "none,False,overlap_p2p_comm,src\n"
          // a WRAPPER row never matches
          "26.08,v0.6.0,ghi,llama3_70b,h100,fp8cs,,64,4,8,1,5,1,256,False,False,,recipe default(none),,none,"
          "False,n/a(pp1),x.py: WRAPPER of another recipe\n");
  const RecipeTable t = read_recipe_settings(path);
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_TRUE(t.rows[3].wrapper);
  DenseRecipeKey k = key_70b_h100();
  std::optional<RecipeRow> r = find_recipe(t, k);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->tp_comm_overlap);
  EXPECT_EQ(r->where, path + ":2");
  k.container = "26.06.01";  // fp8-current matches the file's fp8cs spelling too
  r = find_recipe(t, k);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->bridge_ref, "v0.5.1");
  k.container = "26.08";
  EXPECT_FALSE(find_recipe(t, k).has_value());
  k = key_70b_h100();
  k.gbs = 128;  // layout differs
  EXPECT_FALSE(find_recipe(t, k).has_value());
  k = key_70b_h100();
  k.precision = "bf16";
  EXPECT_FALSE(find_recipe(t, k).has_value());
  k = key_70b_h100();
  k.instance = "p5.48xlarge";  // not a DGX: no recipe GPU
  EXPECT_FALSE(find_recipe(t, k).has_value());
}

TEST(RecipeSettings, SeveralRowsWithDifferentSettingsAreNoSingleValue) {
  const std::string row =
      "26.04,v0.4.0,abc,llama3_70b,h100,fp8_cs,v2,64,4,8,1,5,1,256,False,False,,none,,none,True,"
      "overlap_p2p_comm,src\n";
  std::string other = row;
  other.replace(other.find("True"), 4, "False");
  EXPECT_TRUE(find_recipe(read_recipe_settings(write_file("same.csv", kHeader + row + row)), key_70b_h100()));
  EXPECT_FALSE(
      find_recipe(read_recipe_settings(write_file("differ.csv", kHeader + row + other)), key_70b_h100()));
}

RecipeRow recipe(const std::string& impl, const std::string& scope, const std::string& recompute,
                 int offload) {
  RecipeRow r;
  r.where = "f.csv:9";
  r.cuda_graph_impl = impl;
  r.cuda_graph_scope = scope;
  r.recompute = recompute;
  r.cpu_offload_layers = offload;
  r.pp_p2p = "n/a(pp1)";
  return r;
}

TEST(RecipeSettings, MapsGraphsRecomputeAndOffloadToTheTwin) {
  // Graph scope is read only with an implementation: impl none with scope full_iteration captures nothing.
  EXPECT_EQ(recipe_twin_settings(recipe("local", "full_iteration", "none", 0), 32, 1, 1).cuda_graphs,
            "full-iteration");
  EXPECT_EQ(recipe_twin_settings(recipe("local", "[full_iteration]", "none", 0), 32, 1, 1).cuda_graphs,
            "full-iteration");
  EXPECT_EQ(recipe_twin_settings(recipe("none", "full_iteration", "none", 0), 32, 1, 1).cuda_graphs, "none");
  EXPECT_EQ(recipe_twin_settings(recipe("none(recipe default)", "", "none", 0), 32, 1, 1).cuda_graphs,
            "none");
  const RecipeTwinSettings layer =
      recipe_twin_settings(recipe("local(enable_cuda_graph)", "", "none", 0), 32, 1, 1);
  EXPECT_EQ(layer.cuda_graphs, "te-scoped");
  EXPECT_NE(layer.note.find("per-layer graphs"), std::string::npos);
  EXPECT_EQ(recipe_twin_settings(recipe("transformer_engine", "mlp+attn", "none", 0), 32, 1, 1).cuda_graphs,
            "te-scoped");
  // Full block recompute of every layer of a chunk is the twin's full; fewer layers are not modelled.
  EXPECT_EQ(recipe_twin_settings(recipe("none", "", "full/block/8", 0), 32, 2, 2).recompute, "full");
  const RecipeTwinSettings part = recipe_twin_settings(recipe("none", "", "full/block/5", 0), 32, 1, 1);
  EXPECT_EQ(part.refusal, "recompute");
  EXPECT_NE(part.detail.find("5 of 32 layers"), std::string::npos);
  // CPU offload of activations: replayed with the recipe's layer count (sim/cpu_offload.hpp).
  const RecipeTwinSettings off = recipe_twin_settings(recipe("none", "", "none", 40), 80, 1, 1);
  EXPECT_TRUE(off.refusal.empty());
  EXPECT_EQ(off.cpu_offload_layers, "40");
  EXPECT_EQ(recipe_twin_settings(recipe("none", "", "none", 0), 80, 1, 1).cpu_offload_layers, "");
  RecipeRow p2p = recipe("none", "", "none", 0);
  p2p.pp_p2p = "overlap_p2p_comm";
  p2p.tp_comm_overlap = true;
  const RecipeTwinSettings s = recipe_twin_settings(p2p, 80, 4, 5);
  EXPECT_TRUE(s.overlap_p2p_comm);
  EXPECT_TRUE(s.tp_comm_overlap);
}

TEST(RecipeSettings, MalformedCellsNameFileLineAndColumn) {
  const std::string path =
      write_file("bad.csv", std::string(kHeader) +
                                "26.04,v0.4.0,abc,llama3_70b,h100,fp8_cs,v2,64,4,8,1,5,1,256,False,False,,"
                                "none,,none,yes,overlap_p2p_comm,src\n");
  try {
    (void)read_recipe_settings(path);
    FAIL() << "accepted tp_comm_overlap yes";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2: tp_comm_overlap: yes"), std::string::npos) << e.what();
  }
}

// The shipped files, joined here on their own: a replayed row whose recipe row exists runs exactly its
// recipe's tp_comm_overlap (tp > 1), P2P mode (vpp > 1, where it acts), CUDA graphs and recompute, and says
// where they came from; a row without a recipe row keeps the assumptions and says UNVERIFIED.
TEST(RecipeSettings, NoDenseRowReplaysUnderASettingItsRecipeContradicts) {
  const RecipeTable recipes = read_recipe_settings(kRecipes);
  EXPECT_EQ(recipe_file_beside(kDense), kSource + "/validate/data/megatron-bridge-llama-recipes.csv");
  const RunRows rows = read_run_rows({kDense}, catalog());
  const CsvTable dense = read_csv_file(kDense);
  int matched = 0, unmatched = 0;
  for (const LiveRun& run : rows.table.runs) {
    const CsvRowReader r(dense, run.row);
    DenseRecipeKey k;
    k.container = r.text("container");
    k.model = r.text("model");
    k.instance = r.text("instance");
    k.precision = r.text("precision");
    k.gpus = r.int32("gpus", 1, 1 << 20);
    k.tp = r.int32("tp", 1, 64);
    k.pp = r.int32("pp", 1, 64);
    k.cp = r.int32("cp", 1, 64);
    k.vpp = r.int32("vpp", 1, 64);
    k.mb = r.int32("mb", 1, 64);
    k.gbs = r.int32("gbs", 1, 1 << 20);
    const std::optional<RecipeRow> recipe = find_recipe(recipes, k);
    const TrainingConfig& t = run.scenario.training;
    const std::string name = run.campaign + " " + k.model + " " + k.precision;
    const auto said = [&](const std::string& text) {
      return std::any_of(run.warnings.begin(), run.warnings.end(),
                         [&](const std::string& w) { return w.find(text) != std::string::npos; });
    };
    if (!recipe) {
      ++unmatched;
      EXPECT_TRUE(said("UNVERIFIED")) << name;
      continue;
    }
    ++matched;
    const RecipeTwinSettings want = recipe_twin_settings(*recipe, r.int32("layers", 1, 1000), k.pp, k.vpp);
    EXPECT_TRUE(want.refusal.empty()) << name << ": replayed although its recipe refuses: " << want.detail;
    if (k.tp > 1) {
      EXPECT_EQ(t.tp_comm_overlap, recipe->tp_comm_overlap) << name;
    }
    if (k.pp > 1 && k.vpp > 1) {
      EXPECT_EQ(overlap_p2p_comm(run.scenario), want.overlap_p2p_comm) << name;
    }
    EXPECT_EQ(to_string(t.cuda_graphs), want.cuda_graphs) << name;
    EXPECT_EQ(to_string(t.recompute), want.recompute) << name;
    EXPECT_EQ(t.cpu_offload_layers == 0 ? std::string() : std::to_string(t.cpu_offload_layers),
              want.cpu_offload_layers)
        << name;
    EXPECT_TRUE(said("settings from Megatron-Bridge " + recipe->bridge_ref + " (" + recipe->commit)) << name;
    EXPECT_FALSE(said("UNVERIFIED")) << name;
    EXPECT_FALSE(said("the two files disagree")) << name;
  }
  // 71 replayed: 53 with their release's recipe (6 of them offloading 20-40 layers' activations); 18
  // without (26.02.01 is no release of the recipe file; the 25.11 GB300 8B, GB200 405B, GB300 405B CP and the
  // two 70B FSDP rows, whose published layouts are not their 25.11 recipes').
  EXPECT_EQ(matched + unmatched, 71);
  EXPECT_EQ(matched, 53);
}

}  // namespace
}  // namespace moetwin
