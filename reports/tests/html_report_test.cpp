#include "moetwin/reports/html_report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

std::string fixture(const std::string& name) {
  return std::string(MOETWIN_SOURCE_DIR) + "/reports/tests/data/" + name;
}

std::vector<ReportInput> all_fixtures() {
  std::vector<ReportInput> in;
  for (const char* f : {"recommend.csv", "plan.csv", "validate.csv", "sweep.csv"})
    in.push_back(load_report_input(fixture(f)));
  return in;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  std::string line;
  while (std::getline(s, line)) out.push_back(line);
  return out;
}

TEST(HtmlReport, EscapeAndBase64) {
  EXPECT_EQ(html_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");  // RFC 4648 test vectors
}

TEST(HtmlReport, SummaryLines) {
  const auto in = all_fixtures();
  const auto plan = summary_lines(in[1]);
  ASSERT_GE(plan.size(), 3u);
  EXPECT_EQ(plan[0], "4 options predicted, 3 on the Pareto front.");
  EXPECT_EQ(
      plan[1],
      "Recommended: 32 nodes, tp8 pp8 vpp1 ep32 dp4 mb1 recompute full, nccl-alltoall: 17.5 days (11.667 to "
      "35.0), 13440.0 node-hours, USD 1344000.");
  EXPECT_EQ(plan[2], "Uncertainty: 80% band 4.667 to 14.0 s per iteration.");
  EXPECT_EQ(plan[3], "Memory: 150.00 of 268.22 GiB per GPU.");
  EXPECT_EQ(plan[4], "It meets the deadline (central estimate); the slow end of the band does not.");
  const auto validate = summary_lines(in[2]);
  EXPECT_EQ(validate[0], "4 runs: median |error| 10.0%; within 10%: 2 of 4, within 20%: 3 of 4.");
  EXPECT_EQ(validate[1], "Worst: c2 nccl-alltoall (25.0%).");
  const auto sweep = summary_lines(in[3]);
  EXPECT_EQ(sweep[0], "5 points: invalid 1; ok 4;");
  const auto rec = summary_lines(in[0]);
  ASSERT_EQ(rec.size(), 3u);
  EXPECT_EQ(rec[2],
            "kimi-k2 on 32 x p6-b300.48xlarge, mb 1: deepep-uccl (2.5 s), ahead by 20.00%, within the "
            "uncertainty. 80% band 2.2 to 2.9 s per iteration.");
}

TEST(HtmlReport, RecommendSummaryListsTiesAndDispatchersBehind) {
  // recommend output since 2026-12-01: each dispatcher's lag behind the point's winner and whether it is
  // beyond the margin uncertainty; an invalid row of the point is left out.
  const auto rec = summary_lines(load_report_input(fixture("recommend-ties.csv")));
  ASSERT_EQ(rec.size(), 2u);
  EXPECT_EQ(rec[0],
            "deepseek-v3 on 8 x p6-b300.48xlarge, mb 4: deepep-uccl (19.75 s); tied within the uncertainty "
            "(margin uncertainty 23.51%): deepep-nvshmem +7.13%, deepep-v2-gin +2.31%; behind beyond it: "
            "nccl-alltoall +37.53%. 80% band 16.71 to 23.32 s per iteration.");
  EXPECT_EQ(
      rec[1],
      "deepseek-v3 on 16 x p6-b300.48xlarge, mb 4: deepep-uccl (11.22 s); tied within the uncertainty "
      "(margin uncertainty 23.51%): none; behind beyond it: nccl-alltoall +37.43%. 80% band 9.5 to 13.25 s "
      "per iteration.");
}

TEST(HtmlReport, FigureList) {
  const auto figs = report_figures(all_fixtures());
  std::vector<std::string> ids;
  for (const auto& f : figs) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"nodes-1-1", "nodes-4-1", "breakdown-1", "breakdown-2",
                                           "breakdown-4", "scatter-3", "pareto-2"}));
  // Scripts are deterministic: fixed terminal (a breakdown taller by its longest label), no time functions.
  for (const auto& f : figs) {
    const bool breakdown = f.id.rfind("breakdown-", 0) == 0;
    EXPECT_NE(f.svg.script.find(breakdown ? "set terminal svg size 900," : "set terminal svg size 900,520 "),
              std::string::npos);
    EXPECT_NE(f.svg.script.find(" fixed font 'DejaVu Sans,13'"), std::string::npos);
    EXPECT_EQ(f.svg.script.find("time("), std::string::npos);
  }
  EXPECT_NE(figs[0].svg.script.find("set arrow from 17.959"), std::string::npos) << figs[0].svg.script;
  // The Pareto caption names each numbered front point, with days and cost, and the recommendation.
  const std::string& pareto = figs.back().caption;
  EXPECT_NE(pareto.find("its points numbered from the fastest"), std::string::npos) << pareto;
  EXPECT_NE(pareto.find(" 1: "), std::string::npos) << pareto;
  EXPECT_NE(pareto.find(" 2: "), std::string::npos) << pareto;
  EXPECT_NE(pareto.find("17.50 days, USD 1344000), recommended."), std::string::npos) << pareto;
}

