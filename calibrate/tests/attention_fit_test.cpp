// Attention-kernel curves: the profile's [attention_kernel] tables (keys, round trip, strict errors), the
// fit from the probe's CSV (averaging, leave-one-out, GQA check, strict CSV errors) and the shipped H200
// profile's curves against the probe's per-layer measurements.
#include "moetwin/calibrate/attention_fit.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "sample_calibration_profile.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path path = fs::path(MOETWIN_BINARY_DIR) / "attention_fit_test" / name;
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

template <typename Fn>
std::string error_of(Fn fn) {
  return test_support::error_of(fn);
}

TEST(AttentionKernelKey, FormatsAndParsesDirectionHeadDimsAndGroupedKv) {
  EXPECT_EQ(attention_kernel_key({false, 192, 128, false}), "fwd.q192v128");
  EXPECT_EQ(attention_kernel_key({true, 56, 56, false}), "bwd.q56v56");
  EXPECT_EQ(attention_kernel_key({true, 128, 128, true}), "bwd.q128v128.gqa");
  const auto k = parse_attention_kernel_key("bwd.q192v128");
  ASSERT_TRUE(k.has_value());
  EXPECT_TRUE(k->backward);
  EXPECT_EQ(k->qk_dim, 192);
  EXPECT_EQ(k->v_dim, 128);
  EXPECT_FALSE(k->grouped_kv);
  const auto g = parse_attention_kernel_key("fwd.q128v128.gqa");
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->grouped_kv);
  EXPECT_FALSE(g->backward);
  for (const char* bad :
       {"fwd.q128", "fwd.q128v", "fwd.qv128", "fwd.q0v64", "fwd.q2048v64", "up.q64v64", "fwd.q64v64x",
        "fwdq64v64", "fwd.q-1v64", ".gqa", "fwd.q64v64.mqa", "fwd.q64v64.gqa.gqa"}) {
    EXPECT_FALSE(parse_attention_kernel_key(bad).has_value()) << bad;
  }
}

TEST(AttentionKernelProfile, RoundTripsAndRejectsBadKeysAndCurves) {
  CalibrationProfile p = sample_calibration_profile("H200-SXM", "NVIDIA H200");
  p.gemm["gemm"] = sample_gemm_curve();
  p.attention_kernels["fwd.q128v128"] = {{1e9, 1e11}, {0.05, 0.5}};
  p.attention_kernels["bwd.q128v128"] = {{1e9, 1e11}, {0.04, 0.45}};
  const std::string text = format_calibration_profile(p);
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  EXPECT_EQ(format_calibration_profile(back), text);
  EXPECT_DOUBLE_EQ(back.attention_kernels.at("bwd.q128v128").y[1], 0.45);

  std::string bad = text;
  const std::string header = "[attention_kernel.\"fwd.q128v128\"]";
  bad.replace(bad.find(header), header.size(), "[attention_kernel.\"fwd.q128\"]");
  const std::string key_error = error_of([&] { parse_calibration_profile(bad, "p.toml"); });
  EXPECT_NE(key_error.find("attention_kernel.fwd.q128: a table: a key \"fwd.q<QK>v<V>\""), std::string::npos)
      << key_error;
  bad = text;
  bad.replace(bad.find("efficiency = [0.05, 0.5]"), 24, "efficiency = [0.05, 1.5]");
  const std::string range_error = error_of([&] { parse_calibration_profile(bad, "p.toml"); });
  EXPECT_NE(range_error.find("attention_kernel.fwd.q128v128.efficiency: 1.5"), std::string::npos)
      << range_error;
}

constexpr const char* kHeader = "direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops,median_s\n";

TEST(AttentionFit, AveragesEqualFlopsAndChecksGqaRows) {
  // Peak 1e15: 1e11 FLOPs in 0.5 ms and 0.25 ms (efficiencies 0.2 and 0.4) average to 0.3; 1e12 in 2 ms
  // is 0.5. The GQA row at 1e11 takes 0.2 ms: the curve (0.3) predicts 1e11 / 3e14 = 0.333 ms, +66.7 %.
  const std::string csv = write_file("avg.csv", std::string("# probe\n") + kHeader +
                                                    "fwd,128,128,8,8,1024,8192,1e11,5e-4\n"
                                                    "fwd,128,128,32,32,512,16384,1e11,2.5e-4\n"
                                                    "fwd,128,128,8,8,4096,32768,1e12,2e-3\n"
                                                    "fwd,128,128,32,4,1024,32768,1e11,2e-4\n"
                                                    "bwd,192,128,8,8,1024,8192,2e11,1e-3\n");
  const std::vector<AttentionPoint> points = read_attention_csv(csv);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(points[3].kv_heads, 4);
  EXPECT_EQ(points[0].line, 3);
  std::vector<AttentionCurveReport> report;
  const auto curves = fit_attention_kernels(points, 1e15, csv, &report);
  ASSERT_EQ(curves.size(), 3u);
  // The GQA row makes its own curve: 1e11 / (2e-4 x 1e15) = 0.5.
  EXPECT_DOUBLE_EQ(curves.at("fwd.q128v128.gqa").y[0], 0.5);
  const LogCurve& fwd = curves.at("fwd.q128v128");
  ASSERT_EQ(fwd.x.size(), 2u);
  EXPECT_DOUBLE_EQ(fwd.y[0], 0.3);
  EXPECT_DOUBLE_EQ(fwd.y[1], 0.5);
  EXPECT_DOUBLE_EQ(curves.at("bwd.q192v128").y[0], 0.2);
  ASSERT_EQ(report.size(), 3u);  // in key order: bwd.q192v128, fwd.q128v128, fwd.q128v128.gqa
  EXPECT_EQ(report[1].key, "fwd.q128v128");
  EXPECT_EQ(report[1].calls, 3);
  EXPECT_EQ(report[1].points, 2);
  // Leave one out: each of the two points predicted by the other (0.3 vs 0.5): |0.3/0.5 - 1| = 0.4 and
  // |0.5/0.3 - 1| = 0.667; median 0.533.
  EXPECT_NEAR(report[1].loo_median, (0.4 + 2.0 / 3) / 2, 1e-12);
  EXPECT_NEAR(report[1].loo_max, 2.0 / 3, 1e-12);
  EXPECT_EQ(report[1].gqa_checked, 1);
  EXPECT_NEAR(report[1].gqa_mean_signed, (1e11 / 3e14) / 2e-4 - 1, 1e-12);
  EXPECT_EQ(report[0].points, 1);
  EXPECT_EQ(report[0].loo_max, 0);
  EXPECT_EQ(report[2].key, "fwd.q128v128.gqa");
  EXPECT_EQ(report[2].gqa_checked, 0);
}

