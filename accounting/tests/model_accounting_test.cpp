#include "moetwin/accounting/model_accounting.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "moetwin/test_support/tiny_models.hpp"

namespace moetwin {
namespace {

using test_support::tiny_gqa;
using test_support::tiny_mla;

TEST(ModelAccounting, LayerKinds) {
  const ModelSpec m = tiny_mla();
  EXPECT_FALSE(layer_is_moe(m, 0));
  EXPECT_TRUE(layer_is_moe(m, 1));
  EXPECT_TRUE(mtp_is_moe(m));
  ModelSpec dense = tiny_gqa();
  dense.experts = 0;
  EXPECT_FALSE(layer_is_moe(dense, 1));
  EXPECT_FALSE(mtp_is_moe(dense));
}

TEST(ModelAccounting, VocabPadding) {
  const ModelSpec m = tiny_mla();
  EXPECT_EQ(padded_vocab_for_flops(m), 16);  // 10 -> multiple of 8
  EXPECT_EQ(padded_vocab(m, 1), 16);
  EXPECT_EQ(padded_vocab(m, 4), 32);  // multiple of 8 x 4
}

TEST(ModelAccounting, MlaLayerParamsByHand) {
  const LayerParams p = layer_params(tiny_mla());
  // norm 8 + q_down 8x4 + q_norm 4 + q_up 4x2x(3+1) + kv_down 8x(2+1) + kv_norm 2 + kv_up 2x2x(3+2) + o 2x2x8
  EXPECT_EQ(p.attention, 8 + 32 + 4 + 32 + 24 + 2 + 20 + 32);
  EXPECT_EQ(p.attention_tp_replicated, 8 + 32 + 4 + 24 + 2);
  EXPECT_EQ(p.dense_mlp, 3 * 8 * 16);
  EXPECT_EQ(p.routed_expert, 3 * 8 * 4);
  EXPECT_EQ(p.routed_experts, 4 * 96);
  EXPECT_EQ(p.shared_experts, 96);
  EXPECT_EQ(p.router, 32);
  EXPECT_EQ(mtp_extra_params(tiny_mla()), 3 * 8 + 2 * 64);
}

TEST(ModelAccounting, MlaModelParamsByHand) {
  const ModelSpec m = tiny_mla();
  const ParameterCounts c = count_parameters(m, 2);  // vocab padded to 16
  EXPECT_EQ(c.embedding, 128);
  EXPECT_EQ(c.output_layer, 128);
  EXPECT_EQ(c.attention, 2 * 154);
  EXPECT_EQ(c.dense_mlp, 8 + 384);
  EXPECT_EQ(c.routed_experts, 384);
  EXPECT_EQ(c.shared_experts, 96);
  EXPECT_EQ(c.router, 8 + 32);
  EXPECT_EQ(c.final_norm, 8);
  // MTP block: extras 152 + attention 154 + MoE MLP (norm 8, router 32, experts 384, shared 96).
  EXPECT_EQ(c.mtp, 152 + 154 + 520);
  EXPECT_EQ(c.mtp_routed_experts, 384);
  EXPECT_EQ(c.total(), 2310);
  // Routed experts 768 of which k / E = 2 / 4 are active.
  EXPECT_EQ(c.active(m), 2310 - 768 + 384);
}

TEST(ModelAccounting, GqaModelParamsByHand) {
  const ModelSpec m = tiny_gqa();
  EXPECT_EQ(layer_params(m).attention, 8 + 8 * (8 + 2 * 4) + 8 * 8);
  const ParameterCounts c = count_parameters(m, 1);
  EXPECT_EQ(c.total(), 128 + 128 + 2 * 200 + 2 * 384 + 2 * (8 + 32) + 8);
  EXPECT_EQ(c.active(m), 1512 - 768 + 384);
}

TEST(ModelAccounting, MlaFlopsByHand) {
  // seq 4. MLP: L_d' = 1, L_m' = 1 + M = 2: 6 x 8 x (3x16x1 + 3x2x4x2 + 3x4x2) = 5760.
  // Attention per layer: 4(8 + 2x4 + 1) + 2(8 + 2x5 + 1) + 8x1 + 2x2x8 + 4x2x4/2 + 4x2x2/2 = 170,
  //   x 6 x (L + M = 3) = 3060. MTP 6 (24 + 128) = 912. Logits 6 x 8 x 16 x 2 = 1536.
  const TokenFlops f = model_flops_per_token(tiny_mla(), 4);
  EXPECT_DOUBLE_EQ(f.mlp, 5760);
  EXPECT_DOUBLE_EQ(f.attention, 3060);
  EXPECT_DOUBLE_EQ(f.mtp, 912);
  EXPECT_DOUBLE_EQ(f.logits, 1536);
  EXPECT_DOUBLE_EQ(f.total(), 11268);
}

TEST(ModelAccounting, MlaWithoutQLoraAndMtpOnDenseLastLayer) {
  ModelSpec m = tiny_mla();
  m.q_lora_rank = 0;
  m.dense_layers = 2;  // both layers dense: the MTP layer counts as dense
  // MLP: 6 x 8 x 3 x 16 x (2 + 1) = 6912. Attention per layer: 8x2x4 + 38 + 8 + 32 + 16 + 8 = 166.
  const TokenFlops f = model_flops_per_token(m, 4);
  EXPECT_DOUBLE_EQ(f.mlp, 6912);
  EXPECT_DOUBLE_EQ(f.attention, 6.0 * 3 * 166);
}

TEST(ModelAccounting, GqaFlopsByHand) {
  // MLP 6x8x(3x2x4x2) = 2304. Attention per layer 8x16 + 8x4 + 8x8 = 224, x 6 x 2 = 2688. Logits 768.
  const TokenFlops f = model_flops_per_token(tiny_gqa(), 4);
  EXPECT_DOUBLE_EQ(f.mlp, 2304);
  EXPECT_DOUBLE_EQ(f.attention, 2688);
  EXPECT_DOUBLE_EQ(f.mtp, 0);
  EXPECT_DOUBLE_EQ(f.logits, 768);
  ModelSpec dense = tiny_gqa();
  dense.experts = 0;  // every layer a dense SwiGLU MLP: 6 x 8 x 3 x 16 x 2
  EXPECT_DOUBLE_EQ(model_flops_per_token(dense, 4).mlp, 4608);
}

TEST(ModelAccounting, PerIterationMultipliesTokens) {
  Scenario sc;
  sc.model = tiny_gqa();
  sc.training.global_batch = 3;
  sc.training.seq_length = 4;
  const IterationFlops f = model_flops(sc);
  EXPECT_DOUBLE_EQ(f.tokens, 12);
  EXPECT_DOUBLE_EQ(f.per_iteration, 5760.0 * 12);
}

// Megatron's model FLOPs (what it logs as TFLOP/s per GPU) count the math of the model, not how it is
// done: every precision recipe gives the same figure.
TEST(ModelAccounting, ModelFlopsDoNotDependOnPrecision) {
  Scenario sc;
  sc.model = tiny_gqa();
  sc.training.global_batch = 3;
  sc.training.seq_length = 4;
  const double bf16 = model_flops(sc).per_iteration;
  for (Precision p :
       {Precision::fp8_hybrid, Precision::fp8_current, Precision::fp8_blockwise, Precision::mxfp8}) {
    sc.training.precision = p;
    EXPECT_DOUBLE_EQ(model_flops(sc).per_iteration, bf16) << to_string(p);
  }
}

// The p5en proxy: Megatron-Core's model FLOPs for its arguments are 5.72193e15 per iteration (gbs 32, seq
// 4096), the figure shared/data/live-runs-p5en.csv converts its TFLOP/s with.
TEST(ModelAccounting, ReproducesTheP5enProxyFlops) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  Scenario sc;
  sc.model = c.model("uccl-dsv3-proxy");
  sc.training.global_batch = 32;
  sc.training.seq_length = 4096;
  EXPECT_NEAR(model_flops(sc).per_iteration / 5.72193e15, 1.0, 1e-4);
}

// shared/design/model-flops.md table (GFLOP/token at seq 4096), which reproduces the logged TFLOP/s.
TEST(ModelAccounting, CatalogModelsWithoutLiveRunsMatchTheirPublishedTotals) {
  // Total parameters as each model card states them (billions); ours count embeddings and, for GLM, the
  // MTP layer (the cards leave it out: +1.3% on GLM-4.5, +3% on GLM-4.5-Air).
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const std::vector<std::pair<std::string, double>> published = {
      {"mixtral-8x7b", 46.7},     {"mixtral-8x22b", 141.0},         {"deepseek-v2", 236.0},
      {"deepseek-v2-lite", 15.7}, {"qwen3-coder-480b-a35b", 480.0}, {"glm-4.5", 355.0},
      {"glm-4.5-air", 106.0}};
  for (const auto& [name, billions] : published) {
    const double total = static_cast<double>(count_parameters(c.model(name), 1).total()) / 1e9;
    EXPECT_NEAR(total / billions, 1.0, 0.035) << name << ": " << total << " B";
  }
}

TEST(ModelAccounting, ReproducesModelFlopsTable) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  EXPECT_NEAR(model_flops_per_token(c.model("deepseek-v3"), 4096).total() / 1e9, 260.0, 0.05);
  EXPECT_NEAR(model_flops_per_token(c.model("kimi-k2"), 4096).total() / 1e9, 204.5, 0.05);
  ModelSpec qwen = c.model("qwen3-235b-a22b");
  EXPECT_NEAR(model_flops_per_token(qwen, 4096).total() / 1e9, 148.0, 0.05);
  qwen.layers = 96;
  EXPECT_NEAR(model_flops_per_token(qwen, 4096).total() / 1e9, 151.1, 0.05);
  // Without its MTP layer DeepSeek-V3 comes out 4.1 % lower (model-flops.md).
  ModelSpec no_mtp = c.model("deepseek-v3");
  no_mtp.mtp_layers = 0;
  EXPECT_NEAR(model_flops_per_token(no_mtp, 4096).total() /
                  model_flops_per_token(c.model("deepseek-v3"), 4096).total(),
              1.0 - 0.041, 0.002);
}

