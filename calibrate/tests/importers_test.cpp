#include "moetwin/calibrate/importers.hpp"

#include <gtest/gtest.h>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

std::string data_path(const std::string& name) {
  return std::string(MOETWIN_SOURCE_DIR) + "/calibrate/tests/data/" + name;
}

const Experiment& find(const std::vector<Experiment>& all, const std::string& name) {
  for (const Experiment& e : all) {
    if (e.name == name) return e;
  }
  throw std::out_of_range("no experiment " + name);
}

using test_support::error_of;

TEST(NcclTestsImport, ReadsEveryColumnOfBothPlacements) {
  const std::string path = data_path("all_reduce_perf_8gpu.txt");
  const auto all = import_nccl_tests(read_text_file(path), path, {"all_reduce"}).experiments;
  ASSERT_EQ(all.size(), 21u);  // 10 rows x 2 placements + the average line
  const Experiment& oop = find(all, "nccl_tests.all_reduce.all_reduce_perf_8gpu.134217728.out_of_place");
  EXPECT_EQ(oop.kind, "nccl_tests");
  EXPECT_EQ(oop.labels.at("op"), "all_reduce");
  EXPECT_EQ(oop.labels.at("type"), "float");
  EXPECT_EQ(oop.labels.at("redop"), "sum");
  EXPECT_DOUBLE_EQ(oop.param("size_bytes"), 134217728);
  EXPECT_DOUBLE_EQ(oop.param("count"), 33554432);
  EXPECT_DOUBLE_EQ(oop.param("root"), -1);
  EXPECT_DOUBLE_EQ(oop.param("algbw_Bps"), 171.96e9);
  EXPECT_DOUBLE_EQ(oop.param("busbw_Bps"), 300.94e9);
  EXPECT_DOUBLE_EQ(oop.param("wrong"), 0);
  EXPECT_DOUBLE_EQ(oop.param("ranks"), 8);
  EXPECT_DOUBLE_EQ(oop.param("line"), 24);
  ASSERT_EQ(oop.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(oop.samples[0], 780.50e-6);
  const Experiment& ip = find(all, "nccl_tests.all_reduce.all_reduce_perf_8gpu.134217728.in_place");
  EXPECT_DOUBLE_EQ(ip.samples[0], 779.10e-6);
  EXPECT_DOUBLE_EQ(ip.param("busbw_Bps"), 301.48e9);
  const Experiment& avg = find(all, "nccl_tests.all_reduce.all_reduce_perf_8gpu.avg_busbw");
  EXPECT_DOUBLE_EQ(avg.samples[0], 92.3745e9);
}

TEST(NcclTestsImport, NotANumberWrongAndInterleavedLogLines) {
  const std::string path = data_path("alltoall_perf_nocheck.txt");
  const auto all = import_nccl_tests(read_text_file(path), path, {"alltoall"}).experiments;
  ASSERT_EQ(all.size(), 7u);
  const Experiment& e = find(all, "nccl_tests.alltoall.alltoall_perf_nocheck.4194304.in_place");
  EXPECT_EQ(e.labels.at("wrong"), "N/A");
  EXPECT_EQ(e.params.count("wrong"), 0u);
  EXPECT_EQ(e.labels.at("redop"), "none");
  EXPECT_DOUBLE_EQ(e.param("ranks"), 2);
  EXPECT_DOUBLE_EQ(e.samples[0], 61.00e-6);
}

TEST(NcclTestsImport, OpNeverFromTheFileName) {
  const std::string path = data_path("alltoall_perf_nocheck.txt");
  const auto all = import_nccl_tests(read_text_file(path), path, {"sendrecv"}).experiments;
  EXPECT_EQ(all.front().labels.at("op"), "sendrecv");
  EXPECT_EQ(
      error_of([&] { import_nccl_tests(read_text_file(path), path, {}); }),
      path +
          ":9: op: not in the log: pass --op (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, "
          "...): no '# Collective test starting' line, 'Running:' line or *_perf command before this table");
}

TEST(NcclTestsImport, TruncatedRowNamesFileAndLine) {
  const std::string path = data_path("all_reduce_perf_truncated.txt");
  const std::string message =
      error_of([&] { import_nccl_tests(read_text_file(path), path, {"all_reduce"}); });
  EXPECT_NE(message.find("all_reduce_perf_truncated.txt:18: row"), std::string::npos) << message;
  EXPECT_NE(message.find("13 columns"), std::string::npos) << message;
}

TEST(NcclTestsImport, HeaderOnlyAndNoHeaderAreErrors) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n";
  EXPECT_NE(error_of([&] {
              import_nccl_tests(header, "x_all_reduce.txt", {});
            }).find("x_all_reduce.txt:1: no data rows"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              import_nccl_tests("8 2 float sum -1 1 1 1 0 1 1 1 0\n", "ar.txt", {"all_reduce"});
            }).find("ar.txt:1: data row before the column header"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              import_nccl_tests(header + "8 2 float sum -1 1 1 1 0 1 1 1 0\n", "log.txt", {});
            }).find("op"),
            std::string::npos);
}