TEST(AttentionFit, StrictCsvErrorsNameFileLineColumnAndValue) {
  const std::string good = "fwd,128,128,8,8,1024,8192,1e11,5e-4\n";
  const auto error_for = [&](const std::string& name, const std::string& text) {
    const std::string path = write_file(name, text);
    return error_of([&] { read_attention_csv(path); });
  };
  EXPECT_NE(error_for("dir.csv", std::string(kHeader) + "up,128,128,8,8,1024,8192,1e11,5e-4\n")
                .find("dir.csv:2: direction: up: fwd or bwd"),
            std::string::npos);
  EXPECT_NE(error_for("kv.csv", std::string(kHeader) + "fwd,128,128,8,3,1024,8192,1e11,5e-4\n")
                .find("kv.csv:2: kv_heads: 3: a divisor of heads (8)"),
            std::string::npos);
  EXPECT_NE(error_for("time.csv", std::string(kHeader) + "fwd,128,128,8,8,1024,8192,1e11,-1\n")
                .find("time.csv:2: median_s: -1: a number in [1e-09, 100]"),
            std::string::npos);
  EXPECT_NE(error_for("dim.csv", std::string(kHeader) + "fwd,12.5,128,8,8,1024,8192,1e11,5e-4\n")
                .find("dim.csv:2: qk_dim: 12.5: an integer in [1, 1024]"),
            std::string::npos);
  const std::string extra =
      error_for("col.csv", "direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops,median_s,extra\n" +
                               good.substr(0, good.size() - 1) + ",1\n");
  EXPECT_NE(extra.find("col.csv: column: extra: one of direction"), std::string::npos) << extra;
  EXPECT_NE(error_for("missing.csv",
                      "direction,qk_dim,v_dim,heads,kv_heads,seq,rows,flops\n"
                      "fwd,128,128,8,8,1024,8192,1e11\n")
                .find("median_s"),
            std::string::npos);
  EXPECT_NE(error_for("empty.csv", kHeader).find("no rows"), std::string::npos);
  // Only GQA rows: nothing to fit the multi-head curves on.
  const std::string gqa =
      write_file("gqa.csv", std::string(kHeader) + "fwd,128,128,8,2,1024,8192,1e11,5e-4\n");
  EXPECT_NE(
      error_of([&] { fit_attention_kernels(read_attention_csv(gqa), 1e15, gqa); }).find("kv_heads = heads"),
      std::string::npos);
}

TEST(AttentionFit, ShippedH200CurvesReproduceTheLayerProbe) {
  // The profile's curves at the shapes of calibrate/data/h200-layer-probe.csv (cuDNN, measured in a
  // separate run): DeepSeek-V3's MLA core at TP8 (16 heads, 4,096 tokens) forward 0.215 ms, backward
  // 0.613 ms; within 10 %.
  const auto p =
      find_calibration_profile(std::string(MOETWIN_SOURCE_DIR) + "/calibrate/profiles", "H200-SXM");
  ASSERT_TRUE(p.has_value());
  const double fwd_flops = 4096.0 * 4096 * (192 + 128) * 16;
  const double fwd_s =
      fwd_flops / (p->peak_bf16_flops * p->attention_kernels.at("fwd.q192v128").at(fwd_flops));
  const double bwd_s =
      2.5 * fwd_flops / (p->peak_bf16_flops * p->attention_kernels.at("bwd.q192v128").at(2.5 * fwd_flops));
  EXPECT_NEAR(fwd_s / 0.215e-3, 1.0, 0.10);
  EXPECT_NEAR(bwd_s / 0.613e-3, 1.0, 0.10);
}

}  // namespace
}  // namespace moetwin
