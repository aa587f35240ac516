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

bool moe_recipe_delays_wgrad(const MoeRecipeCells& row) {
  if (row.overlap != "on") return false;
  if (row.cuda_graphs == "full_iteration") return true;
  if (row.model == "deepseek-v3" && row.instance == "dgx-b200") return true;
  return row.model == "qwen3-235b-a22b" && row.instance == "dgx-h100" && row.container == "26.04.01";
}

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
  if (row.overlap == "on" && moe_recipe_delays_wgrad(row)) {
    out.push_back(
        "overlap on with delay_wgrad_compute (the recipe sets it: shared/design/nvl72-and-infiniband.md D): "
        "replayed with training.delay_wgrad_compute, the experts' weight-gradient GEMMs after their dgrad "
        "off the chain the dispatch-backward all-to-all waits on (the shared experts' backward stays whole)");
  } else if (row.overlap == "on") {
    out.push_back(
        "overlap on: delay_wgrad_compute not read for this recipe (UNVERIFIED): replayed without it (the "
        "experts' dgrad and wgrad together before the dispatch-backward all-to-all)");
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