// Published sizes: DeepSeek-V3 671B total / 37B active, plus a 14B MTP module on the model card (685B) that
// counts its own copy of the embedding and output head; Kimi-K2 "1T" / 32B; Qwen3-235B-A22B 235B / 22B.
TEST(ModelAccounting, ParameterCountsMatchPublishedSizes) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const ModelSpec& ds = c.model("deepseek-v3");
  const ParameterCounts d = count_parameters(ds, 1);
  EXPECT_NEAR(static_cast<double>(d.total() - d.mtp) / 1e9, 671, 1.0);
  EXPECT_NEAR(static_cast<double>(d.mtp + d.embedding + d.output_layer) / 1e9, 14, 0.6);
  EXPECT_NEAR(static_cast<double>(d.active(ds) - (d.mtp - d.mtp_routed_experts)) / 1e9, 37, 1.0);
  const ModelSpec& kimi = c.model("kimi-k2");
  const ParameterCounts k = count_parameters(kimi, 1);
  EXPECT_NEAR(static_cast<double>(k.total()) / 1e12, 1.0, 0.03);
  EXPECT_NEAR(static_cast<double>(k.active(kimi)) / 1e9, 32, 1.0);
  const ModelSpec& qwen = c.model("qwen3-235b-a22b");
  const ParameterCounts q = count_parameters(qwen, 1);
  EXPECT_NEAR(static_cast<double>(q.total()) / 1e9, 235, 1.0);
  EXPECT_NEAR(static_cast<double>(q.active(qwen)) / 1e9, 22, 0.5);
}

