// Megatron's custom pipeline layout strings: the two Megatron-Bridge DeepSeek-V3 recipe strings
// (shared/design/nvl72-and-infiniband.md section D), expanded and placed by hand, and every refusal.
#include "moetwin/scenario/pipeline_layout_string.hpp"

#include <gtest/gtest.h>

#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

std::vector<std::string> expand(const std::string& text) {
  return expand_pipeline_layout_string(text, {"s.toml", 9}, "parallelism.pipeline_layout");
}

PipelineLayout from_string(const std::string& model, int pp, int vpp, const std::string& text) {
  ParallelLayout p;
  p.pp = pp;
  p.vpp = vpp;
  p.pipeline_layout = text;
  return make_pipeline_layout(catalog().model(model), p, {"s.toml", 9}, "parallelism.pipeline_layout");
}

// The InputError message of `f`, or "" when it does not throw one.
template <class F>
std::string error_of(F f) {
  return test_support::error_of(f);
}

TEST(PipelineLayoutString, ExpandsSymbolsGroupsAndNestedRepeats) {
  EXPECT_EQ(expand("Et|(tt|)*2mL"), (std::vector<std::string>{"Et", "tt", "tt", "mL"}));
  EXPECT_EQ(expand("Et*4|(t*4|)*2tmL"), (std::vector<std::string>{"Etttt", "tttt", "tttt", "tmL"}));
  EXPECT_EQ(expand("E,t|((t|)*2t|)*2L"), (std::vector<std::string>{"Et", "t", "t", "t", "t", "t", "t", "L"}));
  EXPECT_EQ(expand("t*12").front(), "tttttttttttt");
}

TEST(PipelineLayoutString, MalformedStringsNameTheProblem) {
  const std::string where = "s.toml:9: parallelism.pipeline_layout: ";
  EXPECT_EQ(error_of([] { expand("Et|x|L"); }),
            where +
                "\"Et|x|L\": a Megatron pipeline layout string (E embedding, t decoder layer, m MTP "
                "layer, L loss, '|' between chunks, x*N and (...)*N repeats): only the characters E t m L | "
                "( ) * , and digits after '*' ('x' at position 4)");
  EXPECT_NE(error_of([] { expand("(tt|*3"); }).find("the '(' at position 1 closed by a ')'"),
            std::string::npos);
  EXPECT_NE(error_of([] { expand("tt)|L"); }).find("a ')' only after a '(' (position 3)"), std::string::npos);
  EXPECT_NE(error_of([] { expand("Et*|L"); }).find("a count of 1 or more after the '*' at position 3"),
            std::string::npos);
  EXPECT_NE(error_of([] { expand("Et*0|L"); }).find("a count of 1 or more"), std::string::npos);
  EXPECT_NE(error_of([] { expand("t*100001"); }).find("a repeat count of at most 100000"), std::string::npos);
  EXPECT_NE(error_of([] { expand(std::string(100000, '(')); }).find("groups nested at most 16 deep"),
            std::string::npos);
  EXPECT_NE(error_of([] { expand("((t*1000)*1000)*1000"); }).find("at most 1000000 symbols once expanded"),
            std::string::npos);
}

// Megatron-Bridge DeepSeek-V3 B200 (PP8 VP2): "Et*4|(t*4|)*14tmL" is the recipe rule's split: E+4D,
// 14 x 4D, 1D+MTP+Loss.
TEST(PipelineLayoutString, DeepSeekV3B200StringIsTheRecipeSplit) {
  const PipelineLayout s = from_string("deepseek-v3", 8, 2, "Et*4|(t*4|)*14tmL");
  EXPECT_EQ(s.rule, "megatron-layout-string");
  ParallelLayout p;
  p.pp = 8;
  p.vpp = 2;
  const PipelineLayout r = make_pipeline_layout(catalog().model("deepseek-v3"), p, {"s.toml", 9});
  ASSERT_EQ(r.rule, "deepseek-recipe");
  ASSERT_EQ(s.chunks.size(), r.chunks.size());
  for (std::size_t c = 0; c < s.chunks.size(); ++c) {
    EXPECT_EQ(s.chunks[c].stage, r.chunks[c].stage) << c;
    EXPECT_EQ(s.chunks[c].virtual_index, r.chunks[c].virtual_index) << c;
    EXPECT_EQ(s.chunks[c].first_layer, r.chunks[c].first_layer) << c;
    EXPECT_EQ(s.chunks[c].decoder_layers, r.chunks[c].decoder_layers) << c;
    EXPECT_EQ(s.chunks[c].embedding, r.chunks[c].embedding) << c;
    EXPECT_EQ(s.chunks[c].loss, r.chunks[c].loss) << c;
    EXPECT_EQ(s.chunks[c].mtp_layers, r.chunks[c].mtp_layers) << c;
  }
}

