// End-to-end golden test of a prediction on another GPU, instance, software stack and precision than the
// B300 runs: the p5en cell of shared/data/live-runs-p5en.csv (H200, Megatron-LM core_r0.17.0 / NCCL 2.28.9,
// FP8 hybrid, NCCL_MAX_NCHANNELS 16) with the shipped fitted profile and the shipped H200 calibration.
// The predicted iteration is pinned to the nanosecond: a change of any mechanism on this path (FP8 GEMM
// curves, the stack's P2P chunk, the padded alltoall, host time scaled by the 8488C, the stack-scoped
// scale) shows here, and must be an intended one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "moetwin/e2e/cli_run.hpp"
#include "moetwin/e2e/predict_csv.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;
const std::string kBinary = e2e::kMoetwin;
const std::string kScenario = kSource + "/scenarios/live/uccl-p5en-4n-20260430.toml";

// Golden values with the shipped profile (calibrate/profiles/fitted/live-fit.toml) and the measured row.
constexpr const char* kPredictedIterS = "1.153063";
constexpr double kMeasuredIterS = 1.190;  // live-runs-p5en.csv, nccl-alltoall, NCCL_MAX_NCHANNELS 16

TEST(PredictP5en, GoldenIterationOfTheP5enCell) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = e2e::fresh_test_dir("predict_p5en");
  // Within 10% of the measured run: the bar a prediction on another stack, GPU and precision must clear.
  // Row 2 of the campaign's table is this cell.
  CsvTable r;
  ASSERT_NO_FATAL_FAILURE(e2e::expect_golden_cell(
      {kScenario, kPredictedIterS, kMeasuredIterS, 0.10, kSource + "/validate/data/live-runs-p5en.csv", 8, 2},
      dir, &r));
  EXPECT_EQ(e2e::field(r, 2, "nccl_max_nchannels"), "16");
}

TEST(PredictP5en, TextSaysStackPrecisionAndChunk) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = e2e::fresh_test_dir("predict_p5en");
  const e2e::CliRun run = e2e::run_moetwin("predict " + kScenario, dir);
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("megatron-lm-core_r0.17.0-nccl2.28.9, NCCL P2P net chunk 512 KiB (aws-ofi-nccl "
                         "platform-aws default on p5en.48xlarge), alltoall padded to capacity"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("fp8-hybrid"), std::string::npos) << run.out;
  // The default scenario names its defaulted stack and NeMo's 128 KiB chunk.
  const e2e::CliRun def = e2e::run_moetwin("predict " + kSource + "/scenarios/default.toml", dir);
  ASSERT_EQ(def.code, 0) << def.err;
  EXPECT_NE(
      def.out.find("nemo-26.04.01 (default: no [stack] table), NCCL P2P net chunk 128 KiB (NCCL's default: "
                   "aws-ofi-nccl built without platform-aws)"),
      std::string::npos);
}

}  // namespace
}  // namespace moetwin