TEST(NcclTestsImport, BadNumberInRow) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n"
      "8 2 float sum -1 1x 1 1 0 1 1 1 0\n";
  EXPECT_NE(error_of([&] {
              import_nccl_tests(text, "ar.txt", {"all_reduce"});
            }).find("ar.txt:2: time: 1x: a number"),
            std::string::npos);
}

TEST(DeepEpImport, AssignsTuningLinesToTheFollowingBestLine) {
  const std::string path = data_path("deepep_test_internode_2node.txt");
  const auto all = import_deepep(read_text_file(path), path).experiments;
  ASSERT_EQ(all.size(), 9u);  // layout + 3 dispatch FP8 + 2 dispatch BF16 + 3 combine
  const Experiment& layout = find(all, "deepep.deepep_test_internode_2node.layout");
  EXPECT_DOUBLE_EQ(layout.samples[0], 0.049e-3);
  EXPECT_DOUBLE_EQ(layout.param("hidden"), 7168);
  const Experiment& fp8 = find(all, "deepep.deepep_test_internode_2node.dispatch.fp8.sms24.nvl4.rdma4");
  EXPECT_DOUBLE_EQ(fp8.samples[0], 1112.40e-6);
  EXPECT_DOUBLE_EQ(fp8.param("notify_s"), 95.10e-6);
  EXPECT_DOUBLE_EQ(fp8.param("rdma_bw_Bps"), 41.20e9);
  EXPECT_DOUBLE_EQ(fp8.param("nvl_bw_Bps"), 134.50e9);
  EXPECT_DOUBLE_EQ(fp8.param("num_tokens"), 4096);
  EXPECT_DOUBLE_EQ(fp8.param("num_topk"), 8);
  EXPECT_EQ(fp8.labels.at("best"), "0");
  const Experiment& best = find(all, "deepep.deepep_test_internode_2node.dispatch.fp8.sms24.nvl8.rdma8.best");
  EXPECT_EQ(best.labels.at("best"), "1");
  EXPECT_DOUBLE_EQ(best.samples[0], 880.30e-6);
  const Experiment& bf16 = find(all, "deepep.deepep_test_internode_2node.dispatch.bf16.sms24.nvl4.rdma4");
  EXPECT_DOUBLE_EQ(bf16.param("rdma_bw_Bps"), 53.80e9);
  const Experiment& combine = find(all, "deepep.deepep_test_internode_2node.combine.bf16.sms24.nvl2.rdma8");
  EXPECT_TRUE(combine.samples.empty());  // the older line format prints no time
  EXPECT_DOUBLE_EQ(combine.param("nvl_bw_Bps"), 163.60e9);
  EXPECT_DOUBLE_EQ(combine.param("line"), 16);
}

