#include "moetwin/validate/megatron_log.hpp"

#include <gtest/gtest.h>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

const std::string kData = std::string(MOETWIN_SOURCE_DIR) + "/validate/tests/data/";

std::string error_of(const std::string& text, const LogImportOptions& options) {
  return test_support::error_of([&] { import_megatron_log(text, "x.log", options); });
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
  LogImportOptions o = dsv3_options();
  o.skip_first = 3;
  const ImportedRun run =
      import_megatron_log(read_text_file(kData + "megatron-lm-dsv3.log"), "megatron-lm-dsv3.log", o);
  ASSERT_EQ(run.samples.size(), 7u);
  EXPECT_EQ(run.steady_count, 4);
  // Steady state = iterations 4..7: 9.7, 9.8, 30.0, 9.75 s.
  EXPECT_DOUBLE_EQ(run.mean_iter_s, (9.7 + 9.8 + 30.0 + 9.75) / 4);
  EXPECT_DOUBLE_EQ(run.median_iter_s, (9.75 + 9.8) / 2);
  EXPECT_DOUBLE_EQ(run.mean_tflops_gpu, (110.0 + 108.9 + 35.6 + 109.5) / 4);
  EXPECT_DOUBLE_EQ(run.median_tflops_gpu, (108.9 + 109.5) / 2);
  EXPECT_FALSE(run.warmup_auto);
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
                                             "9.7750",
                                             "109.2",
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
  EXPECT_EQ(run.row[7], "2");      // vpp
  EXPECT_EQ(run.row[15], "none");  // recompute None
  EXPECT_EQ(run.row[16], "on");    // overlap
  // Automatic warm-up: 9.12 and 4.10 s are above 1.05 x 3.84 s (the median of the second half).
  EXPECT_EQ(run.warmup_dropped, 2);
  EXPECT_EQ(run.row[18], "3.8450");  // median of 3.90, 3.84, 3.82, 3.85
  EXPECT_EQ(run.row[19], "218.2");   // median of 215.1, 218.5, 219.6, 217.9
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
  EXPECT_EQ(
      error_of(text, dsv3_options()),
      "x.log:9: GPU utilization: \"12\": TFLOP/s/GPU or MODEL_TFLOP/s/GPU right after the value (the line "
      "is cut inside or right after the number; fix or remove it)");
}

TEST(MegatronLog, ContradictoryArgumentsAndMissingPieces) {
  EXPECT_EQ(error_of(kArgs + "  micro_batch_size .... 2\n" + lm_line(1, "5.0"), dsv3_options()),
            "x.log:9: micro_batch_size: 2: the value logged earlier at line 4 (\"1\"): contradictory "
            "arguments in one "
            "log");
  EXPECT_EQ(
      error_of(kArgs, dsv3_options()),
      "x.log: no iteration lines (expected Megatron-LM 'elapsed time per iteration (ms)', Megatron-Bridge "
      "'Step Time :' or NeMo 'train_step_timing in s:' lines)");
  LogImportOptions skip3 = dsv3_options();
  skip3.skip_first = 3;
  EXPECT_EQ(error_of(kArgs + lm_line(1, "5.0") + lm_line(2, "5.0"), skip3),
            "x.log:10: iterations: 2: more than the 3 warm-up iterations dropped (--skip-first)");
  std::string five = kArgs;
  for (int i = 1; i <= 5; ++i) five += lm_line(i, "5.0");
  LogImportOptions no_model = dsv3_options();
  no_model.model.clear();
  EXPECT_EQ(error_of(five, no_model),
            "x.log: model: not logged: pass --scenario FILE.toml or --model (a catalog model name)");
  EXPECT_EQ(
      error_of(lm_line(1, "5") + lm_line(2, "5") + lm_line(3, "5") + lm_line(4, "5"), dsv3_options()),
      "x.log: tensor_model_parallel_size: not logged: pass --scenario FILE.toml or --tp (the log prints no "
      "tensor_model_parallel_size)");
  std::string eight = five;
  eight.replace(eight.find("8\n"), 1, "eight");
  EXPECT_EQ(error_of(eight, dsv3_options()),
            "x.log:1: tensor_model_parallel_size: \"eight\": a non-negative integer or None");
}

// Golden tests on real logs (validate/tests/data/real-logs/, sources in SOURCES.md there).
const std::string kReal = kData + "real-logs/";

