// Issue 55 end to end through the CLI binaries: hostile inputs and shared folders. Each input of
// shared/data/bad-inputs/2026-12-06/ (copied to tests/reliability/, README.md there) gets its documented
// answer: exit 2 naming the file, or a warning naming file and line; never a signal, an exit 3, a write
// through a planted link, or an exit 0 with the output lost.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "moetwin/common/sanitizers.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;
using e2e::CliRun;

const std::string kData = e2e::kSourceDir + "/tests/reliability/";
const std::string kBin = e2e::kBinaryDir;
const std::string kCalibrate = kBin + "/calibrate/moetwin-calibrate";
const std::string kScenario = e2e::kSourceDir + "/scenarios/default.toml";

// The time and memory bounds are the issue's for the programs users run. Under ASan (this test binary is
// built like the programs it runs) an -O0 program is several times slower, the database reader's time
// limit is 4x longer (calibration_db_isolated.cpp), and the allocator's quarantine and shadow add hundreds
// of MB of resident memory: there the bounds scale by kSlowdown and the RSS bound is not checked.
constexpr bool kSanitized = kAddressSanitizer;
constexpr double kSlowdown = kSanitized ? 5.0 : 1.0;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

#define EXPECT_HAS(text, what) EXPECT_TRUE(has(text, what)) << "expected \"" << (what) << "\" in:\n" << (text)

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(e2e::kMoetwin)) GTEST_SKIP() << "moetwin binary not built";
    dir_ = e2e::fresh_test_dir("hostile");
  }
  CliRun run(const std::string& command) { return e2e::run_command(command, dir_); }
  fs::path dir_;
};

// --- item 1: crafted databases with a correct stamp -------------------------------------------------

// The four files that crashed libhdf5 (H5HG_read, H5A__close) or hung it past 30 s, each with a correct
// stamp: every command that reads a database answers exit 2 naming the file within 5 s.
TEST_F(Hostile, RestampedCrashAndHangDatabasesAreRefused) {
  if (!fs::exists(kCalibrate)) GTEST_SKIP() << "moetwin-calibrate not built";
  const std::string log = e2e::kSourceDir + "/calibrate/tests/data/all_reduce_perf_8gpu.txt";
  for (const char* name : {"h5show-segv-H5HG_read-restamped.h5", "h5show-segv-H5A__close-restamped.h5",
                           "h5show-hang-restamped.h5", "h5show-hang-2-restamped.h5"}) {
    const fs::path db = dir_ / name;
    for (const std::string& command :
         {"show " + db.string(), "import nccl-tests " + log + " --db " + db.string(),
          "fit --db " + db.string() + " --out " + (dir_ / "p.toml").string()}) {
      fs::copy_file(kData + name, db, fs::copy_options::overwrite_existing);
      const auto start = std::chrono::steady_clock::now();
      const CliRun r = run(kCalibrate + " " + command);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(r.code, 2) << command << ": " << r.err;
      EXPECT_EQ(r.signal, 0) << command;
      EXPECT_HAS(r.err, db.string() + ": ");
      EXPECT_LT(seconds, 5 * kSlowdown) << command;
      EXPECT_EQ(e2e::read_whole_file(db), e2e::read_whole_file(kData + name)) << command << ": changed";
    }
  }
}

// --- item 2: safe writes -------------------------------------------------------------------------------

// symlink-tmp.sh as shipped: links at the old fixed temporary names OUT.tmp-moetwin and
// PREFIX.journal.tmp; both victims keep their content and both commands succeed.
TEST_F(Hostile, SymlinkTmpScriptLeavesBothVictimsUntouched) {
  const CliRun r =
      run("cd " + e2e::kSourceDir + " && M=" + e2e::kMoetwin + " MOETWIN_CATALOG=" + e2e::kSourceDir +
          "/catalog/data bash " + kData + "symlink-tmp.sh");
  EXPECT_EQ(r.code, 0) << r.err;
  // The script prints each command's exit code, then the first bytes of each victim.
  const auto count = [&r](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = r.out.find(what); at != std::string::npos; at = r.out.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("rc=0"), 2u) << r.out;
  EXPECT_EQ(count("\nvictim content"), 2u) << r.out;
}