TEST(DeepEpImport, TruncatedLineAndMissingBestLine) {
  const std::string path = data_path("deepep_truncated.txt");
  const std::string message = error_of([&] { import_deepep(read_text_file(path), path); });
  EXPECT_NE(message.find("deepep_truncated.txt:13: line"), std::string::npos) << message;
  EXPECT_NE(message.find("the file ends inside it"), std::string::npos) << message;
  const std::string cut_mid_file =
      "[tuning] SMs 24, NVL chunk 4, RDMA chunk 4: 867 + 20\n[tuning] Best combine: SMs 24, NVL chunk 4, "
      "RDMA "
      "chunk 20, 778.64 + 2681.00 us, 43.63 GB/s (RDMA), 142.49 GB/s (NVL)\n";
  EXPECT_NE(error_of([&] { import_deepep(cut_mid_file, "d.txt"); }).find("d.txt:1: [tuning]"),
            std::string::npos);
  const std::string no_best =
      "[tuning] SMs 24, NVL chunk 1, RDMA chunk 8: 55.24 GB/s (RDMA), 180.35 GB/s (NVL)\n";
  EXPECT_NE(
      error_of([&] { import_deepep(no_best, "d.txt"); }).find("d.txt:1: tuning lines with no following"),
      std::string::npos);
  EXPECT_NE(error_of([&] { import_deepep("hello\n", "d.txt"); }).find("not DeepEP / UCCL-EP"),
            std::string::npos);
}

// Golden tests on real logs (calibrate/tests/data/real-logs/, sources and right imports in SOURCES.md).
std::string real(const std::string& name) {
  return data_path("real-logs/" + name);
}

std::size_t count_kind(const std::vector<Experiment>& all, const std::string& kind) {
  std::size_t n = 0;
  for (const Experiment& e : all) n += e.kind == kind ? 1 : 0;
  return n;
}

TEST(NcclTestsRealLogs, MpirunTaggedEfaOldHeaderNeedsOp) {
  const std::string path = real("nccl_allreduce_efa_p4d_2node_mpirun_tagged.log");
  const std::string text = read_text_file(path);
  // The file name says allreduce, the log names no collective: --op is required, never guessed.
  EXPECT_NE(error_of([&] { import_nccl_tests(text, path, {}); }).find(":524: op: not in the log: pass --op"),
            std::string::npos);
  const ImportResult r = import_nccl_tests(text, path, {"all_reduce"});
  ASSERT_EQ(r.experiments.size(), 61u);  // 30 sizes x 2 placements + the average
  EXPECT_EQ(count_kind(r.experiments, "nccl_tests"), 60u);
  EXPECT_EQ(count_kind(r.experiments, "nccl_tests_avg"), 1u);
  EXPECT_TRUE(r.warnings.empty());
  const std::string stem = "nccl_tests.all_reduce.nccl_allreduce_efa_p4d_2node_mpirun_tagged.";
  const Experiment& big = find(r.experiments, stem + "4294967296.out_of_place");
  EXPECT_EQ(big.kind, "nccl_tests");
  EXPECT_DOUBLE_EQ(big.param("ranks"), 16);
  EXPECT_DOUBLE_EQ(big.samples.at(0), 183834e-6);
  EXPECT_DOUBLE_EQ(big.param("busbw_Bps"), 43.81e9);
  EXPECT_DOUBLE_EQ(big.param("max_error"), 5e-7);
  EXPECT_EQ(big.params.count("root"), 0u);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "avg_busbw").samples.at(0), 11.2432e9);
}

TEST(NcclTestsRealLogs, OpFromTheLogsOwnHeaderNotTheFileName) {
  const std::string path = real("nccl_allreduce_2.18.3_2node16gpu_case1.log");
  const ImportResult r = import_nccl_tests(read_text_file(path), path, {});
  ASSERT_EQ(r.experiments.size(), 49u);  // 24 sizes x 2 + average
  const std::string stem = "nccl_tests.all_reduce.nccl_allreduce_2_18_3_2node16gpu_case1.";
  const Experiment& big = find(r.experiments, stem + "8589934592.out_of_place");
  EXPECT_EQ(big.labels.at("op"), "all_reduce");
  EXPECT_DOUBLE_EQ(big.param("ranks"), 16);
  EXPECT_DOUBLE_EQ(big.samples.at(0), 323195e-6);
  EXPECT_DOUBLE_EQ(big.param("busbw_Bps"), 49.83e9);
  EXPECT_DOUBLE_EQ(big.param("root"), -1);
  EXPECT_DOUBLE_EQ(big.param("wrong"), 0);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "avg_busbw").samples.at(0), 21.0721e9);
  // A contradicting --op is an error naming both.
  EXPECT_EQ(error_of([&] { import_nccl_tests(read_text_file(path), path, {"reduce"}); }),
            path + ":2: op: all_reduce: reduce as given by --op (the log names another collective)");
}

