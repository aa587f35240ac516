// A Megatron pipeline layout string in a replay: the string that names the split rule's chunks replays
// identically to the rule, and a string that moves a decoder layer moves its ops to the stage it names.
#include <gtest/gtest.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// DeepSeek-V3 cut to 7 decoder layers (3 dense, 4 MoE) and its MTP layer, TP2 PP2 VP2 EP4 DP2 on one
// p5en node, 4 microbatches; `layout` empty: the split rules.
Scenario dsv3(const std::string& layout) {
  std::string t =
      "name = \"t\"\n[model]\nname = \"deepseek-v3\"\nlayers = 7\n[cluster]\ninstance = \"p5en.48xlarge\"\n"
      "nodes = 1\n[parallelism]\ntp = 2\npp = 2\nvpp = 2\nep = 4\ndp = 2\n";
  if (!layout.empty()) t += "pipeline_layout = \"" + layout + "\"\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\n[dispatcher]\nname = "
       "\"nccl-alltoall\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

// Ops labelled `label` in the program of `rank`.
int count_labelled(const Prediction& p, int rank, const std::string& label) {
  const Workload& w = p.built.workload;
  const Program& prog = w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(rank)])];
  int n = 0;
  for (const OpSpec& op : prog.ops()) n += prog.labels()[static_cast<std::size_t>(op.label)] == label;
  return n;
}

TEST(PipelineLayoutStringReplay, TheRuleSplitWrittenAsAStringReplaysIdentically) {
  // The recipe rule splits 7 layers over 4 chunks as 2, 2, 2, 1 + MTP + loss.
  const Prediction rule = predict(dsv3(""));
  ASSERT_EQ(rule.built.layout.rule, "deepseek-recipe");
  const Prediction string = predict(dsv3("Ett|tt|tt|tmL"));
  EXPECT_EQ(string.built.layout.rule, "megatron-layout-string");
  EXPECT_EQ(string.iteration_s, rule.iteration_s);
  EXPECT_EQ(string.engine.iteration, rule.engine.iteration);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(string.engine.ranks[static_cast<std::size_t>(r)].ops_run,
              rule.engine.ranks[static_cast<std::size_t>(r)].ops_run)
        << r;
  }
}

TEST(PipelineLayoutStringReplay, AMovedLayerRunsOnTheStageTheStringNames) {
  // "Et|tt|tt|ttmL": 1, 2, 2, 2 + MTP + loss. Stage 0 holds chunks 0 and 2 (1 + 2 = 3 layers, one fewer than
  // the rule's 2 + 2), stage 1 chunks 1 and 3 (2 + 2 = 4, one more than the rule's 2 + 1): per microbatch
  // one decoder layer's forward moves from stage 0 to stage 1 (ranks 0-3 are stage 0, 4-7 stage 1).
  const Prediction rule = predict(dsv3(""));
  const Prediction moved = predict(dsv3("Et|tt|tt|ttmL"));
  const int microbatches = 4;
  const std::string label = "attn.out_proj";  // forward only; MLA has no attn.qkv
  ASSERT_GT(count_labelled(rule, 0, label), 0);
  EXPECT_EQ(count_labelled(moved, 0, label), count_labelled(rule, 0, label) - microbatches);
  EXPECT_EQ(count_labelled(moved, 4, label), count_labelled(rule, 4, label) + microbatches);
  EXPECT_NE(moved.iteration_s, rule.iteration_s);
  EXPECT_EQ(predict(dsv3("Et|tt|tt|ttmL")).iteration_s, moved.iteration_s);  // deterministic
}

TEST(PipelineLayoutStringReplay, AStringTheScenarioCannotUseNamesItsKey) {
  try {
    dsv3("Et|tt|tt|tt|L");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "test.toml:14: parallelism.pipeline_layout: \"Et|tt|tt|tt|L\": pp * vpp = 2 * 2 = 4 chunks separated "
        "by '|' (it names 5)");
  }
}

}  // namespace
}  // namespace moetwin
