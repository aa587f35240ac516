// The README stays true: its five-minute tour is run here command by command, as written, and every figure
// the tour quotes is produced by these runs (plan -> --write-scenarios -> predict on the first file equals
// plan's number; compare of two dispatchers and two precisions prints its ratio band; recommend's scaling;
// report of plan + compare renders; report refuses inspect's output as the README says). The README's
// word count and its paths (none a clone lacks) are checked too.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "moetwin/common/csv.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = MOETWIN_SOURCE_DIR;
const std::string kBinary = std::string(MOETWIN_BINARY_DIR) + "/cli/moetwin";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The README with line continuations joined and every run of whitespace one space: a quoted figure or a
// command wrapped over lines reads as it is printed or typed.
std::string readme_flat() {
  std::string text = slurp(kSource + "/README.md");
  text = std::regex_replace(text, std::regex("\\\\\\n"), " ");
  return std::regex_replace(text, std::regex("\\s+"), " ");
}

struct CliRun {
  int status = -1;
  std::string out, err;
};

// Runs `command` (as the README writes it, starting with build/cli/moetwin) in `dir` with $first set, the
// binary and catalog of this build.
CliRun run_in(const fs::path& dir, const std::string& command, const std::string& first = "") {
  const std::string prefix = "build/cli/moetwin ";
  EXPECT_EQ(command.rfind(prefix, 0), 0u) << command;
  const std::string args = command.substr(prefix.size());
  const std::string cmd = "cd " + dir.string() + " && first=" + first + "; " + kBinary + " --catalog " +
                          kSource + "/catalog/data " + args + " >out.txt 2>err.txt";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out.txt"), slurp(dir / "err.txt")};
}

// The cells of column `column` of a CSV's rows.
std::vector<std::string> column_of(const std::string& csv_text, const std::string& column) {
  const CsvTable t = parse_csv(csv_text, "out.csv");
  std::size_t c = t.header.size();
  for (std::size_t i = 0; i < t.header.size(); ++i) {
    if (t.header[i] == column) c = i;
  }
  std::vector<std::string> out;
  if (c == t.header.size()) {
    ADD_FAILURE() << "no column " << column;
    return out;
  }
  for (const CsvRow& r : t.rows) out.push_back(r.fields.at(c));
  return out;
}

// The first match of `pattern`'s group 1 in `text` ("" when none).
std::string match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? m[1].str() : std::string();
}

const std::string kPlan =
    "build/cli/moetwin plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e11 --min-nodes 2 "
    "--max-nodes 2 --gbs 256 --write-scenarios my-plan --top 3";