TEST(NcclTestsRealLogs, TwoTestsInOneFileEachImported) {
  const std::string path = real("nccl_allreduce_2.18.3_2node16gpu_case1+case2_onefile.log");
  const ImportResult r = import_nccl_tests(read_text_file(path), path, {});
  ASSERT_EQ(r.experiments.size(), 98u);
  const std::string stem = "nccl_tests.all_reduce.nccl_allreduce_2_18_3_2node16gpu_case1_case2_onefile.";
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "t1.8589934592.out_of_place").samples.at(0), 323195e-6);
  const Experiment& second = find(r.experiments, stem + "t2.8589934592.out_of_place");
  EXPECT_DOUBLE_EQ(second.samples.at(0), 323184e-6);
  EXPECT_DOUBLE_EQ(second.param("ranks"), 16);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "t2.avg_busbw").samples.at(0), 17.8737e9);
}

TEST(NcclTestsRealLogs, K80PreTwoThirteenFormat) {
  const std::string path = real("nccl_allreduce_k80_azureml_oldfmt.log");
  const ImportResult r = import_nccl_tests(read_text_file(path), path, {"all_reduce"});
  ASSERT_EQ(r.experiments.size(), 15u);
  const Experiment& big =
      find(r.experiments, "nccl_tests.all_reduce.nccl_allreduce_k80_azureml_oldfmt.2147483648.out_of_place");
  EXPECT_DOUBLE_EQ(big.param("ranks"), 4);
  EXPECT_DOUBLE_EQ(big.samples.at(0), 1258554e-6);
  EXPECT_DOUBLE_EQ(big.param("busbw_Bps"), 2.56e9);
}

TEST(NcclTestsRealLogs, BroadcastOpFromRunningLineRootColumn) {
  const std::string path = real("nccl_broadcast_v2.0era_dgx2_root_noredop.log");
  const ImportResult r = import_nccl_tests(read_text_file(path), path, {});
  ASSERT_EQ(r.experiments.size(), 63u);  // every one of the 31 rows, both placements, + average
  const Experiment& e =
      find(r.experiments, "nccl_tests.broadcast.nccl_broadcast_v2_0era_dgx2_root_noredop.8.in_place");
  EXPECT_EQ(e.labels.at("op"), "broadcast");
  EXPECT_DOUBLE_EQ(e.param("root"), 0);
  EXPECT_DOUBLE_EQ(e.param("ranks"), 12);
  EXPECT_EQ(e.labels.count("redop"), 0u);
  EXPECT_DOUBLE_EQ(e.samples.at(0), 59.96e-6);
}

