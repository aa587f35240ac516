// FP8 GEMM kernels: apply_calibration fills ComputeProfile::fp8_calibration from a profile's [gemm_fp8]
// curves, and fp8_kernel_seconds uses them where present and the roofline at the FP8 peak otherwise
// (hand-computed times).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hand_compute_profile.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/profile/calibration_profile.hpp"
// The sample profile calibrate's profile tests use too.
#include "../../calibrate/tests/sample_calibration_profile.hpp"

namespace moetwin {
namespace {

// Catalog numbers: bf16 peak 1e15, FP8 peak 2e15, HBM 5e12 B/s, default class efficiencies (gemm 0.75,
// grouped 0.6, attention 0.5, elementwise 0.8), 2 us minimum kernel.
ComputeProfile catalog_profile() {
  return models_test::hand_fp8_profile();
}

// sample_calibration_profile (bf16 peak 1e15, copy 4e12 B/s) with bf16 and FP8 "gemm" curves
// (sample_gemm_curve: floor 10 us, efficiency 0.25 at 64 .. 0.75 at 1024, memory efficiency 0.5), FP8
// peak 1.8e15 and an FP8 "gemm.small_k" curve of 0.3 flat, floor 10 us, no memory term.
CalibrationProfile fp8_profile() {
  CalibrationProfile p = sample_calibration_profile("X", "X");
  p.gemm["gemm"] = sample_gemm_curve();
  p.peak_fp8_flops = 1.8e15;
  p.gemm_fp8["gemm"] = sample_gemm_curve();
  GemmCurve k = sample_gemm_curve();
  k.efficiency = {{64}, {0.3}};
  k.memory_efficiency = 0;
  p.gemm_fp8["gemm.small_k"] = k;
  return p;
}

TEST(Fp8Calibration, ApplyCalibrationFillsTheFp8Curves) {
  const ComputeProfile p = apply_calibration(catalog_profile(), fp8_profile(), "x.toml");
  ASSERT_TRUE(p.fp8_calibration.has_value());
  const ComputeCalibration& c = *p.fp8_calibration;
  EXPECT_EQ(c.path, "x.toml");
  EXPECT_EQ(c.gpu, "X");
  EXPECT_DOUBLE_EQ(c.peak_flops, 1.8e15);
  EXPECT_DOUBLE_EQ(c.copy_bandwidth, 4e12);
  const int g = static_cast<int>(OpClass::gemm);
  EXPECT_EQ(c.curve[g].min_dim, (std::vector<double>{64, 1024}));
  EXPECT_EQ(c.curve[g].efficiency, (std::vector<double>{0.25, 0.75}));
  EXPECT_DOUBLE_EQ(c.curve[g].floor_s, 1e-5);
  EXPECT_DOUBLE_EQ(c.curve[g].memory_efficiency, 0.5);
  EXPECT_EQ(c.small_k[g].efficiency, std::vector<double>{0.3});
  EXPECT_TRUE(c.curve[static_cast<int>(OpClass::grouped_gemm)].empty());
  EXPECT_TRUE(c.curve[static_cast<int>(OpClass::attention)].empty());
  // The bf16 calibration is the profile's [gemm] at its bf16 peak, as before.
  ASSERT_TRUE(p.calibration.has_value());
  EXPECT_DOUBLE_EQ(p.calibration->peak_flops, 1e15);
  EXPECT_EQ(p.source, "calibrated (x.toml, X)");
  // The catalog FP8 peak stays: the roofline of classes without an FP8 curve uses it.
  EXPECT_DOUBLE_EQ(p.fp8_peak_flops, 2e15);
}

TEST(Fp8Calibration, ProfilesWithoutTheSectionLeaveFp8OnTheRoofline) {
  CalibrationProfile prof = fp8_profile();
  prof.gemm_fp8.clear();
  prof.peak_fp8_flops = 0;
  const ComputeProfile p = apply_calibration(catalog_profile(), prof, "old.toml");
  EXPECT_FALSE(p.fp8_calibration.has_value());
  EXPECT_TRUE(p.calibration.has_value());
  // An FP8 section without a plain class curve cannot serve the simulator: an input error naming it.
  CalibrationProfile only_small_k = fp8_profile();
  only_small_k.gemm_fp8.erase("gemm");
  try {
    apply_calibration(catalog_profile(), only_small_k, "k.toml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k.toml: gemm_fp8: no curve"), std::string::npos) << e.what();
  }
}

TEST(Fp8Calibration, Fp8KernelSecondsUsesTheFp8CurveByHand) {
  const ComputeProfile p = apply_calibration(catalog_profile(), fp8_profile(), "x.toml");
  // 256 x 4096 x 4096: 8589934592 FLOP at 1.8e15 x 0.5 (256 is halfway from 64 to 1024 in log2) =
  // 9.544 us; the caller's 1e6 bytes take 0.5 us at 4e12 x 0.5: compute bound, + 10 us floor.
  EXPECT_DOUBLE_EQ(
      fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}),
      1e-5 + 8589934592.0 / 9e14);
  // The bf16 curve at the bf16 peak for the same GEMM: 8589934592 / 5e14 = 17.18 us + 10 us.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}),
                   1e-5 + 8589934592.0 / 5e14);
  // Memory bound: 64 x 4096 x 4096 with its FP8 bytes (gemm_fp8_bytes, 17563648) at 2e12 B/s = 8.78 us,
  // above 2147483648 / (1.8e15 x 0.25) = 4.77 us.
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, 2147483648.0,
                                      gemm_fp8_bytes(64, 4096, 4096, 1), {64, 4096, 4096}),
                   1e-5 + 17563648.0 / 2e12);
  // k strictly smallest: the small_k curve, 0.3 of 1.8e15, no memory term.
  EXPECT_DOUBLE_EQ(
      fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, 2147483648.0, 1e8, {4096, 4096, 64}),
      1e-5 + 2147483648.0 / 5.4e14);
  // The same seconds as the profile's own FP8 formula.
  CalibrationProfile prof = fp8_profile();
  EXPECT_EQ(fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, 2.0 * 2048 * 2048 * 2048,
                               gemm_fp8_bytes(2048, 2048, 2048, 1), {2048, 2048, 2048}),
            *prof.gemm_fp8_time_s("gemm", 2048, 2048, 2048, 1));
}

