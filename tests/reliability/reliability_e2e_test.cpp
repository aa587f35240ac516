// End to end through the CLI binaries: every input in tests/reliability/ (README.md there says where each
// came from) and the output faults of issue 44 end as documented: exit 2 with the file, line or key and the
// value, or a warning with the line; never a signal, an exit 3, or an exit 0 with the output lost.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "moetwin/common/csv.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = MOETWIN_SOURCE_DIR;
const std::string kData = kSource + "/tests/reliability/";
const std::string kMoetwin = std::string(MOETWIN_BINARY_DIR) + "/cli/moetwin";
const std::string kCalibrate = std::string(MOETWIN_BINARY_DIR) + "/calibrate/moetwin-calibrate";

struct CliRun {
  int code = -1;    // exit code; -1 when killed by a signal
  int signal = 0;   // the signal, when killed
  std::string out;  // stdout
  std::string err;  // stderr
};

// One folder per test: ctest runs the tests of this binary as parallel processes.
fs::path work_dir() {
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "reliability_e2e" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  return dir;
}

// `command` through the shell, stdout and stderr captured unless the command redirects stdout itself.
CliRun run(const std::string& command, bool capture_stdout = true) {
  const fs::path out = work_dir() / "stdout.txt", err = work_dir() / "stderr.txt";
  fs::remove(out);
  const std::string cmd = "MOETWIN_CATALOG=" + kSource + "/catalog/data " + command +
                          (capture_stdout ? " >" + out.string() : std::string()) + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  CliRun r;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (capture_stdout && fs::exists(out)) r.out = read_text_file(out.string());
  r.err = read_text_file(err.string());
  return r;
}

CliRun moetwin(const std::string& args, bool capture_stdout = true) {
  return run(kMoetwin + " " + args, capture_stdout);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

#define EXPECT_HAS(text, what) EXPECT_TRUE(has(text, what)) << "expected \"" << (what) << "\" in:\n" << (text)

class Reliability : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kMoetwin)) GTEST_SKIP() << "moetwin binary not built";
    fs::remove_all(work_dir());
    fs::create_directories(work_dir());
  }
};

// --- 44.2: what would not fit in memory -------------------------------------------------------------

TEST_F(Reliability, OversizedScenarioIsRefusedWithTheEstimate) {
  const CliRun r = moetwin("predict " + kData + "res-nodes100k-gbs1e9.toml");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "res-nodes100k-gbs1e9.toml: workload: ");
  EXPECT_HAS(r.err, "80000 microbatches on 800000 GPUs");
  EXPECT_HAS(r.err, "fewer microbatches");
  EXPECT_HAS(r.err, "MOETWIN_MAX_WORKLOAD_GIB");
  const CliRun i = moetwin("inspect " + kData + "res-nodes100k-gbs1e9.toml");
  EXPECT_EQ(i.code, 0) << i.err;
  EXPECT_HAS(i.out, "workload estimate: ops ");
  EXPECT_HAS(i.out, "over it: predict refuses it");
}

// --- 44.3: every write checked ------------------------------------------------------------------------

const std::string kSmall = kSource + "/scenarios/examples/qwen3-30b-p5en-2n.toml";

TEST_F(Reliability, OutToAFullDeviceFails) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const CliRun r = moetwin("predict " + kSmall + " --out /dev/full");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "/dev/full: write error");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));  // written in place, never renamed over
}

TEST_F(Reliability, StdoutToAFullDeviceFails) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const char* format : {"text", "csv", "json"}) {
    const CliRun r = moetwin("predict " + kSmall + " --format " + format + " >/dev/full", false);
    EXPECT_EQ(r.code, 2) << format << ": " << r.err;
    EXPECT_HAS(r.err, "standard output");
    EXPECT_HAS(r.err, "write error");
  }
}

TEST_F(Reliability, OutputOverItsOwnInputIsRefused) {
  const fs::path copy = work_dir() / "own.toml";
  fs::copy_file(kSmall, copy, fs::copy_options::overwrite_existing);
  const std::string before = read_text_file(copy.string());
  const CliRun r = moetwin("predict " + copy.string() + " --out " + copy.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "--out");
  EXPECT_HAS(r.err, "overwrite what the command reads");
  EXPECT_EQ(read_text_file(copy.string()), before);
  // The same file under another name (./, a symlink) is the same file.
  const CliRun r2 =
      moetwin("predict " + copy.string() + " --out=" + (work_dir() / "." / "own.toml").string());
  EXPECT_EQ(r2.code, 2) << r2.err;
  EXPECT_EQ(read_text_file(copy.string()), before);
}