// v2.19's -C 1 (cputime) and -S 1 (timestamp) columns, srun -l prefixes, repeated sizes, #wrong rows, and
// a value cut by the end of the file.
TEST(NcclTestsImport, CpuTimeTimestampRepeatsWrongAndCutValues) {
  const std::string text =
      "0: # Collective test starting: all_gather_perf\n"
      "0: #       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   "
      "algbw   busbw  #wrong  timestamp\n"
      "0:         1024           256     float    none      -1    10.00    0.10    0.09       0     9.00    "
      "0.11"
      "    0.10       0  2025-06-01 10:00:00\n"
      "0:         1024           256     float    none      -1    12.00    0.09    0.08       0    11.00    "
      "0.09"
      "    0.09       3  2025-06-01 10:00:01\n";
  const ImportResult r = import_nccl_tests(text, "ag.log", {});
  ASSERT_EQ(r.experiments.size(), 2u);
  const Experiment& oop = find(r.experiments, "nccl_tests.all_gather.ag.1024.out_of_place");
  EXPECT_EQ(oop.kind, "nccl_tests");
  EXPECT_EQ(oop.labels.at("timer"), "cpu");
  EXPECT_EQ(oop.labels.at("timestamp"), "2025-06-01 10:00:00");
  ASSERT_EQ(oop.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(oop.samples[0], 10e-6);
  EXPECT_DOUBLE_EQ(oop.samples[1], 12e-6);
  EXPECT_DOUBLE_EQ(oop.param("repeats"), 2);
  const Experiment& ip = find(r.experiments, "nccl_tests.all_gather.ag.1024.in_place");
  EXPECT_EQ(ip.kind, "nccl_tests_wrong");  // a repeat with #wrong 3: out of fits
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(
      r.warnings[0],
      "ag.log:4: 3 wrong elements (#wrong) in_place at 1024 bytes: kept as kind nccl_tests_wrong, out of "
      "fits (--keep-wrong imports it as data)");
  EXPECT_EQ(find(import_nccl_tests(text, "ag.log", {"", true}).experiments, ip.name).kind, "nccl_tests");
  // The last row cut inside its last value by the end of the file.
  const std::string cut = text.substr(0, text.size() - 1);
  EXPECT_EQ(error_of([&] { import_nccl_tests(cut, "ag.log", {}); }).substr(0, 12), "ag.log:4: ro");
  EXPECT_NE(error_of([&] { import_nccl_tests(cut, "ag.log", {}); }).find("the file ends inside this row"),
            std::string::npos);
}

// Found by tests/fuzz/nccl_tests_fuzz.cpp: a garbled type column ("non(GB/se") went into the experiment name,
// which the database refuses for its '/'. Name pieces from the log are made name-safe; --op must be one.
TEST(NcclTestsImport, TypeAndRedopInNamesAreNameSafe) {
  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "  1024  256  float  sum  -1  10.0  0.1  0.1  0  10.0  0.1  0.1  0\n"
      "  1024  256  f/16  sum  -1  10.0  0.1  0.1  0  10.0  0.1  0.1  0\n";
  const ImportResult r = import_nccl_tests(text, "ar.log", {});
  ASSERT_EQ(r.experiments.size(), 4u);
  EXPECT_EQ(r.experiments[2].name, "nccl_tests.all_reduce.ar.1024.f_16.out_of_place");
  EXPECT_EQ(r.experiments[2].labels.at("type"), "f/16");
  EXPECT_EQ(error_of([&] { import_nccl_tests(text, "ar.log", {"all/reduce"}); }),
            "--op: op: all/reduce: a collective name of letters, digits and '_' (all_reduce, ...)");
}

// Found by tests/fuzz/nccl_tests_fuzz.cpp: a line of vertical tabs has no fields (read past an empty row).
TEST(NcclTestsImport, LineOfOtherWhitespaceIsSkipped) {
  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "\v\f\n"
      "  1024  256  float  sum  -1  10.0  0.1  0.1  0  10.0  0.1  0.1  0\n";
  EXPECT_EQ(import_nccl_tests(text, "ar.log", {}).experiments.size(), 2u);
  // Found by the same target: a table whose every time is N/A imported nothing without a word.
  const std::string na =
      "# Collective test starting: all_reduce_perf\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "  1024  256  float  sum  -1  N/A  0.1  0.1  0  N/A  0.1  0.1  0\n";
  EXPECT_EQ(error_of([&] { import_nccl_tests(na, "ar.log", {}); }),
            "ar.log:2: no row with a time after the column header (every time is N/A)");
}

TEST(DeepEpRealLogs, InternodeNotifyPlusTransmitSince2025_09) {
  const std::string path = real("deepep_internode_2025-09fmt_notify+transmit_b200_gke.log");
  const ImportResult r = import_deepep(read_text_file(path), path);
  ASSERT_EQ(r.experiments.size(), 12u);  // layout + 8 tuning + 3 Best lines
  const std::string stem = "deepep.deepep_internode_2025-09fmt_notify_transmit_b200_gke.";
  const Experiment& best = find(r.experiments, stem + "dispatch.fp8.sms24.nvl40.rdma16.best");
  EXPECT_DOUBLE_EQ(best.param("notify_s"), 229e-6);
  EXPECT_DOUBLE_EQ(best.samples.at(0), 1391e-6);
  EXPECT_DOUBLE_EQ(best.param("rdma_bw_Bps"), 43.36e9);
  EXPECT_EQ(best.labels.at("scope"), "internode");
  const Experiment& tuning = find(r.experiments, stem + "dispatch.fp8.sms24.nvl4.rdma4");
  EXPECT_DOUBLE_EQ(tuning.param("notify_s"), 867e-6);
  EXPECT_DOUBLE_EQ(tuning.samples.at(0), 2008e-6);
  EXPECT_DOUBLE_EQ(tuning.param("nvl_bw_Bps"), 98.10e9);
  EXPECT_DOUBLE_EQ(tuning.param("num_topk_groups"), 2);
  const Experiment& combine = find(r.experiments, stem + "combine.bf16.sms24.nvl4.rdma20.best");
  EXPECT_DOUBLE_EQ(combine.param("notify_s"), 778.64e-6);
  EXPECT_DOUBLE_EQ(combine.samples.at(0), 2681.00e-6);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "layout").samples.at(0), 0.042e-3);
}

