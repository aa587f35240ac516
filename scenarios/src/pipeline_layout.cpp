#include "moetwin/scenario/pipeline_layout.hpp"

#include <stdexcept>

namespace moetwin {

const PipelineChunk& PipelineLayout::chunk(int stage, int virtual_index) const {
  if (stage < 0 || stage >= pp || virtual_index < 0 || virtual_index >= vpp) {
    throw std::logic_error("PipelineLayout::chunk: stage " + std::to_string(stage) + " / virtual index " +
                           std::to_string(virtual_index) + " out of pp " + std::to_string(pp) + ", vpp " +
                           std::to_string(vpp));
  }
  return chunks.at(static_cast<std::size_t>(virtual_index * pp + stage));
}

int PipelineLayout::decoder_layers_on_stage(int stage) const {
  int total = 0;
  for (int v = 0; v < vpp; ++v) total += chunk(stage, v).decoder_layers;
  return total;
}

PipelineLayout make_pipeline_layout(const ModelSpec& model, const ParallelLayout& parallel,
                                    const InputLocation& where, const std::string& key) {
  if (parallel.pp < 1 || parallel.vpp < 1) {
    throw std::logic_error("make_pipeline_layout: pp and vpp must be >= 1 (validated by the parser)");
  }
  // 64-bit so that absurd (unvalidated) pp * vpp cannot overflow.
  const long long count = static_cast<long long>(parallel.pp) * parallel.vpp;
  const long long layers = model.layers;
  std::vector<long long> per_chunk;
  std::string rule;
  if (layers >= count && layers % count == 0) {
    rule = "even";
    per_chunk.assign(static_cast<std::size_t>(count), layers / count);
  } else if (count >= 2 && (layers + 2) % count == 0 && (layers + 2) / count >= 1) {
    // Megatron-Core get_num_layers_to_build (megatron/core/transformer/transformer_block.py): with
    // account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split it splits L + 2 slots
    // evenly over the pp x vpp chunks, then builds one decoder layer fewer on the first chunk (the embedding
    // takes its slot) and on the last (the loss takes its slot), asserting only that the count stays >= 0.
    // So (L + 2) / C == 1 is a valid Megatron split: the first chunk holds the embedding alone and the last
    // the loss alone (Llama 3.1 405B, 126 layers on PP16 VPP8 = 128 chunks: E, 126 x 1D, Loss). Such a chunk
    // still runs its embedding or output-layer + loss ops and its pipeline sends (sim/workload.cpp).
    rule = "embedding-and-loss-accounted";
    per_chunk.assign(static_cast<std::size_t>(count), (layers + 2) / count);
    per_chunk.front() -= 1;
    per_chunk.back() -= 1;
  } else {
    const long long ceil = (layers + count - 1) / count;
    const long long last = layers - ceil * (count - 1);
    if (last < 1) {
      throw InputError(where, key, std::to_string(layers),
                       "a layer count that splits over pp * vpp = " + std::to_string(parallel.pp) + " * " +
                           std::to_string(parallel.vpp) + " = " + std::to_string(count) +
                           " chunks: a multiple of " + std::to_string(count) + " (even), or " +
                           std::to_string(count) + " * n - 2 (embedding and loss accounted), or ceil(" +
                           std::to_string(layers) + " / " + std::to_string(count) + ") = " +
                           std::to_string(ceil) + " per chunk leaving >= 1 for the last (DeepSeek recipe; " +
                           "it leaves " + std::to_string(last) + ")");
    }
    rule = "deepseek-recipe";
    per_chunk.assign(static_cast<std::size_t>(count), ceil);
    per_chunk.back() = last;
  }

  PipelineLayout out;
  out.pp = parallel.pp;
  out.vpp = parallel.vpp;
  out.rule = rule;
  out.chunks.reserve(per_chunk.size());
  int first = 0;
  for (std::size_t c = 0; c < per_chunk.size(); ++c) {
    PipelineChunk ch;
    ch.stage = static_cast<int>(c % static_cast<std::size_t>(parallel.pp));
    ch.virtual_index = static_cast<int>(c / static_cast<std::size_t>(parallel.pp));
    ch.first_layer = first;
    ch.decoder_layers = static_cast<int>(per_chunk[c]);
    ch.embedding = c == 0;
    ch.loss = c + 1 == per_chunk.size();
    ch.mtp_layers = ch.loss ? model.mtp_layers : 0;
    first += ch.decoder_layers;
    out.chunks.push_back(ch);
  }
  return out;
}

std::string describe(const PipelineLayout& layout) {
  std::string out;
  for (const PipelineChunk& c : layout.chunks) {
    std::string part;
    // Pieces joined by '+', appended one by one: "+" + std::string is a GCC 12 -O3 -Wrestrict false
    // positive (moetwin/common/concat.hpp).
    const auto add = [&part](const std::string& piece) {
      if (!part.empty()) part += '+';
      part += piece;
    };
    if (c.embedding) add("E");
    if (c.decoder_layers > 0) add(std::to_string(c.decoder_layers) + "D");
    if (c.mtp_layers > 0) add((c.mtp_layers > 1 ? std::to_string(c.mtp_layers) : "") + "MTP");
    if (c.loss) add("Loss");
    out += (out.empty() ? "" : ", ") + part;
  }
  return out;
}

}  // namespace moetwin
