#include "moetwin/validate/megatron_log.hpp"

#include <gtest/gtest.h>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kData = std::string(MOETWIN_SOURCE_DIR) + "/validate/tests/data/";

std::string error_of(const std::string& text, const LogImportOptions& options) {
  try {
    import_megatron_log(text, "x.log", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

LogImportOptions dsv3_options() {
  LogImportOptions o;
  o.model = "deepseek-v3";
  o.instance = "p6-b300.48xlarge";
  return o;
}

// A minimal argument dump for the error cases below.
const std::string kArgs =
    "  tensor_model_parallel_size .... 8\n  pipeline_model_parallel_size .... 1\n"
    "  data_parallel_size .... 1\n  micro_batch_size .... 1\n  global_batch_size .... 8\n"
    "  seq_length .... 4096\n  num_layers .... 4\n  moe_token_dispatcher_type .... alltoall\n";

std::string lm_line(int it, const std::string& ms) {
  return " iteration " + std::to_string(it) +
         "/ 10 | consumed samples: 8 | elapsed time per iteration (ms): " + ms +
         " | throughput per GPU (TFLOP/s/GPU): 100.0 |\n";
}

TEST(MegatronLog, MegatronLmSteadyStateStatsAndLayout) {
  const ImportedRun run = import_megatron_log(read_text_file(kData + "megatron-lm-dsv3.log"),
                                              "megatron-lm-dsv3.log", dsv3_options());
  ASSERT_EQ(run.samples.size(), 7u);
  EXPECT_EQ(run.steady_count, 4);
  // Steady state = iterations 4..7: 9.7, 9.8, 30.0, 9.75 s.
  EXPECT_DOUBLE_EQ(run.mean_iter_s, (9.7 + 9.8 + 30.0 + 9.75) / 4);
  EXPECT_DOUBLE_EQ(run.median_iter_s, (9.75 + 9.8) / 2);
  EXPECT_DOUBLE_EQ(run.mean_tflops_gpu, (110.0 + 108.9 + 35.6 + 109.5) / 4);
  ASSERT_EQ(run.stalls.size(), 1u);
  EXPECT_EQ(run.stalls[0].iteration, 6);
  EXPECT_EQ(run.stalls[0].line, 24);
  const std::vector<std::string> expected = {"megatron-lm-dsv3",
                                             "deepseek-v3",
                                             "p6-b300.48xlarge",
                                             "32",
                                             "256",
                                             "8",
                                             "8",
                                             "1",
                                             "32",
                                             "1",
                                             "4",
                                             "4",
                                             "256",
                                             "4096",
                                             "61",
                                             "full",
                                             "off",
                                             "nccl-alltoall",
                                             "14.8125",
                                             "91.0",
                                             "megatron-lm-dsv3.log"};
  EXPECT_EQ(run.row, expected);
  EXPECT_EQ(run.header, live_run_columns());
}

TEST(MegatronLog, BridgeStepTimeLinesNeedDispatcherForFlex) {
  const std::string text = read_text_file(kData + "bridge-kimi.log");
  LogImportOptions o;
  o.model = "kimi-k2";
  o.instance = "p6-b300.48xlarge";
  EXPECT_EQ(
      error_of(text, o),
      "x.log:15: moe_token_dispatcher_type: \"flex\": alltoall, or pass --dispatcher (the log cannot tell "
      "which DeepEP backend served 'flex')");
  o.dispatcher = "deepep-uccl";
  const ImportedRun run = import_megatron_log(text, "bridge-kimi.log", o);
  EXPECT_EQ(run.samples.size(), 6u);
  EXPECT_EQ(run.row[7], "2");        // vpp
  EXPECT_EQ(run.row[15], "none");    // recompute None
  EXPECT_EQ(run.row[16], "on");      // overlap
  EXPECT_EQ(run.row[18], "3.8367");  // mean of 3.84, 3.82, 3.85
  EXPECT_EQ(run.row[19], "218.7");   // mean of 218.5, 219.6, 217.9
  EXPECT_TRUE(run.stalls.empty());
}

TEST(MegatronLog, GarbledElapsedTimeNamesLine) {
  const std::string bad = kArgs + lm_line(1, "12.0") + lm_line(2, "abc");
  EXPECT_EQ(error_of(bad, dsv3_options()),
            "x.log:10: elapsed time per iteration (ms): \"abc | throughput per\": a non-negative number "
            "(garbled or "
            "truncated line)");
}

// Found by the fuzz smoke (CI, 2026-11-29): a garbled line with a 0 ms elapsed time was accepted and
// imported as a 0 s iteration.
TEST(MegatronLog, ZeroIterationTimeIsAnError) {
  const std::string zero = kArgs + lm_line(1, "12.0") + lm_line(2, "0");
  EXPECT_EQ(error_of(zero, dsv3_options()),
            "x.log:10: elapsed time per iteration (ms): 0: a positive time (no iteration takes 0; garbled or "
            "truncated line)");
  EXPECT_EQ(error_of(kArgs + "Step Time : 0.0s\n", dsv3_options()),
            "x.log:9: Step Time: 0: a positive time (no iteration takes 0; garbled or truncated line)");
}

TEST(MegatronLog, TruncatedTailIsAnError) {
  std::string text = kArgs;
  for (int i = 1; i <= 5; ++i) text += lm_line(i, "1000.0");
  text += " iteration 6/ 10 | consumed samples: 48 | elapsed ti";
  EXPECT_EQ(error_of(text, dsv3_options()),
            "x.log:14: iteration line: truncated: an 'elapsed time per iteration (ms)' field (the line is "
            "cut; remove "
            "it or fix the log)");
  std::string cut_value = kArgs + lm_line(1, "1000.0") +
                          " iteration 2/ 10 | consumed samples: 16 | elapsed time per iteration (ms):";
  EXPECT_EQ(
      error_of(cut_value, dsv3_options()),
      "x.log:10: elapsed time per iteration (ms): \"\": a non-negative number (garbled or truncated line)");
}

TEST(MegatronLog, BridgeUtilisationWithoutUnitIsTruncated) {
  const std::string text = kArgs + "Step Time : 3.0s GPU utilization: 12\n";
  EXPECT_EQ(error_of(text, dsv3_options()),
            "x.log:9: GPU utilization: no unit: a value followed by MODEL_TFLOP/s/GPU (truncated line)");
}

TEST(MegatronLog, ContradictoryArgumentsAndMissingPieces) {
  EXPECT_EQ(error_of(kArgs + "  micro_batch_size .... 2\n" + lm_line(1, "5.0"), dsv3_options()),
            "x.log:9: micro_batch_size: 2: the value logged earlier at line 4 (\"1\"): contradictory "
            "arguments in one "
            "log");
  EXPECT_EQ(
      error_of(kArgs, dsv3_options()),
      "x.log: no iteration lines (expected Megatron-LM 'elapsed time per iteration (ms)' or Megatron-Bridge "
      "'Step Time :' lines)");
  EXPECT_EQ(error_of(kArgs + lm_line(1, "5.0") + lm_line(2, "5.0"), dsv3_options()),
            "x.log:10: iterations: 2: more than the 3 warm-up iterations dropped (--skip-first)");
  std::string five = kArgs;
  for (int i = 1; i <= 5; ++i) five += lm_line(i, "5.0");
  LogImportOptions no_model = dsv3_options();
  no_model.model.clear();
  EXPECT_EQ(error_of(five, no_model), "x.log: model: not logged: pass --model (a catalog model name)");
  EXPECT_EQ(
      error_of(lm_line(1, "5") + lm_line(2, "5") + lm_line(3, "5") + lm_line(4, "5"), dsv3_options()),
      "x.log: tensor_model_parallel_size: not logged: the argument in the log's argument dump, or pass a log "
      "with arguments");
  std::string eight = five;
  eight.replace(eight.find("8\n"), 1, "eight");
  EXPECT_EQ(error_of(eight, dsv3_options()),
            "x.log:1: tensor_model_parallel_size: \"eight\": a non-negative integer or None");
}

}  // namespace
}  // namespace moetwin