TEST(DeepEpRealLogs, IntranodeNvlChunkAndT) {
  const std::string path = real("deepep_intranode_e02e4d2_p5en.log");
  const ImportResult r = import_deepep(read_text_file(path), path);
  ASSERT_EQ(r.experiments.size(), 53u);  // layout + 49 tuning + 3 Best lines
  const std::string stem = "deepep.deepep_intranode_e02e4d2_p5en.";
  const Experiment& first = find(r.experiments, stem + "dispatch.fp8.sms24.nvl4");
  EXPECT_EQ(first.labels.at("scope"), "intranode");
  EXPECT_DOUBLE_EQ(first.param("nvl_bw_Bps"), 294.24e9);
  EXPECT_DOUBLE_EQ(first.samples.at(0), 544.47e-6);
  EXPECT_EQ(first.params.count("rdma_bw_Bps"), 0u);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "dispatch.fp8.sms24.nvl6.best").samples.at(0), 499.58e-6);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "dispatch.bf16.sms24.nvl4.best").samples.at(0), 936.50e-6);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "combine.bf16.sms24.nvldefault").samples.at(0), 971.32e-6);
  EXPECT_DOUBLE_EQ(find(r.experiments, stem + "combine.bf16.sms24.nvl4.best").param("nvl_bw_Bps"), 321.89e9);
}

TEST(DeepEpRealLogs, UcclEpTransmitNotify) {
  const std::string path = real("ucclep_internode_transmit_notify_h200_pr441.log");
  const ImportResult r = import_deepep(read_text_file(path), path);
  ASSERT_EQ(r.experiments.size(), 3u);
  const Experiment& fp8 =
      find(r.experiments,
           "deepep.ucclep_internode_transmit_notify_h200_pr441.dispatch.fp8.sms24.nvl44.rdma12.best");
  EXPECT_DOUBLE_EQ(fp8.samples.at(0), 1289e-6);
  EXPECT_DOUBLE_EQ(fp8.param("notify_s"), 67.87e-6);
  EXPECT_DOUBLE_EQ(fp8.param("rdma_bw_Bps"), 46.79e9);
}

TEST(DeepEpImport, LowLatencyLinesWithSrunPrefix) {
  const std::string text =
      "0: [rank 0] Dispatch + combine bandwidth: 56.80 GB/s, avg_t=257.09 us, min_t=250.02 us, max_t=270.10 "
      "us\n"
      "0: [rank 0] Dispatch bandwidth: 45.81 GB/s, avg_t=163.69 us | Combine bandwidth: 60.67 GB/s, "
      "avg_t=238.63 "
      "us\n"
      "0: [rank 0] Dispatch send/recv time: 28.55 + 11.13 us | Combine send/recv time: 35.14 + 9.31 us\n";
  const ImportResult r = import_deepep(text, "ll.log");
  ASSERT_EQ(r.experiments.size(), 5u);
  const Experiment& both = find(r.experiments, "deepep.ll.low_latency.r0.dispatch_combine");
  EXPECT_DOUBLE_EQ(both.samples.at(0), 257.09e-6);
  EXPECT_DOUBLE_EQ(both.param("max_s"), 270.10e-6);
  EXPECT_DOUBLE_EQ(both.param("bw_Bps"), 56.80e9);
  EXPECT_DOUBLE_EQ(find(r.experiments, "deepep.ll.low_latency.r0.combine").samples.at(0), 238.63e-6);
  const Experiment& send = find(r.experiments, "deepep.ll.low_latency.r0.dispatch_send_recv");
  EXPECT_DOUBLE_EQ(send.param("send_s"), 28.55e-6);
  EXPECT_DOUBLE_EQ(send.samples.at(0), (28.55 + 11.13) * 1e-6);
}

}  // namespace
}  // namespace moetwin
