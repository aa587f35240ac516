// GEMM shapes per model (dimensions from catalog/data/models.toml). Linear layers: y = x W^T with
// x [tokens, in], W [out, in]: forward m=tokens n=out k=in; backward dgrad m=tokens n=in k=out;
// wgrad m=out n=in k=tokens.
#include "gemm_shapes.hpp"

namespace moetwin::gpu {

namespace {

struct Linear {
  const char* op;
  long long out;
  long long in;
};

void add_linear(std::vector<GemmShape>& shapes, const std::string& model, const Linear& l, long long tokens,
                bool backward) {
  const std::string base = model + "." + l.op;
  const std::string t = ".m" + std::to_string(tokens);
  shapes.push_back({base + ".fwd" + t, "gemm", model, tokens, l.out, l.in, 1});
  if (!backward) return;
  shapes.push_back({base + ".dgrad" + t, "gemm", model, tokens, l.in, l.out, 1});
  shapes.push_back({base + ".wgrad" + t, "gemm", model, l.out, l.in, tokens, 1});
}

// Experts of one rank, each with `per_expert` tokens: fc1 (gate+up fused) and fc2, forward.
void add_experts(std::vector<GemmShape>& shapes, const std::string& model, long long hidden, long long ffn,
                 long long local_experts, const std::vector<long long>& per_expert) {
  for (const long long m : per_expert) {
    const std::string t = ".m" + std::to_string(m);
    shapes.push_back(
        {model + ".expert_fc1.fwd" + t, "grouped_gemm", model, m, 2 * ffn, hidden, local_experts});
    shapes.push_back({model + ".expert_fc2.fwd" + t, "grouped_gemm", model, m, hidden, ffn, local_experts});
    shapes.push_back(
        {model + ".expert_fc1.dgrad" + t, "grouped_gemm", model, m, hidden, 2 * ffn, local_experts});
    shapes.push_back({model + ".expert_fc2.wgrad" + t, "grouped_gemm", model, hidden, ffn, m, local_experts});
  }
}

// Attention core as batched GEMMs over heads: QK^T (seq x seq x qk_dim) and PV (seq x v_dim x seq).
void add_attention(std::vector<GemmShape>& shapes, const std::string& model, long long heads,
                   long long qk_dim, long long v_dim, long long seq) {
  const std::string s = ".s" + std::to_string(seq);
  shapes.push_back({model + ".attn_qk" + s, "attention", model, seq, seq, qk_dim, heads});
  shapes.push_back({model + ".attn_pv" + s, "attention", model, seq, v_dim, seq, heads});
}

}  // namespace

std::vector<GemmShape> calibration_gemm_shapes(bool quick) {
  std::vector<GemmShape> shapes;
  for (const long long s : {256LL, 512LL, 1024LL, 2048LL, 3072LL, 4096LL, 6144LL, 8192LL, 12288LL, 16384LL}) {
    if (quick && s != 1024 && s != 8192) continue;
    shapes.push_back({"square.m" + std::to_string(s), "gemm", "square", s, s, s, 1});
  }
  // Tokens per linear-layer GEMM: one micro-batch of sequence 4096 at micro-batch 1 and 4 (with sequence
  // parallelism the TP group's GEMMs see the whole micro-batch). The live runs train at both; with only
  // 4096 the wgrad curve (k = tokens) had no point above k = 4096 and none of the largest GEMMs.
  const std::vector<long long> linear_tokens =
      quick ? std::vector<long long>{4096} : std::vector<long long>{4096, 16384};
  // Attention core at sequence 2048, 4096 and 8192: with one length per model the curves had a single
  // point per head dimension, and a model's QK^T (k = head dim 128 or 192) was predicted from another's.
  const std::vector<long long> attention_seq =
      quick ? std::vector<long long>{4096} : std::vector<long long>{2048, 4096, 8192};
  const std::vector<long long> per_expert =
      quick ? std::vector<long long>{256, 2048} : std::vector<long long>{64, 128, 256, 512, 1024, 2048, 4096};

  // deepseek-v3: hidden 7168, MLA (q_lora 1536, kv_lora 512, 128 heads, qk 128 + rope 64, v 128),
  // dense FFN 18432 (first 3 layers), 256 experts of 2048 (8 per rank at EP 32), shared expert 2048.
  for (const Linear& l :
       {Linear{"mla_q_a", 1536, 7168}, Linear{"mla_q_b", 128 * 192, 1536}, Linear{"mla_kv_a", 512 + 64, 7168},
        Linear{"mla_kv_b", 128 * 256, 512}, Linear{"attn_out", 7168, 128 * 128},
        Linear{"dense_fc1", 2 * 18432, 7168}, Linear{"dense_fc2", 7168, 18432},
        Linear{"shared_fc1", 2 * 2048, 7168}, Linear{"shared_fc2", 7168, 2048}}) {
    for (const long long tokens : linear_tokens) add_linear(shapes, "deepseek-v3", l, tokens, !quick);
  }
  add_experts(shapes, "deepseek-v3", 7168, 2048, 8, per_expert);
  for (const long long seq : attention_seq) add_attention(shapes, "deepseek-v3", 128, 192, 128, seq);

  // qwen3-235b-a22b: hidden 4096, GQA 64 heads / 4 KV groups of 128, 128 experts of 1536 (8 per rank).
  for (const Linear& l : {Linear{"qkv", (64 + 2 * 4) * 128, 4096}, Linear{"attn_out", 4096, 64 * 128}}) {
    for (const long long tokens : linear_tokens) add_linear(shapes, "qwen3-235b-a22b", l, tokens, !quick);
  }
  add_experts(shapes, "qwen3-235b-a22b", 4096, 1536, 8, per_expert);
  for (const long long seq : attention_seq) add_attention(shapes, "qwen3-235b-a22b", 64, 128, 128, seq);

  // qwen3-30b-a3b: hidden 2048, 32 heads / 4 KV groups of 128, 128 experts of 768 (16 per rank).
  for (const Linear& l : {Linear{"qkv", (32 + 2 * 4) * 128, 2048}, Linear{"attn_out", 2048, 32 * 128}}) {
    for (const long long tokens : linear_tokens) add_linear(shapes, "qwen3-30b-a3b", l, tokens, !quick);
  }
  add_experts(shapes, "qwen3-30b-a3b", 2048, 768, 16, per_expert);
  if (!quick) {
    for (const long long seq : attention_seq) add_attention(shapes, "qwen3-30b-a3b", 32, 128, 128, seq);
  }
  return shapes;
}

GemmShape rounded_dims(const GemmShape& shape, long long multiple) {
  const auto up = [multiple](long long x) { return (x + multiple - 1) / multiple * multiple; };
  GemmShape out = shape;
  out.m = up(shape.m);
  out.n = up(shape.n);
  out.k = up(shape.k);
  return out;
}

}  // namespace moetwin::gpu