TEST(HtmlReport, MissingGnuplotIsAClearError) {
  const char* old = std::getenv("MOETWIN_GNUPLOT");
  const std::string saved = old ? old : "";
  setenv("MOETWIN_GNUPLOT", "/nonexistent/gnuplot", 1);
  try {
    render_html_report(all_fixtures(), {});
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot not found"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos);
  }
  if (old)
    setenv("MOETWIN_GNUPLOT", saved.c_str(), 1);
  else
    unsetenv("MOETWIN_GNUPLOT");
}

class RenderedReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not installed (Debian gnuplot-nox)";
  }
};

// End to end on the four fixtures: the sections in order, every figure inline, nothing external, and two
// renders byte-identical apart from the date line.
TEST_F(RenderedReport, DeterministicApartFromTheDateLine) {
  ReportOptions a;
  a.generated_utc = "2026-11-29T10:00:00Z";
  ReportOptions b = a;
  b.generated_utc = "2027-01-01T00:00:00Z";
  const std::string ha = render_html_report(all_fixtures(), a);
  const std::string hb = render_html_report(all_fixtures(), b);
  const auto la = lines_of(ha), lb = lines_of(hb);
  ASSERT_EQ(la.size(), lb.size());
  int differing = 0;
  for (std::size_t i = 0; i < la.size(); ++i) {
    if (la[i] != lb[i]) {
      ++differing;
      EXPECT_EQ(la[i], date_line(a.generated_utc));
      EXPECT_EQ(lb[i], date_line(b.generated_utc));
    }
  }
  EXPECT_EQ(differing, 1);
  const std::size_t summary = ha.find("<section id=\"summary\">");
  const std::size_t figures = ha.find("<section id=\"figures\">");
  const std::size_t tables = ha.find("<section id=\"tables\">");
  const std::size_t context = ha.find("<section id=\"context\">");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, figures);
  EXPECT_LT(figures, tables);
  EXPECT_LT(tables, context);
  std::size_t images = 0;
  for (std::size_t p = ha.find("data:image/svg+xml;base64,"); p != std::string::npos;
       p = ha.find("data:image/svg+xml;base64,", p + 1))
    ++images;
  EXPECT_EQ(images, 7u);
  EXPECT_EQ(ha.find("http://"), std::string::npos);  // no external URL outside the base64 figures
  EXPECT_EQ(ha.find("https://"), std::string::npos);
  EXPECT_EQ(ha.find("<script"), std::string::npos);
  EXPECT_NE(ha.find(sha256_hex(read_text_file(fixture("plan.csv")))), std::string::npos);
}

// Well-formedness with python3's html.parser: every non-void element closed in order.
TEST_F(RenderedReport, HtmlIsWellFormed) {
  if (system("python3 -c 'import html.parser' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not available";
  ReportOptions o;
  o.generated_utc = "2026-11-29T10:00:00Z";
  const std::string dir = ::testing::TempDir() + "moetwin-html-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  write_file_atomically(dir + "/r.html", render_html_report(all_fixtures(), o));
  const std::string checker = R"PY(
import sys
from html.parser import HTMLParser
VOID = {"meta", "img", "br", "hr", "link", "input", "wbr"}
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []
    def handle_starttag(self, tag, attrs):
        if tag not in VOID: self.stack.append(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag: self.errors.append("unexpected </%s>" % tag)
        else: self.stack.pop()
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
p.close()
if p.errors or p.stack:
    print(p.errors, p.stack); sys.exit(1)
)PY";
  write_file_atomically(dir + "/check.py", checker);
  EXPECT_EQ(system(("python3 " + dir + "/check.py " + dir + "/r.html").c_str()), 0);
  std::filesystem::remove_all(dir);
}

TEST_F(RenderedReport, MarkdownWithPngFigures) {
  ReportOptions o;
  o.generated_utc = "2026-11-29T10:00:00Z";
  const std::string dir = ::testing::TempDir() + "moetwin-md-" + std::to_string(getpid());
  write_markdown_report({load_report_input(fixture("validate.csv"))}, o, dir);
  const std::string md = read_text_file(dir + "/report.md");
  EXPECT_NE(md.find("![scatter-1](scatter-1.png)"), std::string::npos);
  EXPECT_NE(md.find("## Context"), std::string::npos);
  const std::string png = read_text_file(dir + "/scatter-1.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace moetwin
