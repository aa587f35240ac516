// Which decoder layers, embedding, loss and MTP layers sit on which pipeline stage and virtual chunk,
// as Megatron-Core / Megatron-Bridge build them. The memory accounting (inspect) and the engine both read
// this, so the slowest stage (embedding first, or logits + MTP last) is the one the runs had.
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// One model chunk: the virtual_index-th chunk held by pipeline stage `stage`.
struct PipelineChunk {
  int stage = 0;           // pipeline rank, 0 .. pp-1
  int virtual_index = 0;   // virtual chunk on that stage, 0 .. vpp-1
  int first_layer = 0;     // index (0-based, model order) of its first decoder layer
  int decoder_layers = 0;  // decoder layers it holds (0 for an embedding-only or loss-only chunk)
  bool embedding = false;  // holds the input embedding (chunk 0 only)
  bool loss = false;       // holds the output layer and the loss (last chunk only)
  int mtp_layers = 0;      // multi-token-prediction layers (all on the last chunk)
};

struct PipelineLayout {
  int pp = 1;
  int vpp = 1;
  // Which split rule produced it: "even", "embedding-and-loss-accounted", "deepseek-recipe" or
  // "megatron-layout-string".
  std::string rule;
  // Model order: chunk c = v * pp + stage holds the c-th block of layers (Megatron virtual pipeline
  // order: stage 0 holds chunks 0, pp, 2pp, ...).
  std::vector<PipelineChunk> chunks;

  const PipelineChunk& chunk(int stage, int virtual_index) const;
  // Decoder layers over all virtual chunks of `stage`.
  int decoder_layers_on_stage(int stage) const;
};

// With parallel.pipeline_layout set, the chunks that Megatron layout string names (rule
// "megatron-layout-string"; pipeline_layout_string.hpp), or InputError at `where`, key `key` (the validator
// passes the layout string's key) naming what is wrong. Otherwise splits model.layers decoder layers over
// pp * vpp chunks. Rules, first that applies (L = layers, C = pp * vpp):
//  (a) "even": L % C == 0, L / C each.
//  (b) "embedding-and-loss-accounted": (L + 2) % C == 0 and (L + 2) / C >= 1. Megatron's
//      account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split count the
//      embedding and the loss as one layer each, so the first and last chunk get one decoder layer fewer
//      (qwen3-235b, 94 layers on pp 4: 23, 24, 24, 23). With (L + 2) / C == 1 the first chunk holds only
//      the embedding and the last only the loss, no decoder layer (llama3.1-405b, 126 layers on 128
//      chunks), as Megatron-Core builds them (it asserts only >= 0 layers per chunk).
//  (c) "deepseek-recipe": the Megatron-Bridge DeepSeek-V3 recipe layout (shared/design/model-flops.md):
//      every chunk ceil(L / C) decoder layers, the last chunk the remainder, which must be >= 1
//      (61 layers on pp 8: 8 x 7 then 5).
//  (d) otherwise InputError at `where`, key `key`, naming L and C.
// Embedding on chunk 0; loss and all MTP layers on the last chunk.
PipelineLayout make_pipeline_layout(const ModelSpec& model, const ParallelLayout& parallel,
                                    const InputLocation& where, const std::string& key = "layers");

// The layout in model order, as in model-flops.md: "E+16D, 16D, 16D, 13D+MTP+Loss".
std::string describe(const PipelineLayout& layout);

}  // namespace moetwin
