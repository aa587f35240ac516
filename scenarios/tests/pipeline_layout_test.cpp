// Pipeline layouts against the table in shared/design/model-flops.md (Megatron-Bridge DeepSeek-V3 recipe)
// and Megatron's embedding/loss-accounted split for qwen3-235b.
#include "moetwin/scenario/pipeline_layout.hpp"

#include <gtest/gtest.h>

#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

PipelineLayout layout(const std::string& model, int layers, int pp, int vpp) {
  ModelSpec m = catalog().model(model);
  m.layers = layers;
  ParallelLayout p;
  p.pp = pp;
  p.vpp = vpp;
  return make_pipeline_layout(m, p, {"test.toml", 7}, "model.layers");
}

std::vector<int> per_chunk(const PipelineLayout& l) {
  std::vector<int> out;
  for (const auto& c : l.chunks) out.push_back(c.decoder_layers);
  return out;
}

TEST(PipelineLayout, DeepSeekV3Pp4) {
  const PipelineLayout l = layout("deepseek-v3", 61, 4, 1);
  EXPECT_EQ(l.rule, "deepseek-recipe");
  EXPECT_EQ(describe(l), "E+16D, 16D, 16D, 13D+MTP+Loss");
  EXPECT_EQ(per_chunk(l), (std::vector<int>{16, 16, 16, 13}));
  EXPECT_EQ(l.chunks[3].first_layer, 48);
  EXPECT_EQ(l.chunks[3].mtp_layers, 1);
  EXPECT_TRUE(l.chunks[0].embedding);
  EXPECT_FALSE(l.chunks[0].loss);
  EXPECT_TRUE(l.chunks[3].loss);
  EXPECT_EQ(l.decoder_layers_on_stage(3), 13);
}

TEST(PipelineLayout, DeepSeekV3Pp8) {
  const PipelineLayout l = layout("deepseek-v3", 61, 8, 1);
  EXPECT_EQ(l.rule, "deepseek-recipe");
  EXPECT_EQ(describe(l), "E+8D, 8D, 8D, 8D, 8D, 8D, 8D, 5D+MTP+Loss");
  EXPECT_EQ(l.chunks[7].first_layer, 56);
}

TEST(PipelineLayout, DeepSeekV3Pp4Vpp2IsThePp8ChunksTwoPerStage) {
  const PipelineLayout l = layout("deepseek-v3", 61, 4, 2);
  EXPECT_EQ(l.rule, "deepseek-recipe");
  EXPECT_EQ(describe(l), "E+8D, 8D, 8D, 8D, 8D, 8D, 8D, 5D+MTP+Loss");
  // Virtual pipeline order: stage 0 holds chunks 0 and 4, stage 3 chunks 3 and 7.
  EXPECT_EQ(l.chunk(0, 1).first_layer, 32);
  EXPECT_EQ(l.chunk(3, 0).first_layer, 24);
  EXPECT_EQ(l.chunk(3, 1).decoder_layers, 5);
  EXPECT_TRUE(l.chunk(3, 1).loss);
  EXPECT_EQ(l.chunk(3, 1).stage, 3);
  EXPECT_EQ(l.chunk(3, 1).virtual_index, 1);
  EXPECT_EQ(l.decoder_layers_on_stage(0), 16);
  EXPECT_EQ(l.decoder_layers_on_stage(3), 13);
}

TEST(PipelineLayout, DeepSeekV3Pp8Vpp2) {
  const PipelineLayout l = layout("deepseek-v3", 61, 8, 2);
  EXPECT_EQ(l.rule, "deepseek-recipe");
  EXPECT_EQ(describe(l), "E+4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 1D+MTP+Loss");
  EXPECT_EQ(l.decoder_layers_on_stage(0), 8);
  EXPECT_EQ(l.decoder_layers_on_stage(7), 5);
  EXPECT_EQ(l.chunk(7, 1).first_layer, 60);
}

TEST(PipelineLayout, DeepSeekV3Pp16) {
  const PipelineLayout l = layout("deepseek-v3", 61, 16, 1);
  EXPECT_EQ(l.rule, "deepseek-recipe");
  EXPECT_EQ(describe(l), "E+4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 1D+MTP+Loss");
  EXPECT_EQ(l.decoder_layers_on_stage(15), 1);
}

TEST(PipelineLayout, KimiK2HasNoMtp) {
  const PipelineLayout l = layout("kimi-k2", 61, 8, 2);
  EXPECT_EQ(describe(l), "E+4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 4D, 1D+Loss");
  EXPECT_EQ(l.chunks.back().mtp_layers, 0);
}

TEST(PipelineLayout, Qwen3EmbeddingAndLossAccounted) {
  const PipelineLayout l = layout("qwen3-235b-a22b", 94, 4, 1);
  EXPECT_EQ(l.rule, "embedding-and-loss-accounted");
  EXPECT_EQ(per_chunk(l), (std::vector<int>{23, 24, 24, 23}));
  EXPECT_EQ(describe(l), "E+23D, 24D, 24D, 23D+Loss");
  EXPECT_EQ(l.chunks[2].first_layer, 47);
}

