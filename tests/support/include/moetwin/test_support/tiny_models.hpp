// Tiny models for hand-checked accounting tests: every number small enough to work out on paper (the
// tests' comments show the arithmetic). Shared by the FLOPs/parameter and the memory tests, and any test
// that wants a model small enough to check by hand (needs catalog/).
#pragma once

#include "moetwin/catalog/catalog.hpp"

namespace moetwin::test_support {

// Tiny MLA model: h 8, 2 heads, q-LoRA 4, kv-LoRA 2, d_qk 3, d_r 1, d_v 2; one dense layer then one MoE
// layer (4 experts of f_e 4, top-2, shared f_s 4); one MTP layer.
inline ModelSpec tiny_mla() {
  ModelSpec m;
  m.name = "tiny-mla";
  m.layers = 2;
  m.dense_layers = 1;
  m.hidden = 8;
  m.ffn_hidden = 16;
  m.attention = AttentionKind::mla;
  m.heads = 2;
  m.q_lora_rank = 4;
  m.kv_lora_rank = 2;
  m.qk_head_dim = 3;
  m.qk_rope_dim = 1;
  m.v_head_dim = 2;
  m.experts = 4;
  m.expert_ffn_hidden = 4;
  m.shared_ffn_hidden = 4;
  m.top_k = 2;
  m.vocab = 10;
  m.vocab_pad_multiple = 8;
  m.mtp_layers = 1;
  return m;
}

// Tiny GQA MoE model: h 8, 2 query heads of 4 (q 8), 1 KV group (kv 4), 4 experts of f_e 4, top-2, no
// dense layers.
inline ModelSpec tiny_gqa() {
  ModelSpec m;
  m.name = "tiny-gqa";
  m.layers = 2;
  m.dense_layers = 0;
  m.hidden = 8;
  m.ffn_hidden = 16;
  m.attention = AttentionKind::gqa;
  m.heads = 2;
  m.query_groups = 1;
  m.head_dim = 4;
  m.experts = 4;
  m.expert_ffn_hidden = 4;
  m.top_k = 2;
  m.vocab = 10;
  m.vocab_pad_multiple = 8;
  return m;
}

}  // namespace moetwin::test_support
