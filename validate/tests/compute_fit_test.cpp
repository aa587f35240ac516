// The dense-row compute fit (compute_fit.hpp): the term's effect on kernel times, its inheritance rule, the
// profile file, and a fit on a real row.
#include "moetwin/validate/compute_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/validate/dense_runs.hpp"

namespace moetwin {
namespace {

const std::string kSource = MOETWIN_SOURCE_DIR;

using test_support::catalog;

TEST(ComputeFit, ScaleDividesEveryGemmClassEfficiencyAndCurve) {
  ComputeProfile p = ComputeProfile::from_gpu(catalog().gpu("B200"));
  scale_gemm_class_time(p, 1.25);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::gemm)], 0.650 / 1.25);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::grouped_gemm)], 0.55 / 1.25);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::attention)], 0.45 / 1.25);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::elementwise)], 0.80);  // memory-bound: not a GEMM
  // A faster GEMM never beyond the kernel ceiling.
  ComputeProfile fast = ComputeProfile::from_gpu(catalog().gpu("B200"));
  scale_gemm_class_time(fast, 0.5);
  EXPECT_DOUBLE_EQ(fast.efficiency[static_cast<int>(OpClass::gemm)], kMaxKernelEfficiency);
  // Measured curves: a 1 us floor stays, the efficiency scales.
  ComputeCalibration cal;
  cal.curve[static_cast<int>(OpClass::gemm)].min_dim = {128, 4096};
  cal.curve[static_cast<int>(OpClass::gemm)].efficiency = {0.4, 0.8};
  cal.curve[static_cast<int>(OpClass::gemm)].floor_s = 1e-6;
  cal.attention_kernels.push_back({false, false, 256, {1e9, 1e12}, {0.3, 0.6}});
  p.calibration = cal;
  p.fp8_calibration = cal;
  scale_gemm_class_time(p, 2);
  EXPECT_DOUBLE_EQ(p.calibration->curve[static_cast<int>(OpClass::gemm)].efficiency[1], 0.4);
  EXPECT_DOUBLE_EQ(p.calibration->curve[static_cast<int>(OpClass::gemm)].floor_s, 1e-6);
  EXPECT_DOUBLE_EQ(p.fp8_calibration->curve[static_cast<int>(OpClass::gemm)].efficiency[0], 0.2);
  EXPECT_DOUBLE_EQ(p.calibration->attention_kernels[0].efficiency[1], 0.3);
  EXPECT_THROW(scale_gemm_class_time(p, 3), std::logic_error);
}

// Own term, else the median of the same die (compute capability) in the same precision, else today's
// pricing: a term never crosses precisions (the live rows, bf16 B300 and H100, fp8-hybrid H200, keep theirs)
// nor dies (GB300 never takes GB200's).
TEST(ComputeFit, TermsInheritWithinADieAndPrecisionOnly) {
  ComputeFit fit;
  fit.terms = {{"GB200", "mxfp8", 1.2, 4},
               {"GB300", "mxfp8", 1.0, 4},
               {"B300", "mxfp8", 1.1, 2},
               {"GB300", "fp8-current", 1.4, 1},
               {"H100-SXM", "fp8-current", 1.3, 5}};
  EXPECT_DOUBLE_EQ(fit.resolve(catalog(), "GB200", Precision::mxfp8).value, 1.2);
  EXPECT_EQ(fit.resolve(catalog(), "GB200", Precision::mxfp8).source, "fitted on 4 rows");
  // B200 is GB200's die (10.0): its term, not the median with the Blackwell Ultra GPUs.
  const ResolvedScale b200 = fit.resolve(catalog(), "B200", Precision::mxfp8);
  EXPECT_DOUBLE_EQ(b200.value, 1.2);
  EXPECT_EQ(b200.source, "inherited: median of GB200 (compute capability 10.0, mxfp8)");
  // B300's die (10.3) fitted in fp8-current only on GB300; B200 / GB200 have no fp8-current term.
  EXPECT_DOUBLE_EQ(fit.resolve(catalog(), "B300", Precision::fp8_current).value, 1.4);
  const ResolvedScale none = fit.resolve(catalog(), "B200", Precision::fp8_current);
  EXPECT_DOUBLE_EQ(none.value, 1);
  EXPECT_EQ(none.source, "none: no compute capability 10.0 fp8-current rows fitted; today's pricing");
  const ResolvedScale bf16 = fit.resolve(catalog(), "B300", Precision::bf16);
  EXPECT_DOUBLE_EQ(bf16.value, 1);
  EXPECT_EQ(bf16.source, "none: no compute capability 10.3 bf16 rows fitted; today's pricing");
  EXPECT_DOUBLE_EQ(fit.resolve(catalog(), "H200-SXM", Precision::fp8_current).value, 1.3);  // same die
  EXPECT_DOUBLE_EQ(fit.resolve(catalog(), "H200-SXM", Precision::fp8_hybrid).value, 1);
  EXPECT_DOUBLE_EQ(fit.resolve(catalog(), "H100-SXM", Precision::bf16).value, 1);
  EXPECT_EQ(gpu_die(catalog().gpu("H200-SXM")), "compute capability 9.0");
  EXPECT_EQ(gpu_die(catalog().gpu("GB300")), "compute capability 10.3");
}