TEST(MegatronLogRealLogs, MegatronLmQwen2DumpAndIntervalLines) {
  LogImportOptions o;
  o.model = "qwen3-30b-a3b";  // stand-in catalog names: the library does not look them up
  o.instance = "p5en.48xlarge";
  o.nodes = 1;
  const std::string path = kReal + "megatron_lm_2024-07_qwen2-0.5b_dp2_msswift.log";
  const ImportedRun run = read_megatron_log_timing(read_text_file(path), path, o);
  ASSERT_EQ(run.samples.size(), 12u);  // iterations 10, 20, ..., 120 (log interval 10)
  EXPECT_EQ(run.warmup_dropped, 3);    // 10, 20, 30 (8195.9, 786.2, 779.4 ms)
  EXPECT_EQ(run.samples[3].iteration, 40);
  EXPECT_EQ(run.steady_count, 9);
  EXPECT_NEAR(run.median_iter_s, 0.7172, 1e-12);
  EXPECT_NEAR(run.mean_iter_s, 0.7168, 5e-5);
  EXPECT_EQ(run.median_tflops_gpu, 0);  // TFLOP/s not logged
  EXPECT_TRUE(run.stalls.empty());
  // tp1 pp1 dp2 mb1 gbs8 seq128, 24 layers: a given layout that agrees passes every check, and the row is
  // refused only for the dispatcher (this dense run logs Megatron's allgather, which the twin does not
  // model).
  o.given = {"scenario s.toml", 1, 1, 1, 1, 1, 1, 2, 1, 8, 128, 24, std::string("selective"), false};
  o.dispatcher = "nccl-alltoall";
  EXPECT_EQ(error_of(read_text_file(path), o),
            "x.log:189: moe_token_dispatcher_type: \"allgather\": alltoall or flex (the dispatchers the twin "
            "models)");
  o.given.seq = 4096;
  EXPECT_EQ(
      error_of(read_text_file(path), o),
      "x.log:262: seq_length: 128: 4096 (seq from scenario s.toml): the log and the given layout disagree");
}

TEST(MegatronLogRealLogs, BridgeStepTimeWithScenarioLayout) {
  const std::string path = kReal + "megatron_bridge_2026-07_dsv3-16L_gb200_steptime_run5.log";
  const std::string text = read_text_file(path);
  const ImportedRun timing = read_megatron_log_timing(text, path, LogImportOptions{});
  ASSERT_EQ(timing.samples.size(), 20u);
  EXPECT_EQ(timing.warmup_dropped, 4);  // JIT warm-up and graph capture
  EXPECT_DOUBLE_EQ(timing.median_iter_s, 2.23);
  ASSERT_EQ(timing.stalls.size(), 3u);  // the VPP spikes 3.54, 3.47, 3.45 s
  EXPECT_EQ(timing.stalls[0].iteration, 6);
  EXPECT_DOUBLE_EQ(timing.stalls[2].iter_s, 3.45);
  EXPECT_DOUBLE_EQ(timing.median_tflops_gpu, 1174.5);
  // No argument dump: without a layout the row is refused, with one it is built.
  EXPECT_EQ(
      error_of(text, LogImportOptions{}),
      "x.log: tensor_model_parallel_size: not logged: pass --scenario FILE.toml or --tp (the log prints "
      "no tensor_model_parallel_size)");
  LogImportOptions o;
  o.model = "deepseek-v3";
  o.instance = "p6-b200.48xlarge";
  o.dispatcher = "deepep-nvshmem";
  o.gpus_per_node = 4;
  o.given = {"scenario s.toml", 1, 4, 2, 8, 1, 1, 16, 1, 1024, 4096, 16, std::string("none"), false};
  const ImportedRun run = import_megatron_log(text, path, o);
  EXPECT_EQ(run.row[3], "16");  // 64 GPUs / 4 per node
  EXPECT_EQ(run.row[4], "64");
  EXPECT_EQ(run.row[18], "2.2300");
}

TEST(MegatronLogRealLogs, NemoTrainStepTimingTooFewForWarmup) {
  const std::string path = kReal + "nemo2_2025-11_llama3-8b_train_step_timing_excerpt.log";
  const ImportedRun run = read_megatron_log_timing(read_text_file(path), path, LogImportOptions{});
  ASSERT_EQ(run.samples.size(), 2u);
  EXPECT_EQ(run.samples[0].iteration, 97);
  EXPECT_DOUBLE_EQ(run.samples[0].iter_s, 12.22);
  EXPECT_DOUBLE_EQ(run.samples[1].iter_s, 12.21);
  EXPECT_EQ(run.warmup_dropped, 0);
  ASSERT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run.notes[0],
            "only 2 iterations (from iteration 97): too few to tell warm-up from steady state, none dropped");
}