// Windowed layers: gpt-oss alternates, layer 0 windowed and layer 1 full; the keys per query meet the full
// causal s/2 at w = s; MTP layers (index >= layers) attend fully.
TEST(ModelAccounting, SlidingWindowKeysPerQuery) {
  ModelSpec m = tiny_gqa();
  m.layers = 4;
  m.sliding_window = 8;
  m.full_attention_every = 2;
  EXPECT_TRUE(layer_is_windowed(m, 0));
  EXPECT_FALSE(layer_is_windowed(m, 1));
  EXPECT_TRUE(layer_is_windowed(m, 2));
  EXPECT_FALSE(layer_is_windowed(m, 3));
  EXPECT_FALSE(layer_is_windowed(m, 4));
  EXPECT_DOUBLE_EQ(causal_keys_per_query(m, 0, 32), 8 - 64.0 / 64);  // w - w^2 / (2 s) = 7
  EXPECT_DOUBLE_EQ(causal_keys_per_query(m, 1, 32), 16);             // full: s / 2
  EXPECT_DOUBLE_EQ(causal_keys_per_query(m, 0, 8), 4);               // w = s: the band is the triangle
  EXPECT_DOUBLE_EQ(causal_keys_per_query(m, 0, 6), 3);               // w > s: full
  m.full_attention_every = 0;                                        // every layer windowed
  EXPECT_TRUE(layer_is_windowed(m, 3));
  m.sliding_window = 0;
  EXPECT_FALSE(layer_is_windowed(m, 0));
}