TEST_F(Reliability, FailedReportLeavesNoFile) {
  const fs::path csv = work_dir() / "p.csv", html = work_dir() / "r.html";
  ASSERT_EQ(moetwin("predict " + kSmall + " --format csv --out " + csv.string()).code, 0);
  fs::remove(html);
  const CliRun r = moetwin("report " + csv.string() + " --out " + html.string() + " --markdown " +
                           (work_dir() / "missing" / "dir").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "does not exist");
  EXPECT_FALSE(fs::exists(html));
  for (const auto& e : fs::directory_iterator(work_dir()))
    EXPECT_FALSE(is_staged_name_for(e.path().filename().string(), "r.html")) << e.path();
}

// --- 44.4 / 43.4: impossible measurements ---------------------------------------------------------------

CliRun calibrate_import(const std::string& kind, const std::string& file) {
  const fs::path db = work_dir() / (file + ".h5");
  fs::remove(db);
  return run(kCalibrate + " import " + kind + " " + kData + file + " --db " + db.string());
}

TEST_F(Reliability, NcclTestsNonPositiveTimes) {
  if (!fs::exists(kCalibrate)) GTEST_SKIP() << "moetwin-calibrate not built";
  const CliRun neg = calibrate_import("nccl-tests", "nt-negtime.log");
  EXPECT_EQ(neg.code, 2) << neg.err;
  EXPECT_HAS(neg.err, "nt-negtime.log:29: out_of_place time (us): -42.41");
  const CliRun zero = calibrate_import("nccl-tests", "nt-zerotime.log");
  EXPECT_EQ(zero.code, 2) << zero.err;
  EXPECT_HAS(zero.err, "nt-zerotime.log:");
  EXPECT_HAS(zero.err, "a positive time");
}

// algbw 100x what size / time gives, and a count that does not match the size: rows edited from
// nt-zerotime.log's first row (written by the test).
TEST_F(Reliability, NcclTestsInconsistentRows) {
  if (!fs::exists(kCalibrate)) GTEST_SKIP() << "moetwin-calibrate not built";
  const std::string header =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
      "algbw "
      "  busbw  #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  "
      "(GB/s) "
      " (GB/s)\n";
  const auto import = [&](const std::string& name, const std::string& row) {
    std::ofstream(work_dir() / name) << header << row << "\n";
    const fs::path db = work_dir() / (name + ".h5");
    return run(kCalibrate + " import nccl-tests " + (work_dir() / name).string() + " --db " + db.string());
  };
  const CliRun ok =
      import("ok.log",
             "     1048576        262144     float     sum      -1  1271.30    0.82    1.55       "
             "0  1322.22    0.79    1.49       0");
  EXPECT_EQ(ok.code, 0) << ok.err;
  const CliRun bw =
      import("bw.log",
             "     1048576        262144     float     sum      -1  1271.30   82.48    1.55       "
             "0  1322.22    0.79    1.49       0");
  EXPECT_EQ(bw.code, 2) << bw.err;
  EXPECT_HAS(bw.err, "bw.log:4: out_of_place algbw (GB/s): 82.48: size / time = 0.82 GB/s within 5%");
  const CliRun count =
      import("count.log",
             "     1048576        262000     float     sum      -1  1271.30    0.82    1.55    "
             "   0  1322.22    0.79    1.49       0");
  EXPECT_EQ(count.code, 2) << count.err;
  EXPECT_HAS(count.err, "count.log:4: count: 262000");
}

TEST_F(Reliability, DeepepNegativeTimes) {
  if (!fs::exists(kCalibrate)) GTEST_SKIP() << "moetwin-calibrate not built";
  const CliRun r = calibrate_import("deepep", "dp-negtime.log");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "dp-negtime.log:29: dispatch time: -544.47 us: ");
  EXPECT_HAS(r.err, "-544.47 us");
  EXPECT_HAS(r.err, "a positive time");
}

CliRun import_log(const std::string& path) {
  return moetwin("import megatron-log " + path + " --scenario " + kSource + "/scenarios/default.toml");
}

TEST_F(Reliability, MegatronLogTwoRunsReloggedIterationsAndWorldSize) {
  const CliRun two = import_log(kData + "mlog-tworuns-samelayout.log");
  EXPECT_EQ(two.code, 2) << two.err;
  EXPECT_HAS(two.err, "mlog-tworuns-samelayout.log:28: arguments: a second argument dump");
  EXPECT_HAS(two.err, "line 2");
  const CliRun dup = import_log(kData + "mlog-dupiter-diff.log");
  EXPECT_EQ(dup.code, 2) << dup.err;
  EXPECT_HAS(dup.err, "mlog-dupiter-diff.log:27: iteration 6: 300 s");
  EXPECT_HAS(dup.err, "line 24 (30 s)");
  const CliRun world = import_log(kData + "mlog-world.log");
  EXPECT_EQ(world.code, 2) << world.err;
  EXPECT_HAS(world.err, "mlog-world.log:17: world_size: 200: tp x pp x cp x dp = 256");
  EXPECT_TRUE(world.out.empty()) << world.out;
}

