// The MoE recipe settings of NVIDIA's layouts, modelled or named (moe_recipe_notes.hpp).
#include "moetwin/validate/moe_recipe_notes.hpp"

#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

// The recipe's selective-recompute modules (Megatron recompute_modules) where the design doc read them at
// Megatron-Bridge HEAD (shared/design/nvl72-and-infiniband.md D); "" where it did not.
std::string recompute_modules(const MoeRecipeCells& row) {
  if (row.model == "deepseek-v3") {
    if (row.instance == "dgx-h100" || row.instance == "dgx-b200") return "mla_up_proj, mlp";
    return "mla_up_proj";
  }
  if (row.model == "gpt-oss-120b") return "layernorm, moe_act";
  return "";
}

}  // namespace

std::vector<std::string> moe_recipe_notes(const MoeRecipeCells& row) {
  std::vector<std::string> out;
  if (row.recompute == "selective") {
    const std::string modules = recompute_modules(row);
    out.push_back(concat(
        {"recompute selective: the twin's selective recompute re-runs core attention (Megatron's default "
         "module core_attn: the attention kernel again in backward, its softmax statistics not held); ",
         modules.empty() ? std::string("the recipe's recompute_modules were not read (UNVERIFIED)")
                         : concat({"the recipe recomputes ", modules,
                                   " (Megatron-Bridge HEAD, shared/design/nvl72-and-infiniband.md D)"}),
         ": recompute by module name (mla_up_proj: the MLA up-projection GEMMs; mlp / moe_act: the MLP or "
         "the "
         "experts' activation; layernorm: the norms) is not modelled, so this row's recompute time and held "
         "activations are the core_attn ones"}));
  }
  if (row.overlap == "on") {
    out.push_back(
        "overlap on: EP all-to-all overlap modelled (combined 1F1B, A2As on their own stream); "
        "delay_wgrad_compute, which NVIDIA's overlap recipes set with it (the MXFP8 full-iteration bundle, "
        "DeepSeek-V3 B200: shared/design/nvl72-and-infiniband.md D), is not: the twin runs each MLP's "
        "weight-gradient GEMMs right after its dgrad, where Megatron-Core moves them behind the "
        "dispatch-backward all-to-all (a2a-mechanisms.md section 1)");
  }
  const std::string& g = row.cuda_graphs;
  if (g.rfind("te:", 0) == 0 && g.find("moe_preprocess") != std::string::npos) {
    out.push_back(concat(
        {"cuda_graphs ", g,
         ": moe_preprocess stays eager in the twin (the dropless dispatcher's preprocess follows the "
         "token-count host sync, which a graph cannot hold; Megatron-Core captures it only with padded "
         "experts)"}));
  }
  if (g == "full_iteration") {
    out.push_back(
        "cuda_graphs full_iteration: every forward and backward op's host launches replaced by one graph "
        "launch per iteration (sim/cuda_graphs.hpp); the recipe's paged stash at capacity factor 1.5 "
        "(the MXFP8 bundle) is not modelled: the experts run the balanced token counts");
  }
  return out;
}

}  // namespace moetwin