// The cut line: "717.2" cut to "71" must not import as 71 ms.
TEST(MegatronLog, NumberCutByEndOfLineOrFileIsAnError) {
  std::string text = kArgs + lm_line(1, "700.0");
  EXPECT_EQ(
      error_of(text + " iteration 2/ 10 | consumed samples: 16 | elapsed time per iteration (ms): 71",
               dsv3_options()),
      "x.log:10: elapsed time per iteration (ms): \"71\": ' |' after the value (the line is cut inside or "
      "right after the number; fix or remove it)");
  EXPECT_EQ(
      error_of(text + "Step Time : 2.2", dsv3_options()),
      "x.log:10: Step Time: \"2.2\": 's' right after the value (the line is cut inside or right after the "
      "number; fix or remove it)");
  EXPECT_EQ(error_of(text + "Step Time : 2.25s GPU utilization: 117", dsv3_options()),
            "x.log:10: GPU utilization: \"117\": TFLOP/s/GPU or MODEL_TFLOP/s/GPU right after the value (the "
            "line is cut inside or right after the number; fix or remove it)");
  const std::string nemo = "Training epoch 0, iteration 5/9 | train_step_timing in s: 12.2";
  EXPECT_EQ(
      error_of(kArgs + nemo, dsv3_options()),
      "x.log:9: train_step_timing in s: \"12.2\": ' |' or the end of a complete line after the value (the "
      "line is cut inside or right after the number; fix or remove it)");
  EXPECT_EQ(read_megatron_log_timing(nemo + "\n", "x.log", LogImportOptions{}).samples.at(0).iter_s, 12.2);
}

// Bridge prints a numbered iteration line and a Step Time line per iteration; ranks repeat lines.
TEST(MegatronLog, EachIterationCountedOnce) {
  std::string text = kArgs;
  for (int i = 1; i <= 6; ++i) {
    const std::string ms = i == 1 ? "9000.0" : "1000.0";
    text += " iteration " + std::to_string(i) +
            "/ 10 | consumed samples: 8 | elapsed time per iteration (ms): " + ms + " | lm loss: 1.0 |\n";
    text += "[rank0]: Step Time : " + ms.substr(0, ms.size() - 5) + ".0s GPU utilization: 50.0TFLOP/s/GPU\n";
    if (i == 3)
      text += "[rank1]: iteration 3/ 10 | consumed samples: 8 | elapsed time per iteration (ms): 1000.0 |\n";
  }
  const ImportedRun run = import_megatron_log(text, "x.log", dsv3_options());
  ASSERT_EQ(run.samples.size(), 6u);
  EXPECT_EQ(run.warmup_dropped, 1);
  EXPECT_DOUBLE_EQ(run.median_iter_s, 1.0);
  EXPECT_DOUBLE_EQ(run.median_tflops_gpu, 50.0);  // lent by the Step Time lines
  ASSERT_EQ(run.notes.size(), 2u);
  EXPECT_EQ(run.notes[0],
            "6 'Step Time' lines not counted: the numbered iteration lines time the same iterations");
  EXPECT_EQ(run.notes[1],
            "1 iteration lines repeat an iteration number already counted (several ranks or loggers): each "
            "iteration counted once, at its first line");
  // --skip-first counts iterations: 2 drops iterations 1 and 2, whatever lines print them.
  LogImportOptions o = dsv3_options();
  o.skip_first = 2;
  EXPECT_EQ(import_megatron_log(text, "x.log", o).steady_count, 4);
}