// A Megatron-LM log of DeepSeek-V3 (mlog-world.log with world_size 256 and the model's facts added),
// then each fact changed to another model's: refused with the key, both values and the line.
TEST_F(Reliability, MegatronLogOfAnotherModelIsRefused) {
  std::string base = read_text_file(kData + "mlog-world.log");
  const std::string bad_world = "world_size ...................................... 200";
  base.replace(base.find(bad_world), bad_world.size(),
               "world_size ...................................... 256");
  const std::string facts =
      "  num_experts ..................................... 256\n"
      "  moe_router_topk ................................. 8\n"
      "  hidden_size ..................................... 7168\n"
      "  ffn_hidden_size ................................. 18432\n"
      "  moe_ffn_hidden_size ............................. 2048\n"
      "  moe_shared_expert_intermediate_size ............. 2048\n"
      "  num_attention_heads ............................. 128\n"
      "  padded_vocab_size ............................... 130048\n";
  const std::string end = "-------------------- end of arguments";
  base.insert(base.find(end), facts);
  const fs::path good = work_dir() / "dsv3.log";
  std::ofstream(good) << base;
  const CliRun ok = import_log(good.string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_HAS(ok.out, "deepseek-v3");
  struct Case {
    std::string key, ours, theirs;
  };
  // Kimi-K2's values (catalog/data/models.toml) where they differ, made-up ones elsewhere.
  const std::vector<Case> cases = {{"num_experts", "256", "384"},
                                   {"moe_router_topk", "8", "6"},
                                   {"hidden_size", "7168", "4096"},
                                   {"ffn_hidden_size", "18432", "12288"},
                                   {"moe_ffn_hidden_size", "2048", "1536"},
                                   {"moe_shared_expert_intermediate_size", "2048", "4096"},
                                   {"num_attention_heads", "128", "64"},
                                   {"padded_vocab_size", "130048", "163840"},
                                   {"num_layers", "61", "48"}};
  for (const Case& c : cases) {
    std::string text = base;
    const std::size_t at = text.find("  " + c.key + " ...");
    ASSERT_NE(at, std::string::npos) << c.key;
    const std::size_t eol = text.find('\n', at);
    const std::size_t value = text.rfind(' ', eol) + 1;
    text.replace(value, eol - value, c.theirs);
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    const fs::path log = work_dir() / ("other-" + c.key + ".log");
    std::ofstream(log) << text;
    const CliRun r = import_log(log.string());
    EXPECT_EQ(r.code, 2) << c.key << ": " << r.err;
    EXPECT_HAS(r.err, log.filename().string() + ":" + std::to_string(line) + ": " + c.key + ": " + c.theirs +
                          ": " + c.ours);
    EXPECT_TRUE(r.out.empty()) << c.key << ": " << r.out;
  }
}

TEST_F(Reliability, LoggedTflopsAgainstTheModelsFlops) {
  const CliRun warn = moetwin("validate --runs " + kData + "tflops-x5.csv --format csv");
  EXPECT_EQ(warn.code, 0) << warn.err;
  EXPECT_HAS(warn.err, "warning: " + kData + "tflops-x5.csv:2: tflops_gpu: 425.5, expected ");
  const CliRun strict = moetwin("validate --runs " + kData + "tflops-x5.csv --strict");
  EXPECT_EQ(strict.code, 2) << strict.err;
  EXPECT_HAS(strict.err, "tflops-x5.csv:2: tflops_gpu: 425.5: ");
  const CliRun predict = moetwin("predict --runs " + kData + "tflops-x5.csv --strict");
  EXPECT_EQ(predict.code, 2) << predict.err;
  EXPECT_HAS(predict.err, "tflops-x5.csv:2: tflops_gpu: 425.5: ");
}

TEST_F(Reliability, DuplicateLiveRunRows) {
  const CliRun r = moetwin("validate --runs " + kData + "duprow-diff.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "duprow-diff.csv:3: iter_s: 20: one measurement per cell: ");
  EXPECT_HAS(r.err, "duprow-diff.csv:2");
}

TEST_F(Reliability, TinyTflopsIsAnErrorNotInf) {
  const CliRun r = moetwin("inspect --runs " + kData + "live-runs-tflops-1e-320.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "live-runs-tflops-1e-320.csv:");
  EXPECT_HAS(r.err, "tflops_gpu: 1e-320");
  EXPECT_FALSE(has(r.out, "inf"));
}

// --- 44.5 ------------------------------------------------------------------------------------------------

TEST_F(Reliability, ByteOrderMarkAccepted) {
  const CliRun r = moetwin("inspect --runs " + kData + "bom.csv");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_HAS(r.out, "dsv3-b300-32n-20260601");
}

TEST_F(Reliability, BenchErrorsNameFileAndLine) {
  const CliRun r = moetwin("dispatch --bench " + kData + "bench-ranks1e6.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_HAS(r.err, "bench-ranks1e6.csv:51: ranks: 1000000: an integer in [1, 65536]");
}

}  // namespace
}  // namespace moetwin
