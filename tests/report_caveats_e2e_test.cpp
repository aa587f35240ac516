// End-to-end: the caveats of a prediction survive into the report. `plan` and `recommend` write CSV with a
// comment header naming the profile (and the plan's deadline and HBM headroom); `moetwin report` renders
// both and its HTML carries, per row, the band, the novelty level and dimensions, the settling run and the
// margin uncertainty, and the profile; without a deadline it says nothing of one; a settling run's
// narrowed margin reads as a lower bound.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;

constexpr auto moetwin = &e2e::run_moetwin_as_given;

using ReportCaveats = e2e::FreshDirTest;

TEST_F(ReportCaveats, PlanAndRecommendHtmlCarryBandNoveltySettlingAndProfile) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const std::string profile = kSource + "/calibrate/profiles/fitted/live-fit.toml";
  const std::string plan_csv = (dir_ / "plan.csv").string();
  const std::string rec_csv = (dir_ / "rec.csv").string();
  // A small plan (Qwen3-30B on 1-2 p5en nodes: a new layout regime and scale to the fit) without a deadline.
  e2e::CliRun r = moetwin(
      "plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e9 --gbs 16 --max-nodes 2 "
      "--screen 1 --max-layouts 2 --threads 2 --profile " +
          profile + " --format csv --out " + plan_csv,
      dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string plan_text = read_text_file(plan_csv);
  EXPECT_EQ(plan_text.rfind("# moetwin_version: ", 0), 0u) << plan_text.substr(0, 200);
  EXPECT_NE(plan_text.find("\n# profile: " + profile), std::string::npos);
  EXPECT_NE(plan_text.find("\n# deadline_days: 0\n"), std::string::npos);
  // The default scenario at 16 nodes, mb 4: DeepEP over UCCL-EP and v2-GIN tie; the run that settles it.
  r = moetwin("recommend " + kSource + "/scenarios/default.toml --nodes 16 --mb 4 --threads 2 --profile " +
                  profile + " --format csv --out " + rec_csv,
              dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html_path = (dir_ / "r.html").string();
  r = moetwin("report " + plan_csv + " " + rec_csv + " --out " + html_path, dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string html = read_text_file(html_path);
  // Column names carry a break opportunity after each underscore; read them without it.
  for (std::size_t at; (at = html.find("<wbr>")) != std::string::npos;) html.erase(at, 5);
  // Per row: band, novelty level and dimensions, settling run, margin uncertainty, memory.
  for (const char* column : {"<th>predicted_lo_s</th>", "<th>predicted_hi_s</th>", "<th>novelty_level</th>",
                             "<th>novelty</th>", "<th>settle_with</th>", "<th>margin_uncertainty_pct</th>",
                             "<th>memory_gib</th>", "<th>within_hbm_headroom</th>"})
    EXPECT_NE(html.find(column), std::string::npos) << column;
  EXPECT_NE(html.find("scale=2 nodes"), std::string::npos);  // the plan's novelty dimensions
  // ... and in the summary (p5en and Qwen3-30B are in the fit; an EP span of one node and 2 nodes are not,
  // nor p5en with DeepEP over NVSHMEM or the H200 at bf16: combinations never fitted together, issue 53)
  EXPECT_NE(
      html.find("novelty configuration (new to the fit: layout=ep-nodes1;scale=2 nodes;interaction=instance "
                "x dispatcher p5en.48xlarge x deepep-nvshmem;interaction=gpu x precision H200-SXM x bf16)"),
      std::string::npos);
  EXPECT_NE(html.find("Settling run: measure"), std::string::npos);
  EXPECT_NE(html.find("a lower bound"), std::string::npos);
  // The profile, from the CSV comment headers, in each input's summary and in the context.
  EXPECT_NE(html.find("Profile: " + profile), std::string::npos);
  EXPECT_EQ(html.find("profile not recorded"), std::string::npos);
  EXPECT_EQ(html.find("<th>profile</th><td class=\"text\">not recorded"), std::string::npos);
  EXPECT_NE(html.find("<th>profile</th><td class=\"text\">" + profile), std::string::npos);
  // No deadline was given: no deadline verdict, no deadline column.
  EXPECT_EQ(html.find("meets the deadline"), std::string::npos);
  EXPECT_EQ(html.find("<th>meets_deadline</th>"), std::string::npos);
}

TEST_F(ReportCaveats, PlanTextQuotesNarrowingAsALowerBoundAndShowsMemory) {
  const e2e::CliRun r = moetwin(
      "plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e9 --gbs 16 --max-nodes 2 --screen 1 "
      "--max-layouts 2 --threads 2 --profile none",
      dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("memory      "), std::string::npos) << r.out;  // the memory line of the summary
  EXPECT_NE(r.out.find("options must leave 10% of HBM free"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n    memory: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" memory "), std::string::npos) << r.out;  // the options tables' column
  for (std::size_t at = r.out.find("% -> "); at != std::string::npos; at = r.out.find("% -> ", at + 1))
    EXPECT_NE(r.out.substr(at, 80).find("(a lower bound"), std::string::npos) << r.out.substr(at, 80);
  EXPECT_EQ(
      moetwin("plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e9 --hbm-headroom 0.9", dir_)
          .code,
      2);
}

}  // namespace
}  // namespace moetwin
