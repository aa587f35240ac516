#include "moetwin/scenario/pipeline_layout.hpp"

#include <stdexcept>

#include "moetwin/common/concat.hpp"
#include "moetwin/scenario/pipeline_layout_string.hpp"

namespace moetwin {
namespace {

// The chunks a Megatron layout string names (pipeline_layout_string.hpp), checked against what Megatron-Core
// builds (PipelineParallelLayerLayout.validate_layer_layout) and what the twin's chunks can hold: pp * vpp
// chunks; the embedding once, first in chunk 0; the loss once, last in the last chunk; `t` count = the
// model's decoder layers; the model's MTP layers, all in the last chunk after its decoder layers (the twin
// runs MTP beside the loss); no chunk empty (a chunk that only forwards activations is not modelled).
PipelineLayout layout_from_string(const ModelSpec& model, const ParallelLayout& parallel,
                                  const InputLocation& where, const std::string& key) {
  const std::string& text = parallel.pipeline_layout;
  const std::vector<std::string> chunks = expand_pipeline_layout_string(text, where, key);
  const std::string quoted = concat({"\"", text, "\""});
  const auto fail = [&](const std::string& expected) { throw InputError(where, key, quoted, expected); };
  const long long count = static_cast<long long>(parallel.pp) * parallel.vpp;
  if (static_cast<long long>(chunks.size()) != count) {
    fail(concat({"pp * vpp = ", std::to_string(parallel.pp), " * ", std::to_string(parallel.vpp), " = ",
                 std::to_string(count), " chunks separated by '|' (it names ", std::to_string(chunks.size()),
                 ")"}));
  }
  PipelineLayout out;
  out.pp = parallel.pp;
  out.vpp = parallel.vpp;
  out.rule = "megatron-layout-string";
  int first = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::string& sym = chunks[c];
    const std::string which = concat({"chunk ", std::to_string(c), " (\"", sym, "\")"});
    const bool last_chunk = c + 1 == chunks.size();
    PipelineChunk ch;
    ch.stage = static_cast<int>(c % static_cast<std::size_t>(parallel.pp));
    ch.virtual_index = static_cast<int>(c / static_cast<std::size_t>(parallel.pp));
    ch.first_layer = first;
    if (sym.empty()) fail(concat({"no empty chunk (", which, " holds no layer: not modelled)"}));
    for (std::size_t i = 0; i < sym.size(); ++i) {
      switch (sym[i]) {
        case 'E':
          if (c != 0 || i != 0)
            fail(concat({"the embedding 'E' only as the first symbol of chunk 0 (", which, ")"}));
          ch.embedding = true;
          break;
        case 't':
          if (ch.mtp_layers > 0 || ch.loss)
            fail(concat({"decoder layers 't' before the chunk's MTP layers and loss (", which, ")"}));
          ++ch.decoder_layers;
          break;
        case 'm':
          if (!last_chunk || ch.loss)
            fail(concat({"MTP layers 'm' only in the last chunk, before the loss (", which,
                         "; the twin runs MTP beside the loss)"}));
          ++ch.mtp_layers;
          break;
        case 'L':
          if (!last_chunk || i + 1 != sym.size())
            fail(concat({"the loss 'L' only as the last symbol of the last chunk (", which, ")"}));
          ch.loss = true;
          break;
        default:
          throw std::logic_error("layout_from_string: expand_pipeline_layout_string let through a symbol");
      }
    }
    first += ch.decoder_layers;
    out.chunks.push_back(ch);
  }
  if (!out.chunks.front().embedding) fail("the embedding 'E' as the first symbol of chunk 0");
  if (!out.chunks.back().loss) fail("the loss 'L' as the last symbol of the last chunk");
  if (first != model.layers) {
    fail(concat({"as many decoder layers 't' as ", model.name, " has (", std::to_string(model.layers),
                 "; it names ", std::to_string(first), ")"}));
  }
  if (out.chunks.back().mtp_layers != model.mtp_layers) {
    fail(concat({"as many MTP layers 'm' as ", model.name, " has (", std::to_string(model.mtp_layers),
                 "; it names ", std::to_string(out.chunks.back().mtp_layers), ")"}));
  }
  return out;
}

}  // namespace

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
  if (!parallel.pipeline_layout.empty()) return layout_from_string(model, parallel, where, key);
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