TEST(PipelineLayout, Qwen3EvenSplits) {
  const PipelineLayout pp2 = layout("qwen3-235b-a22b", 94, 2, 1);
  EXPECT_EQ(pp2.rule, "even");
  EXPECT_EQ(per_chunk(pp2), (std::vector<int>{47, 47}));
  const PipelineLayout pp1 = layout("qwen3-235b-a22b", 94, 1, 1);
  EXPECT_EQ(describe(pp1), "E+94D+Loss");
  // The overlap cells build 96 layers so that pp * vpp divides them.
  const PipelineLayout pp2v2 = layout("qwen3-235b-a22b", 96, 2, 2);
  EXPECT_EQ(pp2v2.rule, "even");
  EXPECT_EQ(per_chunk(pp2v2), (std::vector<int>{24, 24, 24, 24}));
  EXPECT_EQ(pp2v2.decoder_layers_on_stage(1), 48);
  const PipelineLayout pp4v2 = layout("qwen3-235b-a22b", 96, 4, 2);
  EXPECT_EQ(per_chunk(pp4v2), (std::vector<int>(8, 12)));
}

TEST(PipelineLayout, Qwen3NinetyFourOnEightChunks) {
  // 94 % 8 = 6, 96 % 8 = 0: embedding and loss accounted, 11 + 6 * 12 + 11.
  const PipelineLayout l = layout("qwen3-235b-a22b", 94, 4, 2);
  EXPECT_EQ(l.rule, "embedding-and-loss-accounted");
  EXPECT_EQ(per_chunk(l), (std::vector<int>{11, 12, 12, 12, 12, 12, 12, 11}));
  EXPECT_EQ(l.decoder_layers_on_stage(0), 23);
  EXPECT_EQ(l.decoder_layers_on_stage(3), 23);
}

TEST(PipelineLayout, ImpossibleSplitNamesTheRules) {
  try {
    layout("qwen3-30b-a3b", 9, 4, 1);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "test.toml:7: model.layers: 9: a layer count that splits over pp * vpp = 4 * 1 = 4 chunks: a "
        "multiple of 4 (even), or 4 * n - 2 (embedding and loss accounted), or ceil(9 / 4) = 3 per "
        "chunk leaving >= 1 for the last (DeepSeek recipe; it leaves 0)");
  }
  EXPECT_THROW(layout("qwen3-30b-a3b", 3, 4, 1), InputError);
}

TEST(PipelineLayout, Llama405bOnPp16Vpp8HasAnEmbeddingOnlyAndALossOnlyChunk) {
  // NVIDIA's GB200 405B MXFP8 rows: 126 layers, PP16 VPP8 = 128 chunks. 126 % 128 != 0 (not even);
  // Megatron-Core counts the embedding and the loss as one slot each: 128 slots / 128 chunks = 1 slot per
  // chunk. Chunk 0 (stage 0, virtual 0) gives its slot to the embedding: 0 decoder layers. Chunks 1 .. 126
  // hold decoder layer c - 1 each. Chunk 127 (stage 15, virtual 7) gives its slot to the loss: 0 layers.
  const PipelineLayout l = layout("llama3.1-405b", 126, 16, 8);
  EXPECT_EQ(l.rule, "embedding-and-loss-accounted");
  ASSERT_EQ(l.chunks.size(), 128u);
  std::vector<int> expected(128, 1);
  expected.front() = 0;
  expected.back() = 0;
  EXPECT_EQ(per_chunk(l), expected);
  const PipelineChunk& first = l.chunk(0, 0);
  EXPECT_TRUE(first.embedding);
  EXPECT_FALSE(first.loss);
  EXPECT_EQ(first.decoder_layers, 0);
  const PipelineChunk& last = l.chunk(15, 7);
  EXPECT_TRUE(last.loss);
  EXPECT_FALSE(last.embedding);
  EXPECT_EQ(last.decoder_layers, 0);
  EXPECT_EQ(last.mtp_layers, 0);
  // Chunk 1 (stage 1, virtual 0) holds layer 0; chunk 16 (stage 0, virtual 1) layer 15; chunk 126
  // (stage 14, virtual 7) the last layer, 125.
  EXPECT_EQ(l.chunk(1, 0).first_layer, 0);
  EXPECT_EQ(l.chunk(1, 0).decoder_layers, 1);
  EXPECT_EQ(l.chunk(0, 1).first_layer, 15);
  EXPECT_EQ(l.chunk(14, 7).first_layer, 125);
  EXPECT_EQ(l.chunk(14, 7).decoder_layers, 1);
  // Stage 0 and stage 15 hold 7 decoder layers over their 8 chunks, the 14 others 8.
  EXPECT_EQ(l.decoder_layers_on_stage(0), 7);
  EXPECT_EQ(l.decoder_layers_on_stage(15), 7);
  for (int s = 1; s < 15; ++s) EXPECT_EQ(l.decoder_layers_on_stage(s), 8) << "stage " << s;
  const std::string d = describe(l);
  EXPECT_EQ(d.substr(0, 9), "E, 1D, 1D");
  EXPECT_EQ(d.substr(d.size() - 12), "1D, 1D, Loss");
}

TEST(PipelineLayout, TwoLayersOnFourChunksLeaveTheEndsToEmbeddingAndLoss) {
  // (2 + 2) / 4 = 1 slot per chunk: E, 1D, 1D, Loss (an error before the empty-chunk rule).
  const PipelineLayout l = layout("qwen3-30b-a3b", 2, 4, 1);
  EXPECT_EQ(l.rule, "embedding-and-loss-accounted");
  EXPECT_EQ(describe(l), "E, 1D, 1D, Loss");
  EXPECT_EQ(l.chunks[2].first_layer, 1);
}

TEST(PipelineLayout, ChunkOutOfRangeIsALogicError) {
  const PipelineLayout l = layout("deepseek-v3", 61, 4, 1);
  EXPECT_THROW((void)l.chunk(4, 0), std::logic_error);
  EXPECT_THROW((void)l.chunk(0, 1), std::logic_error);
}

}  // namespace
}  // namespace moetwin
