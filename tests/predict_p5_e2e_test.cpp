// End-to-end golden test of a prediction on a third GPU generation and instance: the UCCL-EP cell of the p5
// H100 campaign (validate/data/live-runs-p5-h100.csv, Qwen3-30B-A3B on 8 p5.48xlarge, mb 4, overlap off),
// with the shipped fitted profile. On p5 UCCL-EP runs 1.72x the NCCL arm; a profile whose DeepEP terms were
// constants fitted on p6-b300 predicted it 47% too fast. The iteration is pinned to the nanosecond, and the
// text must name how the dispatcher's in-training terms were carried to p5 (issue 39).
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
const std::string kBinary = e2e::kMoetwin;

using e2e::run_moetwin_to;

// Golden value with the shipped profile (calibrate/profiles/fitted/live-fit.toml) and the measured row.
constexpr const char* kPredictedIterS = "11.945011";
constexpr double kMeasuredIterS = 14.81;  // live-runs-p5-h100.csv, deepep-uccl, mb 4, overlap off

TEST(PredictP5, GoldenIterationOfTheUcclCell) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_p5_e2e";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.csv", err = dir / "err.txt";
  ASSERT_EQ(
      run_moetwin_to("predict " + kSource + "/scenarios/live/qwen3-30b-h100-8n-20260622.toml --format csv",
                     out, err),
      0)
      << read_text_file(err.string());
  const CsvTable t = read_csv_file(out.string());
  ASSERT_EQ(t.rows.size(), 1u);
  const std::string predicted = t.rows[0].fields.at(t.column("predicted_iter_s"));
  EXPECT_EQ(predicted, kPredictedIterS);
  // In sample, the row is the campaign's worst (p5's low-latency rows carry UCCL-EP's per-copy cost, not all
  // of its in-training cost): within 25%.
  EXPECT_NEAR(std::stod(predicted) / kMeasuredIterS, 1.0, 0.25);
  // The same row through --runs gives the same time: the scenario file is that row.
  const fs::path rows = dir / "rows.csv";
  ASSERT_EQ(run_moetwin_to("predict --runs " + kSource + "/validate/data/live-runs-p5-h100.csv --format csv",
                           rows, err),
            0)
      << read_text_file(err.string());
  const CsvTable r = read_csv_file(rows.string());
  ASSERT_EQ(r.rows.size(), 9u);
  EXPECT_EQ(r.rows[1].fields.at(r.column("dispatcher")), "deepep-uccl");
  EXPECT_EQ(r.rows[1].fields.at(r.column("predicted_iter_s")), predicted);
  // UCCL-EP's lead over NCCL on this cell (measured 1.72x) is predicted as a loss, not a win.
  const double nccl = std::stod(r.rows[0].fields.at(r.column("predicted_iter_s")));
  EXPECT_GT(std::stod(predicted) / nccl, 1.3);
}

TEST(PredictP5, TextNamesHowTheDispatcherTermsTransfer) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_p5_e2e_text";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  ASSERT_EQ(
      run_moetwin_to("predict " + kSource + "/scenarios/live/qwen3-30b-h100-8n-20260622.toml", out, err), 0)
      << read_text_file(err.string());
  const std::string text = read_text_file(out.string());
  EXPECT_NE(
      text.find("dispatcher terms   own fitted in-training terms; on p5.48xlarge per-node and per-token "
                "terms x"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("on p6-b300.48xlarge, from the instances' low-latency kernel benchmarks), per-call x1.35 "
                "(host CPU)"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace moetwin
