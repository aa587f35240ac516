// Model accounting: parameter counts and model FLOPs exactly as Megatron-Core counts them
// (megatron/training/training.py num_floating_point_operations; shared/design/model-flops.md).
// The FLOPs are the analytical "MODEL TFLOP/s/GPU" numerator users read in their logs: recompute is
// not counted. Parameter counts are element counts (not bytes).
#pragma once

#include <cstdint>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// --- Layer kinds --------------------------------------------------------------------------------

// Megatron's first-k-dense pattern (moe_layer_freq with first_k_dense_replace): decoder layer `index`
// (0-based) has a MoE MLP iff the model has experts and index >= dense_layers.
bool layer_is_moe(const ModelSpec& model, int index);
// Megatron counts MTP layers as MoE layers iff the last decoder layer is MoE (model-flops.md).
bool mtp_is_moe(const ModelSpec& model);

// Sliding-window layers (ModelSpec::sliding_window, full_attention_every): decoder layer `index` (0-based)
// attends to a window iff the model has one and the layer is not on the full-attention period. MTP layers
// (index < 0 or >= layers) attend fully.
bool layer_is_windowed(const ModelSpec& model, int index);
// Mean keys a query of a causal sequence of `seq` tokens attends to in decoder layer `index`, the
// continuous count Megatron's formula uses: full causal s/2 (the triangle s^2/2 over s queries); a window w
// < s is the band below the diagonal, (s w - w^2/2) / s = w - w^2 / (2 s) (-> s/2 at w = s, so the two
// meet); w >= s is full. Core-attention FLOPs per query are 2 x (q + v width) x this.
double causal_keys_per_query(const ModelSpec& model, int index, double seq);

// --- Vocabulary padding -----------------------------------------------------------------------

// Vocabulary as the embedding/output tensors are built: Megatron's _vocab_size_with_padding pads to
// make_vocab_size_divisible_by x tensor-parallel size so that every TP shard has the same width.
std::int64_t padded_vocab(const ModelSpec& model, int tp);
// Vocabulary as the logged FLOPs use it: padded to vocab_pad_multiple (128) only. model-flops.md
// reproduces the logged TFLOP/s with this; the difference to the TP-padded size is <= 0.03 %.
std::int64_t padded_vocab_for_flops(const ModelSpec& model);

// --- Parameters --------------------------------------------------------------------------------

// Parameters of one building block (elements). All RMSNorm weights are h (or the normalized width).
struct LayerParams {
  // Attention block incl. its input RMSNorm; MLA: q/kv down and up projections, q/kv RMSNorms,
  // output projection. GQA: fused QKV, output projection (Qwen3's per-head q/k norms, 2 x head_dim,
  // are not in the catalog and ignored: < 1e-5 of the block).
  std::int64_t attention = 0;
  // Of `attention`, the MLA down projections (h x r_q, h x (r_kv + d_r)) and the q/kv norms, which
  // Megatron-Core builds TP-duplicated (parallel_mode "duplicated"); 0 for GQA.
  std::int64_t attention_tp_replicated = 0;
  // Of `attention`, the attention sinks (one logit per head, split over TP with the heads); 0 without.
  std::int64_t attention_sinks = 0;
  std::int64_t mlp_norm = 0;        // pre-MLP RMSNorm, h
  std::int64_t dense_mlp = 0;       // SwiGLU: 3 h f
  std::int64_t routed_expert = 0;   // ONE routed expert: 3 h f_e
  std::int64_t routed_experts = 0;  // all E routed experts of one layer: E x 3 h f_e
  std::int64_t shared_experts = 0;  // 3 h f_s
  std::int64_t router = 0;          // E x h gating weight (replicated over TP)
};
LayerParams layer_params(const ModelSpec& model);

// MTP block minus its transformer layer: enorm + hnorm + final norm (3 h) and eh_proj (2h x h).
std::int64_t mtp_extra_params(const ModelSpec& model);

struct ParameterCounts {
  std::int64_t embedding = 0;           // V_pad x h
  std::int64_t output_layer = 0;        // V_pad x h (0 with tied embeddings)
  std::int64_t attention = 0;           // L decoder layers, incl. input norms
  std::int64_t dense_mlp = 0;           // L_d dense MLPs incl. their pre-MLP norms
  std::int64_t routed_experts = 0;      // L_m layers x E experts
  std::int64_t shared_experts = 0;      // L_m layers
  std::int64_t router = 0;              // L_m routers incl. the MoE layers' pre-MLP norms
  std::int64_t final_norm = 0;          // h
  std::int64_t mtp = 0;                 // M MTP blocks: extras + a full transformer layer each
  std::int64_t mtp_routed_experts = 0;  // of `mtp`, the routed experts (for the active count)

  std::int64_t total() const;
  // Parameters one token passes through: routed experts count k / E of theirs.
  std::int64_t active(const ModelSpec& model) const;
};
// Whole model, vocabulary padded for `tp` (as built).
ParameterCounts count_parameters(const ModelSpec& model, int tp);

// --- FLOPs ---------------------------------------------------------------------------------------

// Model FLOPs per token (forward + both backward GEMMs, factor 6), by the terms of model-flops.md.
struct TokenFlops {
  double attention = 0;  // (L + M) attention blocks incl. causal core attention (s/2, or window, terms)
  double mlp = 0;        // dense + routed (k experts) + shared MLPs over L + M layers
  double mtp = 0;        // MTP norms and eh_proj: 6 M (3h + 2h^2)
  double logits = 0;     // 6 h V (M + 1)
  double total() const { return attention + mlp + mtp + logits; }
};
TokenFlops model_flops_per_token(const ModelSpec& model, int seq_length);

struct IterationFlops {
  TokenFlops per_token;
  double tokens = 0;         // global batch x sequence length
  double per_iteration = 0;  // per_token.total() x tokens, FLOP
};
IterationFlops model_flops(const Scenario& scenario);

}  // namespace moetwin