// The same, checked file by file in this test's folder: predict --out and the sweep journal.
TEST_F(Hostile, LinksAtTemporaryNamesAreNeverWrittenThrough) {
  std::ofstream(dir_ / "victim.txt") << "victim content\n";
  std::ofstream(dir_ / "victim2.txt") << "victim content\n";
  fs::create_symlink("victim.txt", dir_ / "out.json.tmp-moetwin");
  fs::create_symlink("victim2.txt", dir_ / "sw.journal.tmp");
  const CliRun p = run(e2e::kMoetwin + " " + e2e::kCatalogFlag + " predict " + kScenario +
                       " --format json --out " + (dir_ / "out.json").string());
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_FALSE(fs::is_symlink(dir_ / "out.json"));
  EXPECT_EQ(e2e::read_whole_file(dir_ / "victim.txt"), "victim content\n");
  std::ifstream readme(e2e::kSourceDir + "/sweep/README.md");
  std::ofstream tiny(dir_ / "tiny.toml");
  std::string line;
  for (int n = 1; std::getline(readme, line); ++n)
    if (n >= 88 && n <= 108) tiny << line << '\n';
  tiny.close();
  const CliRun s = run("cd " + dir_.string() + " && " + e2e::kMoetwin + " " + e2e::kCatalogFlag +
                       " sweep tiny.toml --threads 1 --out sw");
  EXPECT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(e2e::read_whole_file(dir_ / "victim2.txt"), "victim content\n");
  // No temporary file is left in the folder.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_FALSE(has(e.path().filename().string(), ".tmp-moetwin") && !fs::is_symlink(e.symlink_status()))
        << e.path();
}

// Every program checks standard output, --version and --help included: `> /dev/full` is exit 2 with a
// message on stderr, never exit 0 with the text lost.
TEST_F(Hostile, EveryProgramChecksStandardOutput) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::vector<std::string> programs = {e2e::kMoetwin, kBin + "/cli/moetwin-net",
                                             kBin + "/cli/moetwin-sweep", kCalibrate};
  for (const std::string& program : programs) {
    if (!fs::exists(program)) continue;
    for (const char* flag : {"--version", "--help"}) {
      const std::string command = program + " " + flag;
      const int code = e2e::run_command_to(command, "/dev/full", dir_ / "err.txt");
      const std::string err = e2e::read_whole_file(dir_ / "err.txt");
      EXPECT_EQ(code, 2) << command << ": " << err;
      EXPECT_HAS(err, "error: standard output: write error");
    }
  }
  // A subcommand delegated to its sibling (moetwin sweep --help runs moetwin-sweep).
  for (const char* command : {" sweep --help", " net --help", " predict --help"}) {
    const int code = e2e::run_command_to(e2e::kMoetwin + command, "/dev/full", dir_ / "err.txt");
    EXPECT_EQ(code, 2) << command << ": " << e2e::read_whole_file(dir_ / "err.txt");
  }
}

TEST_F(Hostile, CalibrateShowToAFullDeviceFails) {
  if (!fs::exists("/dev/full") || !fs::exists(kCalibrate))
    GTEST_SKIP() << "no /dev/full or moetwin-calibrate";
  const std::string db = e2e::kSourceDir + "/calibrate/data/h200-fp8-run1-fastaccum.h5";
  if (!fs::exists(db)) GTEST_SKIP() << db << " missing";
  const int code = e2e::run_command_to(kCalibrate + " show " + db, "/dev/full", dir_ / "err.txt");
  EXPECT_EQ(code, 2) << e2e::read_whole_file(dir_ / "err.txt");
  EXPECT_HAS(e2e::read_whole_file(dir_ / "err.txt"), "standard output");
}

// --- item 3: bounded reading -----------------------------------------------------------------------------

