// End-to-end golden test of a prediction on another GPU, instance, software stack and precision than the
// B300 runs: the p5en cell of shared/data/live-runs-p5en.csv (H200, Megatron-LM core_r0.17.0 / NCCL 2.28.9,
// FP8 hybrid, NCCL_MAX_NCHANNELS 16) with the shipped fitted profile and the shipped H200 calibration.
// The predicted iteration is pinned to the nanosecond: a change of any mechanism on this path (FP8 GEMM
// curves, the stack's P2P chunk, the padded alltoall, host time scaled by the 8488C, the stack-scoped
// scale) shows here, and must be an intended one.
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

// Golden values with the shipped profile (calibrate/profiles/fitted/live-fit.toml) and the measured row.
constexpr const char* kPredictedIterS = "1.153031";
constexpr double kMeasuredIterS = 1.190;  // live-runs-p5en.csv, nccl-alltoall, NCCL_MAX_NCHANNELS 16

TEST(PredictP5en, GoldenIterationOfTheP5enCell) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_p5en_e2e";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.csv", err = dir / "err.txt";
  ASSERT_EQ(run_moetwin_to("predict " + kSource + "/scenarios/live/uccl-p5en-4n-20260430.toml --format csv",
                           out, err),
            0)
      << read_text_file(err.string());
  const CsvTable t = read_csv_file(out.string());
  ASSERT_EQ(t.rows.size(), 1u);
  const std::string predicted = t.rows[0].fields.at(t.column("predicted_iter_s"));
  EXPECT_EQ(predicted, kPredictedIterS);
  // Within 10% of the measured run: the bar a prediction on another stack, GPU and precision must clear.
  EXPECT_NEAR(std::stod(predicted) / kMeasuredIterS, 1.0, 0.10);
  // The same row through --runs gives the same time: the scenario file is that row.
  const fs::path rows = dir / "rows.csv";
  ASSERT_EQ(run_moetwin_to("predict --runs " + kSource + "/validate/data/live-runs-p5en.csv --format csv",
                           rows, err),
            0)
      << read_text_file(err.string());
  const CsvTable r = read_csv_file(rows.string());
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_EQ(r.rows[2].fields.at(r.column("nccl_max_nchannels")), "16");
  EXPECT_EQ(r.rows[2].fields.at(r.column("predicted_iter_s")), predicted);
}

TEST(PredictP5en, TextSaysStackPrecisionAndChunk) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_p5en_e2e_text";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  ASSERT_EQ(run_moetwin_to("predict " + kSource + "/scenarios/live/uccl-p5en-4n-20260430.toml", out, err), 0)
      << read_text_file(err.string());
  const std::string text = read_text_file(out.string());
  EXPECT_NE(text.find("megatron-lm-core_r0.17.0-nccl2.28.9, NCCL P2P net chunk 512 KiB (aws-ofi-nccl "
                      "platform-aws default on p5en.48xlarge), alltoall padded to capacity"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fp8-hybrid"), std::string::npos) << text;
  // The default scenario names its defaulted stack and NeMo's 128 KiB chunk.
  ASSERT_EQ(run_moetwin_to("predict " + kSource + "/scenarios/default.toml", out, err), 0)
      << read_text_file(err.string());
  EXPECT_NE(
      read_text_file(out.string())
          .find("nemo-26.04.01 (default: no [stack] table), NCCL P2P net chunk 128 KiB (NCCL's default: "
                "aws-ofi-nccl built without platform-aws)"),
      std::string::npos);
}

}  // namespace
}  // namespace moetwin