std::string write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("moetwin_compute_fit_" + name + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

TEST(ComputeFit, ProfileFileRoundTripsAndIsStrict) {
  ComputeFitResult r;
  r.fit.terms = {{"GB200", "mxfp8", 1.2345, 4}, {"H100-SXM", "fp8-current", 0.9, 5}};
  r.rows.push_back({0, "dgx-gb200", "GB200/mxfp8", 8.0, 7.0, 8.1, 8.3, "x"});
  const std::string text = compute_fit_toml(r, "validate/data/nvidia-dense-runs.csv");
  const ComputeFit back = load_compute_fit(write("ok", text));
  ASSERT_EQ(back.terms.size(), 2u);
  EXPECT_DOUBLE_EQ(back.terms[0].value, 1.2345);
  EXPECT_EQ(back.terms[1].precision, "fp8-current");
  EXPECT_EQ(back.terms[1].rows, 5);
  // A value outside the bounds, a misspelt key and a second term for one GPU and precision: input errors.
  std::string out = text;
  out.replace(out.find("value = 1.2345"), 14, "value = 3.5");
  try {
    load_compute_fit(write("bounds", out));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_time_scale[0].value: 3.5: a number in [0.5, 2.5]"),
              std::string::npos)
        << e.what();
  }
  std::string typo = text;
  typo.replace(typo.find("rows = 4"), 8, "row = 4");
  EXPECT_THROW(load_compute_fit(write("typo", typo)), InputError);
  std::string twice = text;
  twice.replace(twice.find("gpu = \"H100-SXM\""), 16, "gpu = \"GB200\"");
  twice.replace(twice.find("precision = \"fp8-current\""), 25, "precision = \"mxfp8\"");
  try {
    load_compute_fit(write("twice", twice));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one term per GPU and precision"), std::string::npos) << e.what();
  }
}

// One real row, one term: the fit reaches the measured time (a one-parameter, one-row fit is exact inside
// its bounds), and the same inputs give the same term.
TEST(ComputeFit, FitsTheDgxB200RowToItsMeasuredTime) {
  const RunRows rows = read_run_rows({kSource + "/validate/data/nvidia-dense-runs.csv"}, catalog());
  std::vector<LiveRun> b200;
  for (const LiveRun& r : rows.table.runs)
    if (r.scenario.instance.name == "dgx-b200" && r.scenario.parallel.cp == 1)
      b200.push_back(r);  // the 8B row
  ASSERT_EQ(b200.size(), 1u);
  const FittedProfile none = resolve_fitted_profile("none");
  const ComputeFitResult fit = fit_compute(catalog(), b200, none, false, 1);
  ASSERT_EQ(fit.fit.terms.size(), 1u);
  EXPECT_EQ(fit.fit.terms[0].gpu, "B200");
  EXPECT_EQ(fit.fit.terms[0].precision, "fp8-current");
  EXPECT_GE(fit.fit.terms[0].value, kGemmTimeScaleMin);
  EXPECT_LE(fit.fit.terms[0].value, kGemmTimeScaleMax);
  ASSERT_EQ(fit.rows.size(), 1u);
  EXPECT_NEAR(fit.rows[0].in_sample_s / fit.rows[0].measured_s, 1, 0.005);
  EXPECT_GT(fit.rows[0].unfitted_s, 0);
  EXPECT_EQ(fit_compute(catalog(), b200, none, false, 2).fit.terms[0].value, fit.fit.terms[0].value);
}

}  // namespace
}  // namespace moetwin