// Every input kind from /dev/zero, /dev/urandom and a 10 GB sparse file: exit 2 naming the file within
// 10 s at under 1 GB peak RSS (they ended in std::bad_alloc after 25-36 s at about 4 GB).
TEST_F(Hostile, EndlessAndHugeInputsEndInExit2Quickly) {
  const fs::path sparse = dir_ / "huge.txt";
  { std::ofstream(sparse) << ""; }
  std::error_code ec;
  fs::resize_file(sparse, 10ull * 1000 * 1000 * 1000, ec);
  if (ec) GTEST_SKIP() << "cannot make a 10 GB sparse file: " << ec.message();
  const std::string m = e2e::kMoetwin + " " + e2e::kCatalogFlag + " ";
  const std::string db = (dir_ / "x.h5").string();
  // {what, command with @ for the input}
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"scenario TOML", m + "predict @"},
      {"runs CSV", m + "inspect --runs @"},
      {"runs CSV (predict)", m + "predict --runs @"},
      {"profile TOML", m + "predict " + kScenario + " --profile @"},
      {"megatron log", m + "import megatron-log @ --scenario " + kScenario},
      {"sweep file", m + "sweep @ --out " + (dir_ / "sw").string()},
      {"report input", m + "report @ --out " + (dir_ / "r.html").string()},
      {"nccl-tests log", kCalibrate + " import nccl-tests @ --db " + db},
      {"deepep log", kCalibrate + " import deepep @ --db " + db},
      {"calibration database", kCalibrate + " show @"},
  };
  for (const std::string& input : {std::string("/dev/zero"), std::string("/dev/urandom"), sparse.string()}) {
    for (const auto& [what, command] : kinds) {
      std::string c = command;
      c.replace(c.find('@'), 1, input);
      const auto start = std::chrono::steady_clock::now();
      const CliRun r = run("/usr/bin/time -f %M -o " + (dir_ / "rss.txt").string() + " " + c);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double rss_kb = std::atof(e2e::read_whole_file(dir_ / "rss.txt").c_str());
      EXPECT_EQ(r.code, 2) << what << " from " << input << ": " << r.err;
      EXPECT_EQ(r.signal, 0) << what << " from " << input;
      EXPECT_HAS(r.err, input);
      EXPECT_LT(seconds, 10 * kSlowdown) << what << " from " << input;
      if (!kSanitized) {
        EXPECT_LT(rss_kb, 1e6) << what << " from " << input << ": peak RSS " << rss_kb << " kB";
      }
    }
  }
  fs::remove(sparse);
}

// The error states the limit and how to raise it; the variable raises it.
TEST_F(Hostile, InputLimitIsStatedAndRaisable) {
  const CliRun r = run(e2e::kMoetwin + " " + e2e::kCatalogFlag + " predict /dev/zero");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "/dev/zero: larger than 16 MiB, the limit for a TOML file");
  EXPECT_HAS(r.err, "MOETWIN_MAX_INPUT_MIB");
  const CliRun bad =
      run("MOETWIN_MAX_INPUT_MIB=x " + e2e::kMoetwin + " " + e2e::kCatalogFlag + " predict " + kScenario);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_HAS(bad.err, "MOETWIN_MAX_INPUT_MIB");
  const CliRun ok =
      run("MOETWIN_MAX_INPUT_MIB=64 " + e2e::kMoetwin + " " + e2e::kCatalogFlag + " predict " + kScenario);
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// --- item 4: finite everything -----------------------------------------------------------------------

// shared/data/bad-inputs/2026-12-06/h200-fp8-run1-fastaccum-nan.h5 is byte for byte the shipped
// calibrate/data/h200-fp8-run1-fastaccum.h5 (no NaN in it): fit refuses it for what it lacks, exit 2,
// nothing written. The NaN / zero / negative / 1e308 s samples themselves are refused by check_fit_samples
// (calibrate/tests/profile_test.cpp, CheckFitSamples).
TEST_F(Hostile, FitOfTheNanInputWritesNothing) {
  if (!fs::exists(kCalibrate)) GTEST_SKIP() << "moetwin-calibrate not built";
  const fs::path out = dir_ / "p.toml";
  const CliRun r =
      run(kCalibrate + " fit --db " + kData + "h200-fp8-run1-fastaccum-nan.h5 --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "h200-fp8-run1-fastaccum-nan.h5");
  EXPECT_FALSE(fs::exists(out));
}

// --- item 5: the six silent imports ------------------------------------------------------------------

CliRun calibrate_import(const std::string& kind, const std::string& file, const fs::path& dir) {
  return e2e::run_command(
      kCalibrate + " import " + kind + " " + kData + file + " --db " + (dir / "x.h5").string(), dir);
}

TEST_F(Hostile, ImpossibleDeepepBandwidthIsRefused) {
  const CliRun r = calibrate_import("deepep", "dp-bw-inconsistent.log", dir_);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "dp-bw-inconsistent.log:29: nvl_bw_Bps: 29424000 GB/s: at most 3600 GB/s");
}

TEST_F(Hostile, DeepepLogTwiceIsWarnedAtTheRepeat) {
  const CliRun r = calibrate_import("deepep", "dp-twice.log", dir_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.err, "warning: " + kData + "dp-twice.log:127: ");
  EXPECT_HAS(r.err, "repeats line 45 word for word");
}

