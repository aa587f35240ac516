// What the twin does with the Megatron-Bridge MoE recipe settings of NVIDIA's published MoE layouts
// (validate/data/nvidia-moe-layouts.csv; the recipes behind them: shared/design/nvl72-and-infiniband.md
// section D, shared/design/nvidia-mechanisms.md sections 2 and 6) beyond what the row's columns replay: each
// setting the row implies is either modelled (said with the mechanism) or named as not modelled, in the row's
// warnings (issue 56 item 5).
#pragma once

#include <string>
#include <vector>

namespace moetwin {

// The row's settings as the MoE layout file writes them.
struct MoeRecipeCells {
  std::string model;        // catalog model name (deepseek-v3, gpt-oss-120b, ...)
  std::string instance;     // dgx-b200, dgx-gb200, ...
  std::string recompute;    // none | selective
  std::string overlap;      // on | off (overlap_moe_expert_parallel_comm)
  std::string cuda_graphs;  // none | local | full_iteration | te:<scope>
  std::string container;    // the release (26.04.01, ...)
};

// Whether the row's recipe sets delay_wgrad_compute (replayed as training.delay_wgrad_compute): with the EP
// overlap on, the MXFP8 full-iteration bundle (every full_iteration row), DeepSeek-V3's DGX B200 overlap
// recipe and the 26.04.01 DGX H100 Qwen3-235B config (shared/design/nvl72-and-infiniband.md D); other
// overlap rows: not read (the note says so).
bool moe_recipe_delays_wgrad(const MoeRecipeCells& row);

// One sentence per setting: recompute modules, delay_wgrad_compute, the CUDA-graph scope's parts.
std::vector<std::string> moe_recipe_notes(const MoeRecipeCells& row);

}  // namespace moetwin
