#include "moetwin/reports/inspect_report.hpp"

#include <gtest/gtest.h>

#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_scenario.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

TEST(InspectReport, InterleavedDeepSeekStagesAndChunks) {
  // DeepSeek-V3 on pp 8, vpp 2: E+4D, 14 x 4D, 1D+MTP+Loss (model-flops.md), two chunks per stage.
  const Scenario s = test_support::repo_scenario("scenarios/live/dsv3-b300-32n-20260601.toml");
  const Inspection in = inspect_scenario(s, {"dsv3.toml", 0});
  const ResultTable stages = stage_table(in);
  ASSERT_EQ(stages.rows.size(), 8u);
  EXPECT_EQ(stages.rows[0][stages.column("chunks")].text, "E+4D | 4D");
  EXPECT_EQ(stages.rows[7][stages.column("chunks")].text, "4D | 1D+MTP+Loss");
  // Stage 0 holds (pp - 1) x 2 + (vpp - 1) x pp + 1 = 23 chunk-microbatches (16 microbatches x 2 chunks).
  EXPECT_EQ(stages.rows[0][stages.column("in_flight")].text, "23");
  EXPECT_EQ(in.flops.per_iteration, in.flops.per_token.total() * 256 * 4096);
  EXPECT_TRUE(in.memory.fits);

  const ResultTable row = inspect_scenario_table(s, in);
  ASSERT_EQ(row.rows.size(), 1u);
  EXPECT_EQ(row.rows[0][row.column("vpp")].text, "2");
  EXPECT_EQ(row.rows[0][row.column("fits")].text, "true");
  EXPECT_EQ(row.rows[0][row.column("flops_per_token")].text, "259992950784");
  EXPECT_EQ(row.rows[0][row.column("pipeline_layout")].text.rfind("E+4D, 4D, ", 0), 0u);

  const std::string text = render_inspect_text(s, in);
  EXPECT_NE(text.find("260.0 GFLOP/token"), std::string::npos) << text;
  EXPECT_NE(text.find(": fits\n"), std::string::npos) << text;
}

TEST(InspectReport, KimiOnP5SaysDoesNotFit) {
  const Scenario s = test_support::repo_scenario("scenarios/examples/kimi-k2-p5-32n.toml");
  const Inspection in = inspect_scenario(s, {"kimi.toml", 0});
  const std::string text = render_inspect_text(s, in);
  EXPECT_NE(text.find("DOES NOT FIT"), std::string::npos) << text;
  EXPECT_NE(text.find("E+8D, 8D, 8D, 8D, 8D, 8D, 8D, 5D+Loss"), std::string::npos) << text;
  EXPECT_EQ(render_inspect_text(s, in), text);  // deterministic
}

}  // namespace
}  // namespace moetwin
