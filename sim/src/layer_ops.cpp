#include "moetwin/sim/layer_ops.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace moetwin {

const char* to_string(LayerOpClass cls) {
  switch (cls) {
    case LayerOpClass::gemm:
      return "gemm";
    case LayerOpClass::grouped_gemm:
      return "grouped_gemm";
    case LayerOpClass::attention:
      return "attention";
    case LayerOpClass::elementwise:
      return "elementwise";
    case LayerOpClass::permute:
      return "permute";
    case LayerOpClass::all_to_all:
      return "all_to_all";
    case LayerOpClass::collective:
      return "collective";
    case LayerOpClass::p2p:
      return "p2p";
    case LayerOpClass::host_copy:
      return "host_copy";
  }
  return "?";
}

OpClass compute_class(LayerOpClass cls) {
  switch (cls) {
    case LayerOpClass::gemm:
      return OpClass::gemm;
    case LayerOpClass::grouped_gemm:
      return OpClass::grouped_gemm;
    case LayerOpClass::attention:
      return OpClass::attention;
    case LayerOpClass::elementwise:
      return OpClass::elementwise;
    case LayerOpClass::permute:
    case LayerOpClass::all_to_all:
    case LayerOpClass::collective:
    case LayerOpClass::p2p:
    case LayerOpClass::host_copy:
      break;
  }
  throw std::logic_error(std::string("compute_class: ") + to_string(cls) + " is communication");
}

namespace {

using namespace layer_ops;

constexpr const LayerOp* kTable[] = {
    // forward
    &kTpAgAttn, &kAttnMlaDown, &kTpAgMlaLatent, &kAttnMlaUp, &kAttnQkv, &kAttnCore, &kAttnOutProj, &kTpRsAttn,
    &kTpAgMlp, &kMlpDense, &kTpRsMlp, &kMoeRouter, &kEpCountsAllgather, &kMoePermute, &kEpDispatch,
    &kMoeExperts, &kTpAgSharedExpert, &kMoeSharedExpert, &kTpRsSharedExpert, &kEpCombine, &kMoeUnpermute,
    // backward
    &kTpAgAttnBwd, &kAttnOutProjBwd, &kAttnCoreBwd, &kAttnMlaUpBwd, &kTpRsMlaLatentBwd, &kAttnMlaDownBwd,
    &kAttnQkvBwd, &kTpRsAttnBwd, &kTpAgMlpBwd, &kMlpDenseBwd, &kTpRsMlpBwd, &kMoeUnpermuteBwd, &kEpCombineBwd,
    &kTpAgSharedExpertBwd, &kMoeSharedExpertBwd, &kTpRsSharedExpertBwd, &kMoeExpertsBwd, &kMoeExpertsDgrad,
    &kMoeExpertsWgrad, &kEpDispatchBwd, &kMoePermuteBwd, &kMoeRouterBwd,
    // embedding, output layer and loss, MTP
    &kEmbedding, &kTpRsEmbedding, &kTpAgEmbeddingBwd, &kEmbeddingBwd, &kTpAgOutput, &kOutputLayer,
    &kLossCrossEntropy, &kTpArCrossEntropy, &kLossCrossEntropyBwd, &kOutputLayerBwd, &kTpRsOutputBwd,
    &kTpAgMtpEh, &kMtpEhProj, &kMtpEhProjBwd, &kTpRsMtpEhBwd,
    // pipeline, data parallel, optimizer
    &kPpActivation, &kPpGradient, &kDpParamAllGather, &kEdpParamAllGather, &kDpGradReduceScatter,
    &kEdpGradReduceScatter, &kFsdpParamAllGather, &kFsdpGradReduceScatter, &kCpuOffloadD2h, &kCpuOffloadH2d,
    &kCpuOffloadWait, &kOptimizerAdam};

constexpr LayerOpSymbol kSymbols[] = {
    {"T", "tokens per microbatch on a TP group: mb x seq / cp"},
    {"t", "tensor-parallel size (tp)"},
    {"b", "micro batch"},
    {"s", "a rank's sequence length: seq / cp"},
    {"h", "hidden size"},
    {"f", "dense FFN hidden size (ffn_hidden)"},
    {"fs", "shared experts' FFN hidden size (shared_ffn_hidden)"},
    {"fe", "routed expert FFN hidden size (expert_ffn_hidden)"},
    {"q", "query / key width: heads x head_dim (GQA, MHA); heads x (qk_head_dim + qk_rope_dim) (MLA)"},
    {"v", "value width: heads x head_dim (GQA, MHA); heads x v_head_dim (MLA)"},
    {"kv", "key / value width of the fused QKV: query_groups x head_dim"},
    {"d",
     "MLA down-projection width: q_lora_rank + kv_lora_rank + qk_rope_dim (without q_lora_rank: "
     "kv_lora_rank + qk_rope_dim)"},
    {"u",
     "MLA up-projection weights: q_lora_rank x q (without q_lora_rank: h x q) + kv_lora_rank x heads x "
     "(qk_head_dim + v_head_dim)"},
    {"kn", "MLA key width without rope: heads x qk_head_dim"},
    {"E", "routed experts"},
    {"V", "vocabulary padded to a multiple of vocab_pad_multiple (128) x t"},
    {"a", "attention backward / forward FLOPs (SimProfile::attention_backward_factor, 2.5)"},
    {"c", "token copies a rank routes: top_k x T / t (balanced routing; dispatcher models count their own)"},
    {"Te", "token copies the rank's local experts compute (MoeRankCost::tokens)"},
    {"ne", "local experts: experts / ep"},
    {"etp, ep", "expert tensor- and expert-parallel sizes"},
    {"P, Pe", "dense and expert parameters of the chunk held by the rank"},
    {"Ps", "the rank's optimizer shard: P / (dp x cp) + Pe / edp over its chunks"},
    {"Pu",
     "parameters of one Megatron-FSDP unit (a decoder layer, the embedding, the output layer) on the rank's "
     "TP share"},
    {"A", "activations one offloaded decoder layer saves for backward, one microbatch (memory model)"},
    {"pb, gb, ob",
     "bytes per parameter gathered (2), per gradient reduced (4), per parameter in Adam (30): "
     "SimProfile::param_bytes, grad_bytes, optimizer_bytes_per_param"},
};

}  // namespace

std::span<const LayerOp* const> layer_op_table() {
  return kTable;
}

std::span<const LayerOpSymbol> layer_op_symbols() {
  return kSymbols;
}

const LayerOp* find_layer_op(const char* name) {
  for (const LayerOp* op : kTable) {
    if (std::strcmp(op->name, name) == 0) return op;
  }
  return nullptr;
}

}  // namespace moetwin