TEST(Fp8Calibration, Fp8KernelSecondsFallsBackToTheFp8Roofline) {
  const ComputeProfile calibrated = apply_calibration(catalog_profile(), fp8_profile(), "x.toml");
  // No FP8 grouped_gemm curve: the roofline at the FP8 peak x the class efficiency,
  // max(6e10 / (2e15 x 0.6), 1e6 / (5e12 x 0.8)) = max(50 us, 0.25 us) = 50 us.
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(calibrated, QuantRecipe::fp8_current, OpClass::grouped_gemm, 6e10, 1e6,
                                      {256, 4096, 4096}),
                   6e10 / 1.2e15);
  // No FP8 calibration at all: gemm at 2e15 x 0.75 = 20 us for 3e10 FLOP; the bf16 curves are not used.
  const ComputeProfile plain = catalog_profile();
  EXPECT_DOUBLE_EQ(
      fp8_kernel_seconds(plain, QuantRecipe::fp8_current, OpClass::gemm, 3e10, 1e6, {256, 4096, 4096}),
      3e10 / 1.5e15);
  // Memory bound on the roofline: 4e9 bytes at 5e12 x 0.8 = 1 ms.
  EXPECT_DOUBLE_EQ(
      fp8_kernel_seconds(plain, QuantRecipe::fp8_current, OpClass::gemm, 3e10, 4e9, {256, 4096, 4096}), 1e-3);
  // No shape: the roofline even where an FP8 curve exists.
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(calibrated, QuantRecipe::fp8_current, OpClass::gemm, 3e10, 1e6, {}),
                   3e10 / 1.5e15);
  // A GPU without FP8 tensor cores: callers must reject FP8 first.
  ComputeProfile no_fp8 = catalog_profile();
  no_fp8.fp8_peak_flops = 0;
  EXPECT_THROW(
      fp8_kernel_seconds(no_fp8, QuantRecipe::fp8_current, OpClass::gemm, 3e10, 1e6, {256, 4096, 4096}),
      std::logic_error);
}

TEST(Fp8Calibration, ShippedH200ProfileReproducesTheMeasuredFp8SquareGemm) {
  CalibrationProfile shipped =
      load_calibration_profile(std::string(MOETWIN_SOURCE_DIR) + "/calibrate/profiles/h200-measured.toml");
  EXPECT_DOUBLE_EQ(shipped.peak_fp8_flops, 1979e12);
  const ComputeProfile p = apply_calibration(catalog_profile(), shipped, "h200-measured.toml");
  ASSERT_TRUE(p.fp8_calibration.has_value());
  // 8192^3 E4M3 -> bf16 ran at 1379 TFLOP/s after an idle gap (calibrate/README.md, FP8 run 1, 2026-12-01;
  // 70 % of the 1979 peak); bf16 at 763 on the same lease. Within 5 %.
  const double flops = 2.0 * 8192 * 8192 * 8192;
  const double t = fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, flops,
                                      gemm_fp8_bytes(8192, 8192, 8192, 1), {8192, 8192, 8192});
  EXPECT_NEAR(flops / t / 1e12, 1379, 69);
}

}  // namespace
}  // namespace moetwin
