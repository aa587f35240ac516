// End-to-end: what a user sees at the edges of the CLI. Traces record one rank per pipeline
// stage by default (--trace-ranks picks others, .gz compresses); output paths in missing folders and
// directories passed as files are named as such before any work; a misspelt scenario key is reported at
// its own line with the key it was meant to be; progress bars stay off when stderr is no terminal.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;

// `moetwin ARGS` with stdout and stderr captured in files under `dir` (stderr is then no terminal). Every
// command here takes --profile: none keeps the tests off the shipped fit, which they are not about.
constexpr auto moetwin = &e2e::run_moetwin_as_given;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class CliUsability : public e2e::FreshDirTest {
 protected:
  void SetUp() override {
    e2e::FreshDirTest::SetUp();
    // The shipped 2-node Qwen3 example with two pipeline stages: 16 ranks, 8 per stage.
    std::string text = read_text_file(kSource + "/scenarios/examples/qwen3-30b-p5en-2n.toml");
    replace(text, "pp = 1", "pp = 2");
    replace(text, "dp = 8", "dp = 4");
    scenario_ = (dir_ / "pp2.toml").string();
    std::ofstream(scenario_) << text;
  }
  static void replace(std::string& text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  std::string scenario_;
};

TEST_F(CliUsability, TraceRecordsOneRankPerStageByDefault) {
  const std::string trace = (dir_ / "t.json").string();
  e2e::CliRun r = moetwin("predict --profile none " + scenario_ + " --trace " + trace, dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string stages = read_text_file(trace);
  EXPECT_EQ(count(stages, "\"process_name\""), 2u);
  EXPECT_EQ(count(stages, "\"dur\":0.000,"), 0u);
  r = moetwin("predict --profile none " + scenario_ + " --trace " + trace + " --trace-ranks all", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string all = read_text_file(trace);
  EXPECT_EQ(count(all, "\"process_name\""), 16u);
  EXPECT_GT(all.size(), 4 * stages.size());
  r = moetwin("predict --profile none " + scenario_ + " --trace " + trace + " --trace-ranks 0,8-9", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count(read_text_file(trace), "\"process_name\""), 3u);
  // Gzipped when the name ends in .gz.
  const std::string gz = (dir_ / "t.json.gz").string();
  r = moetwin("predict --profile none " + scenario_ + " --trace " + gz, dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string bytes = read_text_file(gz);
  ASSERT_GT(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_LT(bytes.size(), stages.size() / 4);
  r = moetwin("predict --profile none " + scenario_ + " --trace " + trace + " --trace-ranks 17", dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--trace-ranks: 17: stages, stages+tp, all, a count N (1 to 16)"), std::string::npos)
      << r.err;
}

TEST_F(CliUsability, OutputIntoAMissingFolderIsNamedBeforeAnyWork) {
  const std::string out = (dir_ / "no-such-folder" / "p.json").string();
  e2e::CliRun r = moetwin("predict --profile none " + scenario_ + " --out " + out, dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("output folder " + (dir_ / "no-such-folder").string() + " does not exist"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "no-such-folder"));
  r = moetwin("predict --profile none " + scenario_ + " --out " + dir_.string(), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a directory, expected a file to write"), std::string::npos) << r.err;
  // report's --markdown folder: created, but not its missing parent (as --out).
  const std::string csv = (dir_ / "p.csv").string();
  ASSERT_EQ(moetwin("predict --profile none " + scenario_ + " --format csv --out " + csv, dir_).code, 0);
  r = moetwin("report " + csv + " --out " + (dir_ / "r.html").string() + " --markdown " +
                  (dir_ / "missing" / "md").string(),
              dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("output folder " + (dir_ / "missing").string() + " does not exist"), std::string::npos)
      << r.err;
  r = moetwin("report " + (dir_ / "sweep.h5").string() + " --out " + (dir_ / "r.html").string(), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("sweep.h5: input: an HDF5 file: a CSV or JSON output"), std::string::npos) << r.err;
}

TEST_F(CliUsability, DirectoryAsScenarioAndMisspeltKey) {
  e2e::CliRun r = moetwin("predict --profile none " + dir_.string(), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: " + dir_.string() + ": is a directory, expected a file\n");
  std::string text = read_text_file(scenario_);
  const std::size_t line = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<long>(text.find("micro_batch")), '\n') + 1);
  replace(text, "micro_batch", "micro_bach");
  std::ofstream(scenario_) << text;
  r = moetwin("predict --profile none " + scenario_, dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(scenario_ + ":" + std::to_string(line) +
                       ": training.micro_bach: 2: no such key (did you mean `micro_batch`?"),
            std::string::npos)
      << r.err;
}

// Without a terminal the per-row progress bar stays off: no carriage returns, no escape sequences.
TEST_F(CliUsability, NoProgressBarWithoutATerminal) {
  const e2e::CliRun r = moetwin(
      "predict --profile none --runs " + kSource + "/validate/data/live-runs-p5en.csv --format csv", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  EXPECT_EQ(r.err.find("\033["), std::string::npos);
}

}  // namespace
}  // namespace moetwin
