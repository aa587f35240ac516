#include "moetwin/accounting/model_accounting.hpp"

#include <stdexcept>

namespace moetwin {
namespace {

using I64 = std::int64_t;

I64 round_up(I64 value, I64 multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Decoder layers with a MoE MLP (first-k-dense pattern).
I64 moe_layer_count(const ModelSpec& m) {
  if (m.experts <= 0) return 0;
  return m.layers > m.dense_layers ? m.layers - m.dense_layers : 0;
}

}  // namespace

bool layer_is_moe(const ModelSpec& model, int index) {
  return model.experts > 0 && index >= model.dense_layers;
}

bool layer_is_windowed(const ModelSpec& model, int index) {
  if (model.sliding_window <= 0 || index < 0 || index >= model.layers) return false;
  return model.full_attention_every == 0 || (index + 1) % model.full_attention_every != 0;
}

double causal_keys_per_query(const ModelSpec& model, int index, double seq) {
  const double w = model.sliding_window;
  if (!layer_is_windowed(model, index) || w >= seq) return seq / 2.0;
  return w - w * w / (2.0 * seq);
}

bool mtp_is_moe(const ModelSpec& model) {
  return model.layers > 0 && layer_is_moe(model, model.layers - 1);
}

std::int64_t padded_vocab(const ModelSpec& model, int tp) {
  if (tp < 1) throw std::logic_error("padded_vocab: tp must be >= 1");
  return round_up(model.vocab, static_cast<I64>(model.vocab_pad_multiple) * tp);
}

std::int64_t padded_vocab_for_flops(const ModelSpec& model) {
  return round_up(model.vocab, model.vocab_pad_multiple);
}

LayerParams layer_params(const ModelSpec& m) {
  const I64 h = m.hidden;
  const I64 n = m.heads;
  LayerParams p;
  if (m.attention == AttentionKind::mla) {
    const I64 qk = m.qk_head_dim + m.qk_rope_dim;
    // Without q compression the query is one column-parallel h x n (d_qk + d_r) projection.
    const I64 q_down = m.q_lora_rank > 0 ? h * m.q_lora_rank : 0;
    const I64 q_norm = m.q_lora_rank;
    const I64 q_up = m.q_lora_rank > 0 ? static_cast<I64>(m.q_lora_rank) * n * qk : h * n * qk;
    const I64 kv_down = h * (m.kv_lora_rank + m.qk_rope_dim);  // compressed kv plus the shared rope key
    const I64 kv_norm = m.kv_lora_rank;
    const I64 kv_up = static_cast<I64>(m.kv_lora_rank) * n * (m.qk_head_dim + m.v_head_dim);
    const I64 out = n * m.v_head_dim * h;
    p.attention = h + q_down + q_norm + q_up + kv_down + kv_norm + kv_up + out;
    p.attention_tp_replicated = h + q_down + q_norm + kv_down + kv_norm;
  } else {
    const I64 q = static_cast<I64>(m.head_dim) * n;
    const I64 kv = static_cast<I64>(m.head_dim) * m.query_groups;
    p.attention_sinks = m.attention_sinks ? n : 0;
    p.attention = h + h * (q + 2 * kv) + q * h + p.attention_sinks;
    p.attention_tp_replicated = h;
  }
  p.mlp_norm = h;
  p.dense_mlp = 3 * h * m.ffn_hidden;
  p.routed_expert = 3 * h * m.expert_ffn_hidden;
  p.routed_experts = static_cast<I64>(m.experts) * p.routed_expert;
  p.shared_experts = 3 * h * m.shared_ffn_hidden;
  p.router = static_cast<I64>(m.experts) * h;
  return p;
}

std::int64_t mtp_extra_params(const ModelSpec& m) {
  const I64 h = m.hidden;
  return 3 * h + 2 * h * h;
}

std::int64_t ParameterCounts::total() const {
  return embedding + output_layer + attention + dense_mlp + routed_experts + shared_experts + router +
         final_norm + mtp;
}

std::int64_t ParameterCounts::active(const ModelSpec& model) const {
  const I64 routed = routed_experts + mtp_routed_experts;
  if (model.experts <= 0) return total();
  // routed x k / E, exact in integers: each layer's E experts are equal-sized.
  return total() - routed + routed / model.experts * model.top_k;
}

ParameterCounts count_parameters(const ModelSpec& m, int tp) {
  const LayerParams lp = layer_params(m);
  const I64 h = m.hidden;
  const I64 v = padded_vocab(m, tp);
  const I64 layers = m.layers;
  const I64 moe = moe_layer_count(m);
  const I64 dense = layers - moe;
  ParameterCounts c;
  c.embedding = v * h;
  c.output_layer = m.tied_embeddings ? 0 : v * h;
  c.attention = layers * lp.attention;
  c.dense_mlp = dense * (lp.mlp_norm + lp.dense_mlp);
  c.routed_experts = moe * lp.routed_experts;
  c.shared_experts = moe * lp.shared_experts;
  c.router = moe * (lp.mlp_norm + lp.router);
  c.final_norm = h;
  const I64 mtp = m.mtp_layers;
  const I64 mtp_mlp = mtp_is_moe(m) ? lp.mlp_norm + lp.router + lp.routed_experts + lp.shared_experts
                                    : lp.mlp_norm + lp.dense_mlp;
  c.mtp = mtp * (mtp_extra_params(m) + lp.attention + mtp_mlp);
  c.mtp_routed_experts = mtp_is_moe(m) ? mtp * lp.routed_experts : 0;
  return c;
}

TokenFlops model_flops_per_token(const ModelSpec& m, int seq_length) {
  // Doubles throughout: the causal s/2 terms are not integers for odd s, and per-iteration counts
  // (~3e17) are exact enough in a double (53-bit mantissa, relative error 1e-16).
  const double h = m.hidden;
  const double s = seq_length;
  const double n = m.heads;
  const double mtp = m.mtp_layers;
  const double moe_layers = static_cast<double>(moe_layer_count(m));
  double dense_layers = m.layers - moe_layers;
  double routed_layers = moe_layers;
  // MTP layers count as MoE layers if the last decoder layer is MoE, else as dense ones.
  if (mtp_is_moe(m)) {
    routed_layers += mtp;
  } else {
    dense_layers += mtp;
  }
  const double attention_layers = m.layers + mtp;

  TokenFlops f;
  // MLP: 6 h (3 f L_d' + 3 k f_e L_m' + 3 f_s L_m'); SwiGLU has 3 matrices of h x ffn.
  f.mlp = 6.0 * h *
          (3.0 * m.ffn_hidden * dense_layers + 3.0 * m.top_k * m.expert_ffn_hidden * routed_layers +
           3.0 * m.shared_ffn_hidden * routed_layers);
  double attention = 0;
  if (m.attention == AttentionKind::mla) {
    double per_layer = 0;
    const double qk = m.qk_head_dim + m.qk_rope_dim;
    // The "+ 1" terms are the q/kv RMSNorms as Megatron counts them.
    const double q_term = m.q_lora_rank > 0 ? m.q_lora_rank * (h + n * qk + 1.0) : h * n * qk;
    per_layer = q_term + m.kv_lora_rank * (h + n * (m.qk_head_dim + m.v_head_dim) + 1.0) + h * m.qk_rope_dim +
                n * m.v_head_dim * h + s * n * qk / 2.0 + s * n * m.v_head_dim / 2.0;
    attention = attention_layers * per_layer;
  } else {
    const double q = static_cast<double>(m.head_dim) * n;
    const double kv = static_cast<double>(m.head_dim) * m.query_groups;
    // QKV projection, causal QK^T and attention-over-V (each s/2 keys per query in Megatron's count; a
    // sliding-window layer's window band instead), output projection. MTP layers attend fully.
    // Without a window the sum is the closed form, kept as such (same rounding as before windows existed).
    if (m.sliding_window == 0) {
      attention = attention_layers * (h * (q + 2.0 * kv) + q * s / 2.0 * 2.0 + q * h);
    } else {
      attention = attention_layers * (h * (q + 2.0 * kv) + q * h) + mtp * q * s;
      for (int i = 0; i < m.layers; ++i) attention += q * causal_keys_per_query(m, i, s) * 2.0;
    }
  }
  f.attention = 6.0 * attention;
  f.mtp = 6.0 * mtp * (3.0 * h + 2.0 * h * h);
  f.logits = 6.0 * h * static_cast<double>(padded_vocab_for_flops(m)) * (mtp + 1.0);
  return f;
}

IterationFlops model_flops(const Scenario& scenario) {
  IterationFlops out;
  out.per_token = model_flops_per_token(scenario.model, scenario.training.seq_length);
  out.tokens = static_cast<double>(scenario.training.global_batch) * scenario.training.seq_length;
  out.per_iteration = out.per_token.total() * out.tokens;
  return out;
}

}  // namespace moetwin