TEST_F(Hostile, DuplicatedNcclTestsSizeIsWarned) {
  const CliRun r = calibrate_import("nccl-tests", "nt-dupsize.log", dir_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.err, "warning: " + kData +
                        "nt-dupsize.log:30: size 4096 B float sum appears 2 times (line 29 first)");
}

CliRun megatron_import(const std::string& file, const fs::path& dir) {
  return e2e::run_command(e2e::kMoetwin + " " + e2e::kCatalogFlag + " import megatron-log " + kData + file +
                              " --scenario " + kScenario,
                          dir);
}

TEST_F(Hostile, BridgeLogTwiceWarnsOfTheSecondWarmup) {
  const CliRun r = megatron_import("bridge-twice.log", dir_);
  EXPECT_HAS(r.err, "warning: " + kData + "bridge-twice.log:21: iteration 21 took 125.37 s");
  EXPECT_HAS(r.err, "a second warm-up");
}

TEST_F(Hostile, GluedIterationLinesAreRefused) {
  const CliRun r = megatron_import("mlog-glued.log", dir_);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "mlog-glued.log:22: iteration line: two 'elapsed time per iteration (ms):' fields");
}

TEST_F(Hostile, LoggedFlopsTenTimesTheTimeAreWarnedAtImport) {
  const CliRun r = megatron_import("mlog-tflops-x10.log", dir_);
  EXPECT_HAS(r.err, "warning: " + kData + "mlog-tflops-x10.log:");
  EXPECT_HAS(r.err, ": median logged tflops_gpu: ");
}

// --- item 6: refuse early ----------------------------------------------------------------------------

// A 2^30 global batch: the in-flight peak comes from one schedule period, not a replay of every microbatch
// (7 s before), and inspect states the estimate predict refuses.
TEST_F(Hostile, HugeGlobalBatchIsInspectedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  const CliRun r =
      run(e2e::kMoetwin + " " + e2e::kCatalogFlag + " inspect " + kData + "res-qwen-gbs2p30.toml");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.out, "over it: predict refuses it");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5 * kSlowdown);
}

// plan --gbs 1000000000 ran over 120 s without output: every layout's prediction is refused by the size
// guard before anything is built; 3.6 s on the 2-core box (the bound leaves room for sanitizer builds).
TEST_F(Hostile, PlanOfAHugeGlobalBatchAnswers) {
  const auto start = std::chrono::steady_clock::now();
  const CliRun r = run(e2e::kMoetwin + " " + e2e::kCatalogFlag +
                       " plan --model qwen3-30b-a3b --instance p5en.48xlarge --tokens 1e11 --gbs 1000000000");
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.code << ": " << r.err;
  EXPECT_HAS(r.out + r.err, "1000000000");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30 * kSlowdown);
}

// --- item 7: escaping ----------------------------------------------------------------------------------

TEST_F(Hostile, MarkdownReportIsEscaped) {
  const fs::path csv = dir_ / "p.csv", html = dir_ / "r.html", md = dir_ / "md";
  const CliRun p = run(e2e::kMoetwin + " " + e2e::kCatalogFlag + " predict " + kData +
                       "n-script.toml --format csv --out " + csv.string());
  ASSERT_EQ(p.code, 0) << p.err;
  const CliRun r = run(e2e::kMoetwin + " report " + csv.string() + " --out " + html.string() +
                       " --markdown " + md.string());
  if (r.code != 0 && has(r.err, "gnuplot")) GTEST_SKIP() << "no gnuplot: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = e2e::read_whole_file(md / "report.md");
  EXPECT_FALSE(has(text, "<script>")) << text;
  EXPECT_HAS(text, "&lt;script&gt;");
}

TEST_F(Hostile, CatalogNamesAreRestrictedToASafeSet) {
  const fs::path cat = dir_ / "catalog";
  fs::copy(e2e::kSourceDir + "/catalog/data", cat, fs::copy_options::recursive);
  std::ofstream(cat / "dispatchers.toml", std::ios::app) << "\n[\"../../x\"]\ndescription = \"x\"\n";
  const CliRun r = run(e2e::kMoetwin + " --catalog " + cat.string() + " predict " + kScenario);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "dispatchers.toml:");
  EXPECT_HAS(r.err, "entry name: \"../../x\": letters, digits, '.', '_' and '-' only");
}

}  // namespace
}  // namespace moetwin