// GPT-OSS-120B at seq 4096 by model-flops.md's formula, the s/2 term of a windowed layer replaced by its
// band w - w^2/(2s) = 128 - 2 = 126 keys per query. h 2880, L 36 (18 windowed, 18 full), GQA n 64 g 8 c 64
// (q 4096, kv 512), E 128 top-4 gated experts f_e 2880, V 201088 (a multiple of 128).
//   MLP:         6 h (3 k f_e L)              = 6 x 2880 x 3 x 4 x 2880 x 36            = 21,499,084,800
//   projections: 6 L (h (q + 2 kv) + q h)     = 6 x 36 x 2880 x 9216                     =  5,733,089,280
//   core, full:  6 x 18 x q s                 = 6 x 18 x 4096 x 4096                     =  1,811,939,328
//   core, window: 6 x 18 x 2 q x 126          = 6 x 18 x 2 x 4096 x 126                  =    111,476,736
//   logits:      6 h V                        = 6 x 2880 x 201088                        =  3,474,800,640
//   total                                                                                = 32,630,390,784
// Counted as full attention on every layer (Megatron's formula unwindowed) it would be 34,330,853,376
// (+5.2%).
TEST(ModelAccounting, GptOss120bFlopsPerTokenByHand) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const ModelSpec& m = c.model("gpt-oss-120b");
  const TokenFlops f = model_flops_per_token(m, 4096);
  EXPECT_DOUBLE_EQ(f.mlp, 21499084800.0);
  EXPECT_DOUBLE_EQ(f.attention, 5733089280.0 + 1811939328.0 + 111476736.0);
  EXPECT_DOUBLE_EQ(f.logits, 3474800640.0);
  EXPECT_DOUBLE_EQ(f.mtp, 0);
  EXPECT_DOUBLE_EQ(f.total(), 32630390784.0);
  ModelSpec full = m;
  full.sliding_window = 0;
  full.full_attention_every = 0;
  EXPECT_DOUBLE_EQ(model_flops_per_token(full, 4096).total(), 34330853376.0);
}

// Model card totals (openai gpt-oss model card): 116.83 B total / 5.13 B active (120b), 20.91 B / 3.61 B
// (20b). The card's active count leaves the output layer (unembedding) out. Ours leave the linear-layer
// biases out (~40 M on 120b), so the totals are a little low. The sinks are 64 per layer.
TEST(ModelAccounting, GptOssParameterCountsMatchTheModelCard) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const ModelSpec& big = c.model("gpt-oss-120b");
  EXPECT_EQ(layer_params(big).attention_sinks, 64);
  // Per layer: norm 2880 + qkv 2880 x 5120 + out 4096 x 2880 + sinks 64.
  EXPECT_EQ(layer_params(big).attention, 2880 + 2880 * 5120 + 4096 * 2880 + 64);
  const ParameterCounts b = count_parameters(big, 1);
  EXPECT_EQ(b.total(), 116789050944);
  EXPECT_NEAR(static_cast<double>(b.total()) / 116.83e9, 1.0, 0.001);
  EXPECT_NEAR(static_cast<double>(b.active(big) - b.output_layer) / 5.13e9, 1.0, 0.01);
  const ModelSpec& small = c.model("gpt-oss-20b");
  const ParameterCounts s = count_parameters(small, 1);
  EXPECT_NEAR(static_cast<double>(s.total()) / 20.91e9, 1.0, 0.001);
  EXPECT_NEAR(static_cast<double>(s.active(small) - s.output_layer) / 3.61e9, 1.0, 0.01);
}

}  // namespace
}  // namespace moetwin