// Megatron-Bridge DeepSeek-V3 H100 (PP8 VP4, 32 chunks): "Et|(tt|)*30mL". No split rule makes it (61 layers
// on 32 chunks: not even, 61 + 2 is not a multiple of 32, ceil(61 / 32) = 2 leaves -1 for the last chunk).
// By hand: chunk 0 = E + layer 0 (stage 0, virtual 0); chunk c in 1..30 = layers 2c-1 and 2c; chunk 31 =
// MTP + loss without a decoder layer (stage 7, virtual 3).
TEST(PipelineLayoutString, DeepSeekV3H100StringEndsInAnMtpAndLossChunk) {
  ParallelLayout rules;
  rules.pp = 8;
  rules.vpp = 4;
  EXPECT_THROW(make_pipeline_layout(catalog().model("deepseek-v3"), rules, {"s.toml", 9}), InputError);

  const PipelineLayout l = from_string("deepseek-v3", 8, 4, "Et|(tt|)*30mL");
  ASSERT_EQ(l.chunks.size(), 32u);
  EXPECT_TRUE(l.chunk(0, 0).embedding);
  EXPECT_EQ(l.chunk(0, 0).decoder_layers, 1);
  EXPECT_EQ(l.chunk(1, 0).first_layer, 1);
  EXPECT_EQ(l.chunk(1, 0).decoder_layers, 2);
  EXPECT_EQ(l.chunk(0, 1).first_layer, 15);  // chunk 8: layers 15 and 16
  EXPECT_EQ(l.chunk(6, 3).first_layer, 59);  // chunk 30: layers 59 and 60
  const PipelineChunk& last = l.chunk(7, 3);
  EXPECT_EQ(last.decoder_layers, 0);
  EXPECT_EQ(last.mtp_layers, 1);
  EXPECT_TRUE(last.loss);
  EXPECT_EQ(last.first_layer, 61);
  EXPECT_EQ(l.decoder_layers_on_stage(0), 1 + 2 + 2 + 2);
  EXPECT_EQ(l.decoder_layers_on_stage(7), 2 + 2 + 2 + 0);
  EXPECT_EQ(describe(l).substr(0, 13), "E+1D, 2D, 2D,");
  EXPECT_EQ(describe(l).substr(describe(l).size() - 12), "2D, MTP+Loss");
}

TEST(PipelineLayoutString, LayoutsMegatronOrTheTwinCannotBuildAreRefused) {
  const auto error = [](const std::string& model, int pp, int vpp, const std::string& text) {
    return error_of([&] { from_string(model, pp, vpp, text); });
  };
  EXPECT_EQ(error("deepseek-v3", 8, 2, "Et|(tt|)*30mL"),
            "s.toml:9: parallelism.pipeline_layout: \"Et|(tt|)*30mL\": pp * vpp = 8 * 2 = 16 chunks "
            "separated by '|' (it names 32)");
  EXPECT_NE(error("deepseek-v3", 8, 4, "Et|(tt|)*29ttt|mL")
                .find("as many decoder layers 't' as deepseek-v3 has "
                      "(61; it names 62)"),
            std::string::npos);
  EXPECT_NE(error("deepseek-v3", 8, 4, "tE|(tt|)*30mL")
                .find("the embedding 'E' only as the first symbol of chunk 0"),
            std::string::npos);
  EXPECT_NE(error("deepseek-v3", 8, 4, "t|E(tt|)*30mL").find("the embedding 'E' only as the first symbol"),
            std::string::npos);
  EXPECT_NE(
      error("deepseek-v3", 8, 4, "Et|(tt|)*30m").find("the loss 'L' as the last symbol of the last chunk"),
      std::string::npos);
  EXPECT_NE(
      error("deepseek-v3", 8, 4, "EtL|(tt|)*30m").find("the loss 'L' only as the last symbol of the last"),
      std::string::npos);
  EXPECT_NE(error("deepseek-v3", 8, 4, "Et|m(tt|)*30L").find("MTP layers 'm' only in the last chunk"),
            std::string::npos);
  EXPECT_NE(error("deepseek-v3", 8, 4, "Et|(tt|)*30Lm").find("the loss 'L' only as the last symbol"),
            std::string::npos);
  EXPECT_NE(
      error("deepseek-v3", 8, 4, "Et|(tt|)*30mtL").find("decoder layers 't' before the chunk's MTP layers"),
      std::string::npos);
  EXPECT_NE(error("deepseek-v3", 8, 4, "Et|(tt|)*30L")
                .find("as many MTP layers 'm' as deepseek-v3 has (1; it "
                      "names 0)"),
            std::string::npos);
  EXPECT_NE(
      error("kimi-k2", 2, 1, "Et*30|t*31mL").find("as many MTP layers 'm' as kimi-k2 has (0; it names 1)"),
      std::string::npos);
  EXPECT_NE(
      error("deepseek-v3", 8, 4, "Et||(tt|)*29ttmL").find("no empty chunk (chunk 1 (\"\") holds no layer"),
      std::string::npos);
}

}  // namespace
}  // namespace moetwin
