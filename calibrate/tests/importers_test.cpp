#include "moetwin/calibrate/importers.hpp"

#include <gtest/gtest.h>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

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

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclTestsImport, ReadsEveryColumnOfBothPlacements) {
  const std::string path = data_path("all_reduce_perf_8gpu.txt");
  const auto all = import_nccl_tests(read_text_file(path), path, "");
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
  const auto all = import_nccl_tests(read_text_file(path), path, "");
  ASSERT_EQ(all.size(), 7u);
  const Experiment& e = find(all, "nccl_tests.alltoall.alltoall_perf_nocheck.4194304.in_place");
  EXPECT_EQ(e.labels.at("wrong"), "N/A");
  EXPECT_EQ(e.params.count("wrong"), 0u);
  EXPECT_EQ(e.labels.at("redop"), "none");
  EXPECT_DOUBLE_EQ(e.param("ranks"), 2);
  EXPECT_DOUBLE_EQ(e.samples[0], 61.00e-6);
}

TEST(NcclTestsImport, OpFromArgumentOverridesFileName) {
  const std::string path = data_path("alltoall_perf_nocheck.txt");
  const auto all = import_nccl_tests(read_text_file(path), path, "sendrecv");
  EXPECT_EQ(all.front().labels.at("op"), "sendrecv");
}

TEST(NcclTestsImport, TruncatedRowNamesFileAndLine) {
  const std::string path = data_path("all_reduce_perf_truncated.txt");
  const std::string message = error_of([&] { import_nccl_tests(read_text_file(path), path, ""); });
  EXPECT_NE(message.find("all_reduce_perf_truncated.txt:18: row"), std::string::npos) << message;
  EXPECT_NE(message.find("13 columns"), std::string::npos) << message;
}

TEST(NcclTestsImport, HeaderOnlyAndNoHeaderAreErrors) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n";
  EXPECT_NE(error_of([&] {
              import_nccl_tests(header, "x_all_reduce.txt", "");
            }).find("x_all_reduce.txt:1: no data rows"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              import_nccl_tests("8 2 float sum -1 1 1 1 0 1 1 1 0\n", "ar.txt", "all_reduce");
            }).find("ar.txt:1: data row before the column header"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              import_nccl_tests(header + "8 2 float sum -1 1 1 1 0 1 1 1 0\n", "log.txt", "");
            }).find("op"),
            std::string::npos);
}

TEST(NcclTestsImport, BadNumberInRow) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n"
      "8 2 float sum -1 1x 1 1 0 1 1 1 0\n";
  EXPECT_NE(
      error_of([&] { import_nccl_tests(text, "ar.txt", "all_reduce"); }).find("ar.txt:2: time: 1x: a number"),
      std::string::npos);
}

TEST(DeepEpImport, AssignsTuningLinesToTheFollowingBestLine) {
  const std::string path = data_path("deepep_test_internode_2node.txt");
  const auto all = import_deepep(read_text_file(path), path);
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
  EXPECT_NE(message.find("deepep_truncated.txt:13: [tuning]"), std::string::npos) << message;
  EXPECT_NE(message.find("RDMA chunk"), std::string::npos) << message;
  const std::string no_best =
      "[tuning] SMs 24, NVL chunk 1, RDMA chunk 8: 55.24 GB/s (RDMA), 180.35 GB/s (NVL)\n";
  EXPECT_NE(
      error_of([&] { import_deepep(no_best, "d.txt"); }).find("d.txt:1: tuning lines with no following"),
      std::string::npos);
  EXPECT_NE(error_of([&] { import_deepep("hello\n", "d.txt"); }).find("not test_internode.py output"),
            std::string::npos);
}

}  // namespace
}  // namespace moetwin