// Bridge's config print (YAML in 0.2, "name: value (Mcore default: ...)" now) gives the layout, and what it
// prints must agree with the given layout.
TEST(MegatronLog, BridgeConfigLinesAndGivenLayoutMismatch) {
  const std::string config =
      "model:\n  tensor_model_parallel_size: 2\n  pipeline_model_parallel_size: 1 (Mcore default: 1)\n"
      "  num_layers: 4\n  seq_length: 4096\n  moe_token_dispatcher_type: alltoall\n"
      "  recompute_granularity: null\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 16\n";
  std::string steps;
  for (int i = 0; i < 5; ++i) steps += "Step Time : 1.00s GPU utilization: 10.0MODEL_TFLOP/s/GPU\n";
  LogImportOptions o = dsv3_options();
  o.given.dp = 4;
  o.given.source = "scenario s.toml";
  const ImportedRun run = import_megatron_log(config + steps, "x.log", o);
  const std::vector<std::string> layout(run.row.begin() + 3, run.row.begin() + 18);
  EXPECT_EQ(layout, (std::vector<std::string>{"1", "8", "2", "1", "1", "1", "2", "4", "1", "16", "4096", "4",
                                              "none", "off", "nccl-alltoall"}));
  o.given.tp = 4;
  EXPECT_EQ(
      error_of(config + steps, o),
      "x.log:2: tensor_model_parallel_size: 2: 4 (tp from scenario s.toml): the log and the given layout "
      "disagree");
  o.given.tp.reset();
  o.dispatcher = "deepep-uccl";
  EXPECT_EQ(
      error_of(config + steps, o),
      "x.log:6: moe_token_dispatcher_type: alltoall: a DeepEP dispatcher, as the given deepep-uccl (the log "
      "and the given dispatcher disagree)");
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// Issue 43.4: every model fact the log prints is checked against the expected model; a dense model's log
// prints router defaults that are not checked.
TEST(MegatronLog, ModelFactsMustBeTheExpectedModels) {
  LogImportOptions o = dsv3_options();
  o.model_facts.source = "model deepseek-v3";
  o.model_facts.experts = 256;
  o.model_facts.top_k = 8;
  o.model_facts.hidden = 7168;
  o.model_facts.heads = 128;
  std::string text = kArgs + "  num_experts .... 256\n  moe_router_topk .... 8\n  hidden_size .... 7168\n";
  for (int i = 1; i <= 4; ++i) text += lm_line(i, "1000.0");
  EXPECT_EQ(error_of(text, o), "no error");
  std::string kimi = text;
  kimi.replace(kimi.find("num_experts .... 256"), 20, "num_experts .... 384");
  EXPECT_EQ(
      error_of(kimi, o),
      "x.log:9: num_experts: 384: 256 (routed experts of model deepseek-v3): the log is of another model; "
      "pass the matching --scenario or --model");
  std::string bridge = text;  // Megatron-Bridge names it num_moe_experts
  bridge.replace(bridge.find("num_experts .... 256"), 20, "num_moe_experts .... 64");
  EXPECT_EQ(error_of(bridge, o).substr(0, 29), "x.log:9: num_moe_experts: 64:");
  std::string dense = text;  // a dense log: None experts, its top-k default not compared
  dense.replace(dense.find("num_experts .... 256"), 20, "num_experts .... None");
  dense.replace(dense.find("moe_router_topk .... 8"), 22, "moe_router_topk .... 2");
  EXPECT_EQ(error_of(dense, o).substr(0, 27), "x.log:9: num_experts: 0: 25");
  o.model_facts.experts = 0;
  o.model_facts.top_k.reset();
  EXPECT_EQ(error_of(dense, o), "no error");
}

// Issue 44.4: one log, one run.
TEST(MegatronLog, SecondRunOrReloggedIterationIsRefused) {
  std::string text = "---- arguments ----\n" + kArgs + "---- end of arguments ----\n";
  for (int i = 1; i <= 4; ++i) text += lm_line(i, "1000.0");
  EXPECT_EQ(error_of(text, dsv3_options()), "no error");
  EXPECT_EQ(error_of(text + lm_line(3, "1000.0"), dsv3_options()), "no error");  // a copy: counted once
  EXPECT_EQ(error_of(text + lm_line(3, "10000.0"), dsv3_options()),
            "x.log:15: iteration 3: 10 s: the time logged for it at line 13 (1 s) within 1%: an iteration "
            "logged twice at different times (two runs or a resumed run in one log: split it)");
  EXPECT_EQ(error_of(text + text, dsv3_options()).substr(0, 53),
            "x.log:15: arguments: a second argument dump: one run ");
  std::string world = kArgs + "  world_size .... 16\n";
  for (int i = 1; i <= 4; ++i) world += lm_line(i, "1000.0");
  EXPECT_EQ(error_of(world, dsv3_options()).substr(0, 46), "x.log:9: world_size: 16: tp x pp x cp x dp = 8");
}

}  // namespace
}  // namespace moetwin
