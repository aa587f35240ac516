// The MoE recipe settings of NVIDIA's layouts, modelled or named (moe_recipe_notes.hpp), by hand per setting.
#include "moetwin/validate/moe_recipe_notes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace moetwin {
namespace {

bool says(const std::vector<std::string>& notes, const std::string& words) {
  for (const std::string& n : notes)
    if (n.find(words) != std::string::npos) return true;
  return false;
}

MoeRecipeCells row(const std::string& model, const std::string& instance, const std::string& recompute,
                   const std::string& overlap, const std::string& graphs,
                   const std::string& container = "26.04") {
  return MoeRecipeCells{model, instance, recompute, overlap, graphs, container};
}

TEST(MoeRecipeNotes, SelectiveRecomputeNamesTheRecipesModules) {
  const auto dsv3_b200 = moe_recipe_notes(row("deepseek-v3", "dgx-b200", "selective", "off", "none"));
  ASSERT_EQ(dsv3_b200.size(), 1u);
  EXPECT_TRUE(says(dsv3_b200, "the recipe recomputes mla_up_proj, mlp"));
  EXPECT_TRUE(says(dsv3_b200, "core_attn"));
  EXPECT_TRUE(says(moe_recipe_notes(row("deepseek-v3", "dgx-gb200", "selective", "off", "none")),
                   "the recipe recomputes mla_up_proj ("));
  EXPECT_TRUE(says(moe_recipe_notes(row("gpt-oss-120b", "dgx-h100", "selective", "off", "none")),
                   "layernorm, moe_act"));
  EXPECT_TRUE(says(moe_recipe_notes(row("kimi-k2", "dgx-gb300", "selective", "off", "none")), "UNVERIFIED"));
  EXPECT_TRUE(moe_recipe_notes(row("qwen3-30b-a3b", "dgx-h100", "none", "off", "none")).empty());
}

TEST(MoeRecipeNotes, DelayWgradWhereTheRecipeSetsItAndGraphScopesTheirEagerParts) {
  const auto n =
      moe_recipe_notes(row("qwen3-235b-a22b", "dgx-gb200", "none", "on", "full_iteration", "26.06"));
  ASSERT_EQ(n.size(), 2u);
  EXPECT_TRUE(says(n, "replayed with training.delay_wgrad_compute"));
  EXPECT_TRUE(says(n, "paged stash"));
  EXPECT_TRUE(moe_recipe_delays_wgrad(row("qwen3-235b-a22b", "dgx-gb200", "none", "on", "full_iteration")));
  EXPECT_TRUE(moe_recipe_delays_wgrad(row("deepseek-v3", "dgx-b200", "selective", "on", "te:attn")));
  EXPECT_TRUE(moe_recipe_delays_wgrad(row("qwen3-235b-a22b", "dgx-h100", "none", "on", "none", "26.04.01")));
  EXPECT_FALSE(moe_recipe_delays_wgrad(row("qwen3-235b-a22b", "dgx-h100", "none", "on", "none", "26.04")));
  EXPECT_FALSE(moe_recipe_delays_wgrad(row("qwen3-235b-a22b", "dgx-gb200", "none", "off", "full_iteration")));
  EXPECT_TRUE(says(moe_recipe_notes(row("gpt-oss-120b", "dgx-gb200", "none", "on", "none")), "UNVERIFIED"));
  const auto te =
      moe_recipe_notes(row("qwen3-30b-a3b", "dgx-b300", "none", "off", "te:moe_router+moe_preprocess"));
  ASSERT_EQ(te.size(), 1u);
  EXPECT_TRUE(says(te, "moe_preprocess stays eager"));
  EXPECT_TRUE(moe_recipe_notes(row("qwen3-30b-a3b", "dgx-gb200", "none", "off", "local")).empty());
}

}  // namespace
}  // namespace moetwin
