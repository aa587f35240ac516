// Megatron-Core's custom pipeline layout string (--pipeline-model-parallel-layout,
// megatron/core/transformer/pipeline_parallel_layer_layout.py, PipelineParallelLayerLayout): which layers
// each pipeline chunk builds, written as one symbol per layer and '|' between chunks:
//
//   E  the input embedding          t  one decoder (transformer) layer
//   m  one multi-token-prediction layer    L  the output layer and the loss
//
// "x*N" repeats a symbol, "(...)*N" repeats a group (groups nest), ',' is ignored (Megatron strips commas).
// Chunks are listed in model order: chunk c = v * pp + stage (Megatron reshapes the list to [vpp][pp]).
// The Megatron-Bridge DeepSeek-V3 recipes write "Et|(tt|)*30mL" (H100: PP8 VP4, 32 chunks) and
// "Et*4|(t*4|)*14tmL" (B200: PP8 VP2, 16 chunks) (shared/design/nvl72-and-infiniband.md section D).
#pragma once

#include <string>
#include <vector>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

// The layout string expanded into one string of symbols per chunk, in model order ("Et|(tt|)*2mL" ->
// {"Et", "tt", "tt", "mL"}). Throws InputError at `where`, key `key`, quoting the string, for an unknown
// character, a '*' without a count (1 .. 100000), an unbalanced parenthesis, or an expansion over
// 1,000,000 symbols. Says nothing about which chunks may hold what: that is the layout's rule
// (make_pipeline_layout).
std::vector<std::string> expand_pipeline_layout_string(const std::string& text, const InputLocation& where,
                                                       const std::string& key);

}  // namespace moetwin