TEST(ReadmeTour, EveryCommandRunsAndEveryQuotedFigureIsWhatItPrints) {
  const std::string readme = readme_flat();
  // One folder per process: ctest runs from several checkouts on one machine must not share it.
  const fs::path dir = fs::path(testing::TempDir()) / ("readme_tour_e2e." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto in_readme = [&readme](const std::string& s) {
    EXPECT_NE(readme.find(s), std::string::npos) << "the README does not say: " << s;
  };

  // 1. The catalog.
  for (const std::string c : {"build/cli/moetwin catalog models", "build/cli/moetwin catalog instances"}) {
    in_readme(c);
    const CliRun r = run_in(dir, c);
    ASSERT_EQ(r.status, 0) << r.err;
    if (c.find("instances") != std::string::npos) {
      EXPECT_NE(r.out.find("p5e.48xlarge"), std::string::npos);
    }
  }

  // 2. plan, writing the top three options as scenarios.
  in_readme(kPlan);
  const CliRun plan = run_in(dir, kPlan);
  ASSERT_EQ(plan.status, 0) << plan.err;
  const std::string fastest = match(plan.out, "fastest: rank 1: 2 x p5en.48xlarge, ([^\\n]*node-hours)");
  ASSERT_FALSE(fastest.empty()) << plan.out;
  in_readme("`" + fastest + "`");
  const std::string runner_up =
      match(plan.out, "fastest: rank 1:[^\\n]*\\n(?:    [^\\n]*\\n)*?    dispatcher: ([^\\n]*)");
  EXPECT_NE(runner_up.find("(within the uncertainty)"), std::string::npos) << runner_up;
  in_readme("its runner-up dispatcher is within the uncertainty, and plan names the run that settles it");
  EXPECT_NE(plan.out.find("\n    tie: measure "), std::string::npos) << plan.out;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir / "my-plan")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 3u);
  const std::string first = "my-plan/" + files[0];
  in_readme("first=" + first);
  EXPECT_NE(slurp(dir / first).find("# Written by `moetwin plan --model qwen3-30b-a3b"), std::string::npos);

  // 3. predict on the first file reproduces plan's number exactly.
  const std::string predict = "build/cli/moetwin predict $first";
  in_readme(predict);
  const CliRun p = run_in(dir, predict, first);
  ASSERT_EQ(p.status, 0) << p.err;
  const std::string iteration = match(p.out, "\\niteration +([0-9.]+ s)");
  in_readme("It prints `" + iteration + "`, plan's number");
  const CliRun plan_csv = run_in(dir, kPlan + " --format csv --out plan.csv");
  ASSERT_EQ(plan_csv.status, 0) << plan_csv.err;
  const CliRun p_csv = run_in(dir, predict + " --format csv", first);
  ASSERT_EQ(p_csv.status, 0) << p_csv.err;
  EXPECT_EQ(column_of(p_csv.out, "predicted_iter_s").at(0),
            column_of(slurp(dir / "plan.csv"), "predicted_iter_s").at(0));

  // 4. compare: two dispatchers, two precisions; the ratio band is narrower than the own bands' ratio.
  const std::string by_dispatcher =
      "build/cli/moetwin compare $first --dispatchers nccl-alltoall,deepep-uccl";
  const std::string by_precision = "build/cli/moetwin compare $first --precision bf16,fp8-hybrid";
  in_readme(by_dispatcher);
  in_readme(by_precision);
  const CliRun cd = run_in(dir, by_dispatcher, first);
  ASSERT_EQ(cd.status, 0) << cd.err;
  const std::string dispatcher_line = match(cd.out, "\\n(deepep-uccl vs nccl-alltoall: [^\\n]*)");
  ASSERT_FALSE(dispatcher_line.empty()) << cd.out;
  in_readme("The first prints `" + dispatcher_line + "`");
  EXPECT_NE(cd.out.find("band source: paired out-of-sample errors"), std::string::npos) << cd.out;
  const CliRun cp = run_in(dir, by_precision, first);
  ASSERT_EQ(cp.status, 0) << cp.err;
  const std::string precision_line = match(cp.out, "\\n(fp8-hybrid vs bf16: [^\\n]*)");
  in_readme("The second: `" + precision_line + "`");
  EXPECT_NE(cp.out.find("band source: "), std::string::npos) << cp.out;
  const CliRun cp_csv = run_in(dir, by_precision + " --format csv", first);
  ASSERT_EQ(cp_csv.status, 0) << cp_csv.err;
  const double lo = std::stod(column_of(cp_csv.out, "ratio_lo")[1]);
  const double hi = std::stod(column_of(cp_csv.out, "ratio_hi")[1]);
  const std::string own_lo = column_of(cp_csv.out, "own_ratio_lo")[1];
  const std::string own_hi = column_of(cp_csv.out, "own_ratio_hi")[1];
  EXPECT_GT(lo, std::stod(own_lo));
  EXPECT_LT(hi, std::stod(own_hi));
  const std::string own_band =
      match(cp.out, "\\n1 +fp8-hybrid +[^\\n]*\\.\\.[0-9.]+ +([0-9.]+\\.\\.[0-9.]+) ");
  in_readme("own bands alone would give `" + own_band + "`");

  // 5. recommend: scaling per node count.
  const std::string rec = "build/cli/moetwin recommend $first --nodes 2,4,8 --tokens 1e11";
  in_readme(rec);
  const CliRun rc = run_in(dir, rec + " --format csv", first);
  ASSERT_EQ(rc.status, 0) << rc.err;
  const std::vector<std::string> nodes = column_of(rc.out, "nodes");
  const std::vector<std::string> dispatchers = column_of(rc.out, "dispatcher");
  const std::vector<std::string> efficiency = column_of(rc.out, "scaling_efficiency");
  std::string eff8;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] == "8" && dispatchers[i] == "nccl-alltoall") eff8 = efficiency[i];
  }
  ASSERT_FALSE(eff8.empty()) << rc.out;
  std::ostringstream eff;
  eff.setf(std::ios::fixed);
  eff.precision(2);
  eff << std::stod(eff8);
  in_readme("scaling efficiency (nccl-alltoall: `" + eff.str() + "` at 8 nodes)");

  // 6. report of plan + compare renders; inspect's output is not a report input, as the README says.
  const CliRun ccsv = run_in(dir, by_dispatcher + " --format csv --out compare.csv", first);
  ASSERT_EQ(ccsv.status, 0) << ccsv.err;
  const std::string report = "build/cli/moetwin report plan.csv compare.csv --out tour.html";
  in_readme(report);
  const CliRun rp = run_in(dir, report);
  ASSERT_EQ(rp.status, 0) << rp.err;
  const std::string html = slurp(dir / "tour.html");
  EXPECT_NE(html.find("deepep-uccl: "), std::string::npos);
  EXPECT_NE(html.find("x the reference (80% band "), std::string::npos);
  in_readme("not of inspect, net or dispatch");
  ASSERT_EQ(run_in(dir, "build/cli/moetwin inspect $first --format csv --out inspect.csv", first).status, 0);
  EXPECT_EQ(run_in(dir, "build/cli/moetwin report inspect.csv --out inspect.html").status, 2);
  if (!HasFailure()) fs::remove_all(dir);  // kept when something failed, to look at
}

TEST(ReadmeTour, WordCountAndPathsAClone) {
  const std::string text = slurp(kSource + "/README.md");
  std::istringstream words(text);
  std::size_t count = 0;
  for (std::string w; words >> w;) ++count;
  EXPECT_LE(count, 1800u);
  EXPECT_EQ(text.find("shared/data"), std::string::npos);
  EXPECT_EQ(text.find("../shared"), std::string::npos);
  EXPECT_NE(text.find("\n## How right is it"), std::string::npos);
  // Every repository path the README links to exists in a clone.
  const std::regex link("\\]\\(([^)#:]+)\\)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(fs::exists(kSource + "/" + (*it)[1].str())) << (*it)[1].str();
  }
}

}  // namespace
}  // namespace moetwin
