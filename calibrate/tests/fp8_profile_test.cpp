// FP8 GEMM curves in the calibration profile ([gemm_fp8."<op>"]): the time formula with FP8 bytes and
// peak (hand-computed), the TOML round trip with and without the section, its strict errors, and the
// fitter's FP8 curves next to (and independent of) the bf16 ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "sample_calibration_profile.hpp"
#include "sample_fit_options.hpp"

namespace moetwin {
namespace {

// sample_calibration_profile (bf16 peak 1e15, copy 4e12 B/s) with a bf16 "gemm" curve, a kernel curve and
// FP8 curves at
// peak 2e15: "gemm" = sample_gemm_curve() (floor 10 us, efficiency 0.25 at 64 .. 0.75 at 1024, memory
// efficiency 0.5), "grouped_gemm.small_k" = 0.4 flat, floor 5 us of which 1 us hidden, no memory term.
CalibrationProfile fp8_profile() {
  CalibrationProfile p = sample_calibration_profile("H200-SXM", "NVIDIA H200");
  p.gemm["gemm"] = sample_gemm_curve();
  p.peak_fp8_flops = 2e15;
  p.gemm_fp8["gemm"] = sample_gemm_curve();
  GemmCurve g;
  g.floor_s = 5e-6;
  g.hidden_floor_s = 1e-6;
  g.efficiency = {{128}, {0.4}};
  set_heldout_stats(g, 2, 0.03, 0.05, 1);
  p.gemm_fp8["grouped_gemm.small_k"] = g;
  p.kernels["permute"] = {{1e6, 1e9}, {1e12, 4e12}};
  return p;
}

TEST(Fp8Profile, TimeUsesFp8BytesAndPeak) {
  const CalibrationProfile p = fp8_profile();
  // E4M3 A and B, bf16 C: 64 x 4096 + 4096^2 + 2 x 64 x 4096 = 17563648 bytes (bf16: 34603008).
  EXPECT_DOUBLE_EQ(gemm_fp8_bytes(64, 4096, 4096, 1), 17563648.0);
  EXPECT_DOUBLE_EQ(gemm_fp8_bytes(64, 4096, 4096, 4), 4 * 17563648.0);
  // 64 x 4096 x 4096: 2147483648 FLOP at 2e15 x 0.25 = 4.29 us; the bytes at 4e12 x 0.5 = 8.78 us bind.
  EXPECT_DOUBLE_EQ(*p.gemm_fp8_time_s("gemm", 64, 4096, 4096, 1), 1e-5 + 17563648.0 / 2e12);
  // 2048^3: 17179869184 FLOP at 2e15 x 0.75 = 11.45 us; 8388608 + 8388608 (fp8) in bytes = 20971520 /
  // 2e12 = 10.49 us: compute bound, at the FP8 peak (the bf16 curve gives 1e15 x 0.75 -> 22.9 us).
  EXPECT_DOUBLE_EQ(*p.gemm_fp8_time_s("gemm", 2048, 2048, 2048, 1), 1e-5 + 17179869184.0 / 1.5e15);
  EXPECT_DOUBLE_EQ(*p.gemm_time_s("gemm", 2048, 2048, 2048, 1), 1e-5 + 17179869184.0 / 7.5e14);
  // k strictly smallest, batch 8: the small_k curve, 4 us the GPU adds + 2 x 4096 x 2048 x 256 x 8 /
  // (2e15 x 0.4) = 34359738368 / 8e14 = 42.95 us.
  EXPECT_DOUBLE_EQ(*p.gemm_fp8_time_s("grouped_gemm", 4096, 2048, 256, 8), 4e-6 + 34359738368.0 / 8e14);
  // No plain grouped_gemm curve and no attention curve: nothing for those.
  EXPECT_FALSE(p.gemm_fp8_time_s("grouped_gemm", 256, 2048, 4096, 8).has_value());
  EXPECT_FALSE(p.gemm_fp8_time_s("attention", 4096, 4096, 128, 8).has_value());
  CalibrationProfile no_peak = p;
  no_peak.peak_fp8_flops = 0;
  EXPECT_FALSE(no_peak.gemm_fp8_time_s("gemm", 2048, 2048, 2048, 1).has_value());
}

TEST(Fp8Profile, RoundTripWithTheSection) {
  const CalibrationProfile p = fp8_profile();
  const std::string text = format_calibration_profile(p);
  EXPECT_NE(text.find("[gemm_fp8.\"gemm\"]\npeak_flops = 2e+15"), std::string::npos) << text;
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  EXPECT_EQ(format_calibration_profile(back), text);
  EXPECT_DOUBLE_EQ(back.peak_fp8_flops, 2e15);
  ASSERT_EQ(back.gemm_fp8.size(), 2u);
  const GemmCurve& g = back.gemm_fp8.at("grouped_gemm.small_k");
  EXPECT_DOUBLE_EQ(g.floor_s, 5e-6);
  EXPECT_DOUBLE_EQ(g.hidden_floor_s, 1e-6);
  EXPECT_EQ(g.efficiency.x, std::vector<double>{128});
  EXPECT_EQ(g.efficiency.y, std::vector<double>{0.4});
  EXPECT_EQ(g.heldout_shapes, 2);
  EXPECT_DOUBLE_EQ(g.heldout_within_5pct, 1);
  EXPECT_DOUBLE_EQ(back.gemm_fp8.at("gemm").memory_efficiency, 0.5);
  // The bf16 curve is untouched by the FP8 section.
  EXPECT_DOUBLE_EQ(back.peak_bf16_flops, 1e15);
  EXPECT_EQ(back.gemm.size(), 1u);
}

TEST(Fp8Profile, ProfilesWithoutTheSectionReadAndWriteAsBefore) {
  CalibrationProfile p = fp8_profile();
  const std::string with = format_calibration_profile(p);
  p.gemm_fp8.clear();
  p.peak_fp8_flops = 0;
  const std::string without = format_calibration_profile(p);
  EXPECT_EQ(without.find("gemm_fp8"), std::string::npos);
  EXPECT_EQ(without.find("FP8"), std::string::npos);
  const CalibrationProfile back = parse_calibration_profile(without, "old.toml");
  EXPECT_TRUE(back.gemm_fp8.empty());
  EXPECT_EQ(back.peak_fp8_flops, 0);
  EXPECT_FALSE(back.gemm_fp8_time_s("gemm", 2048, 2048, 2048, 1).has_value());
  EXPECT_EQ(format_calibration_profile(back), without);
  // The FP8 section is an insertion after the [gemm.*] tables: every other line stays where it was.
  const std::size_t start = with.find("\n# FP8 GEMMs");
  const std::size_t end = with.find("\n[kernels.");
  ASSERT_NE(start, std::string::npos);
  EXPECT_EQ(with.substr(0, start) + with.substr(end == std::string::npos ? with.size() : end), without);
}

TEST(Fp8Profile, StrictErrorsNameKeyAndPeak) {
  const std::string good = format_calibration_profile(fp8_profile());
  // One FP8 peak per profile: a table with another is an error naming it.
  std::string other = good;
  const std::string second = "[gemm_fp8.\"grouped_gemm.small_k\"]\npeak_flops = 2e+15";
  ASSERT_NE(other.find(second), std::string::npos);
  other.replace(other.find(second), second.size(), "[gemm_fp8.\"grouped_gemm.small_k\"]\npeak_flops = 1e+15");
  EXPECT_NE(profile_error_of(other).find("gemm_fp8.grouped_gemm.small_k.peak_flops"), std::string::npos)
      << profile_error_of(other);
  // peak_flops is required in every table; unknown keys are errors as in [gemm.*].
  std::string missing = good;
  const std::string line = "peak_flops = 2e+15  # FLOP/s\n";
  missing.erase(missing.find(line), line.size());
  EXPECT_NE(profile_error_of(missing).find("gemm_fp8.gemm.peak_flops: missing"), std::string::npos)
      << profile_error_of(missing);
  std::string typo = good;
  typo.insert(typo.find(line) + line.size(), "typo = 1\n");
  EXPECT_NE(profile_error_of(typo).find("gemm_fp8.gemm.typo: 1: no such key"), std::string::npos)
      << profile_error_of(typo);
}

Experiment experiment(const std::string& name, const std::string& kind, std::map<std::string, double> params,
                      double t) {
  Experiment e;
  e.name = name;
  e.kind = kind;
  e.unit = "s";
  e.params = std::move(params);
  e.samples = {t, t, t};
  return e;
}

// Launch costs, a 4e12 B/s device copy and bf16 squares t = 10 us + flops / 5e14.
CalibrationDb bf16_db() {
  CalibrationDb db;
  db.put(experiment("launch.empty.sync_latency", "launch", {}, 1e-5));
  db.put(experiment("launch.empty.back_to_back", "launch", {}, 4e-6));
  db.put(experiment("launch.empty.graph_per_kernel", "launch", {}, 5e-7));
  Experiment copy = experiment("kernel.d2d_copy.a", "kernel", {{"bytes_moved", 1e9}}, 1e9 / 4e12);
  copy.labels = {{"op", "d2d_copy"}};
  db.put(copy);
  for (const double s : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0}) {
    const double flops = 2 * s * s * s;
    db.put(experiment("gemm.square.m" + std::to_string(static_cast<int>(s)), "gemm",
                      {{"m", s}, {"n", s}, {"k", s}, {"batch", 1}, {"flops", flops}}, 1e-5 + flops / 5e14));
  }
  return db;
}

// FP8 grouped GEMMs (8 experts) of a synthetic GPU with FP8 peak 2e15: t = 6 us + max(flops / (2e15 x 0.6),
// FP8 bytes / (4e12 x 0.9)); at 64 .. 128 tokens per expert the E4M3 weight reads bind.
void add_fp8_grouped(CalibrationDb& db) {
  const double nk[3][2] = {{4096, 2048}, {2048, 1024}, {7168, 2048}};
  for (int model = 0; model < 3; ++model) {
    for (const double m : {64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0}) {
      const double n = nk[model][0], k = nk[model][1];
      const double flops = 2 * m * n * k * 8;
      const double t = 6e-6 + std::max(flops / 1.2e15, gemm_fp8_bytes(m, n, k, 8) / 3.6e12);
      db.put(experiment(
          "gemm_fp8.model" + std::to_string(model) + ".expert.m" + std::to_string(static_cast<int>(m)),
          gemm_kind("grouped_gemm", GemmPrecision::fp8),
          {{"m", m}, {"n", n}, {"k", k}, {"batch", 8}, {"flops", flops}}, t));
    }
  }
}

TEST(Fp8Fitter, KindsCarryThePrecision) {
  EXPECT_EQ(gemm_kind("gemm", GemmPrecision::bf16), "gemm");
  EXPECT_EQ(gemm_kind("grouped_gemm", GemmPrecision::fp8), "grouped_gemm_fp8");
  EXPECT_EQ(gemm_kind("attention", GemmPrecision::fp8), "attention_fp8");
}

TEST(Fp8Fitter, FitsFp8CurvesWithFp8BytesAndLeavesBf16Alone) {
  FitOptions o = sample_fit_options("X", "db.h5");
  o.peak_fp8_flops = 2e15;
  const FitResult plain = fit_calibration_profile(bf16_db(), o);
  EXPECT_TRUE(plain.profile.gemm_fp8.empty());
  EXPECT_TRUE(plain.heldout_fp8.empty());
  EXPECT_TRUE(gemm_cross_validation(bf16_db(), o, &plain, GemmPrecision::fp8).empty());

  CalibrationDb db = bf16_db();
  add_fp8_grouped(db);
  const FitResult fit = fit_calibration_profile(db, o);
  EXPECT_DOUBLE_EQ(fit.profile.peak_fp8_flops, 2e15);
  ASSERT_EQ(fit.profile.gemm_fp8.count("grouped_gemm"), 1u);
  const GemmCurve& g = fit.profile.gemm_fp8.at("grouped_gemm");
  // With bf16 bytes the weight-bound calls would need nearly 2 x the copy bandwidth (the grid stops at 1.3).
  EXPECT_NEAR(g.memory_efficiency, 0.9, 0.03);
  EXPECT_NEAR(g.floor_s - g.hidden_floor_s, 6e-6, 0.4e-6);
  EXPECT_NEAR(g.efficiency.y.back(), 0.6, 0.01);
  ASSERT_FALSE(fit.heldout_fp8.empty());
  for (const HeldOutShape& h : fit.heldout_fp8) {
    EXPECT_EQ(h.fold, 0) << h.name;
    EXPECT_EQ(gemm_fold(h.name), 0) << h.name;
    EXPECT_EQ(h.op, "grouped_gemm");
    EXPECT_LT(h.relative_error(), 0.02) << h.name;
  }
  // 3-fold cross-validation of the FP8 curves: every FP8 shape once, the profile's fold reused.
  const std::vector<HeldOutShape> cv = gemm_cross_validation(db, o, &fit, GemmPrecision::fp8);
  EXPECT_EQ(cv.size(), 18u);
  for (const HeldOutShape& h : cv) EXPECT_LT(h.relative_error(), 0.05) << h.name;
  // The bf16 curves, their held-back shapes and the profile text apart from the FP8 section: unchanged.
  EXPECT_EQ(fit.heldout.size(), plain.heldout.size());
  CalibrationProfile without = fit.profile;
  without.gemm_fp8.clear();
  without.peak_fp8_flops = 0;
  EXPECT_EQ(format_calibration_profile(without), format_calibration_profile(plain.profile));
  const CalibrationProfile back =
      parse_calibration_profile(format_calibration_profile(fit.profile), "fit.toml");
  EXPECT_EQ(back.gemm_fp8.size(), fit.profile.gemm_fp8.size());
}

TEST(Fp8Fitter, Fp8RunsNeedTheCatalogFp8Peak) {
  CalibrationDb db = bf16_db();
  add_fp8_grouped(db);
  FitOptions o = sample_fit_options("A100-SXM", "a100.h5");
  {
    const std::string e = test_support::error_of([&] { fit_calibration_profile(db, o); });
    EXPECT_NE(e.find("a100.h5"), std::string::npos) << e;
    EXPECT_NE(e.find("no FP8 peak"), std::string::npos) << e;
  }
  // Fewer than 3 FP8 shapes: an input error that says which run to make.
  CalibrationDb two = bf16_db();
  two.put(experiment(
      "gemm_fp8.square.m1024", "gemm_fp8",
      {{"m", 1024}, {"n", 1024}, {"k", 1024}, {"batch", 1}, {"flops", 2.0 * 1024 * 1024 * 1024}}, 1e-5));
  o.peak_fp8_flops = 2e15;
  {
    const std::string e = test_support::error_of([&] { fit_calibration_profile(two, o); });
    EXPECT_NE(e.find("--precision fp8"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace moetwin
