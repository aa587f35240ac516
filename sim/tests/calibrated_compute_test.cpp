// Calibrated compute: the GEMM-curve kernel model (hand-computed times), the per-GPU profile lookup
// with its catalog fallback and errors, and predictions that say which source they used.
#include "moetwin/models/calibrated_compute.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
// The sample profile calibrate's profile tests use too.
#include "../../calibrate/tests/sample_calibration_profile.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

using test_support::catalog;

// qwen3-30b-a3b cut to 2 layers on one node of `instance`: tp1 pp1 ep8 dp8, mb 1, 2 microbatches.
Scenario small(const std::string& instance, const std::string& calibration = "") {
  std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n";
  t += "[cluster]\ninstance = \"" + instance + "\"\nnodes = 1\n";
  t += "[parallelism]\ntp = 1\npp = 1\nep = 8\ndp = 8\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 1024\nrecompute = \"none\"\n";
  t += "[dispatcher]\nname = \"nccl-alltoall\"\n";
  if (!calibration.empty()) t += "[calibration]\nprofile = \"" + calibration + "\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

// Peak 1e15 FLOP/s, copy 4e12 B/s; gemm: floor 10 us, efficiency 0.25 at min_dim 64 .. 0.75 at 1024,
// memory efficiency 0.5; gemm.small_k: 0.2 flat, no memory term.
ComputeProfile hand_profile() {
  ComputeProfile p;
  p.gpu = "X";
  p.peak_flops = 2e15;  // catalog numbers, used only by the catalog roofline
  p.hbm_bandwidth = 5e12;
  ComputeCalibration cal;
  cal.path = "x.toml";
  cal.gpu = "X";
  cal.peak_flops = 1e15;
  cal.copy_bandwidth = 4e12;
  const int g = static_cast<int>(OpClass::gemm);
  cal.curve[g] = {{64, 1024}, {0.25, 0.75}, 1e-5, 0.5};
  cal.small_k[g] = {{64}, {0.2}, 1e-5, 0};
  p.calibration = cal;
  return p;
}

TEST(CalibratedKernel, CurveFloorAndMemoryTermByHand) {
  const ComputeProfile p = hand_profile();
  // Compute bound: 256 x 4096 x 4096, 2 x 256 x 4096^2 = 8589934592 FLOP; efficiency at 256 (2 of the
  // 4 doublings from 64 to 1024) = 0.5 -> 8589934592 / 5e14 = 17.179869184 us; + 10 us floor.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}),
                   1e-5 + 8589934592.0 / 5e14);
  // Memory bound: 64 x 4096 x 4096 is 2147483648 FLOP / 2.5e14 = 8.59 us, but 1e8 bytes at
  // 4e12 x 0.5 B/s = 50 us -> 60 us.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 2147483648.0, 1e8, {64, 4096, 4096}), 6e-5);
  // k strictly smallest: the small_k curve (0.2, no memory term) even with many bytes.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 2147483648.0, 1e8, {4096, 4096, 64}),
                   1e-5 + 2147483648.0 / 2e14);
  // Clamped beyond the curve's ends.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 1e12, 0, {8192, 8192, 8192}), 1e-5 + 1e12 / 7.5e14);
}

TEST(CalibratedKernel, SameTimeAsTheProfilesOwnFormula) {
  // The simulator and CalibrationProfile::gemm_time_s share calibrated_gemm_seconds: the same curve
  // gives the same seconds for a compute-bound, a memory-bound and a clamped shape.
  const ComputeProfile sim = hand_profile();
  CalibrationProfile prof = sample_calibration_profile("X", "X");
  prof.gemm["gemm"] = sample_gemm_curve();
  for (const GemmDims d : {GemmDims{256, 4096, 4096}, GemmDims{64, 4096, 4096}, GemmDims{8192, 8192, 8192}}) {
    const double flops = 2 * d.m * d.n * d.k;
    EXPECT_EQ(kernel_seconds(sim, OpClass::gemm, flops, gemm_bytes(d.m, d.n, d.k, 1), d),
              *prof.gemm_time_s("gemm", d.m, d.n, d.k, 1))
        << d.m;
  }
}

TEST(CalibratedKernel, HiddenFloorOverlapsTheWorkOfLongerCalls) {
  ComputeProfile p = hand_profile();
  p.calibration->curve[static_cast<int>(OpClass::gemm)].hidden_floor_s = 6e-6;
  // 256 x 4096 x 4096: 17.179869184 us of work after the 10 - 6 = 4 us the GPU adds.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}),
                   4e-6 + 8589934592.0 / 5e14);
  // 1024^3 at 0.75: 2.86 us of work, 4 + 2.86 < 10 us: the floor.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 2147483648.0, 1e3, {1024, 1024, 1024}), 1e-5);
}

TEST(CalibratedKernel, FittedTimeScaleLeavesMeasuredCurvesAlone) {
  ComputeProfile p = hand_profile();
  const double measured = kernel_seconds(p, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096});
  // What workload.cpp does with the live fit's compute_time_scale: a measured curve keeps its time
  // (the scale was fitted against catalog efficiencies) ...
  scale_catalog_kernel_time(p, 0.7);
  EXPECT_EQ(kernel_seconds(p, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}), measured);
  // ... while kernels on the catalog roofline scale: attention has no curve, 1e10 / (2e15 x 0.5 / 2).
  ComputeProfile slower = hand_profile();
  scale_catalog_kernel_time(slower, 2);
  EXPECT_DOUBLE_EQ(kernel_seconds(slower, OpClass::attention, 1e10, 1e6, {4096, 4096, 128}), 2e10 / 1e15);
  EXPECT_EQ(kernel_seconds(slower, OpClass::gemm, 8589934592.0, 1e6, {256, 4096, 4096}), measured);
}

TEST(CalibratedKernel, FittedTimeScaleNeverLiftsAnEfficiencyAboveTheCeiling) {
  ComputeProfile p = hand_profile();
  p.calibration.reset();
  // gemm 0.75 / 0.7 = 1.07 -> 0.9 (kMaxKernelEfficiency); attention 0.5 / 0.7 = 0.714 stays.
  scale_catalog_kernel_time(p, 0.7);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::gemm)], kMaxKernelEfficiency);
  EXPECT_DOUBLE_EQ(p.efficiency[static_cast<int>(OpClass::attention)], 0.5 / 0.7);
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 1.8e12, 0), 1.8e12 / (2e15 * 0.9));
  EXPECT_THROW(scale_catalog_kernel_time(p, 0), std::logic_error);
}

TEST(CalibratedKernel, CatalogRooflineWithoutDimsCurveOrCalibration) {
  const ComputeProfile p = hand_profile();
  ComputeProfile catalog_only = p;
  catalog_only.calibration.reset();
  // Old signature: the catalog roofline max(flops / (2e15 x 0.75), bytes / (5e12 x 0.8)) = 20 us.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 3e10, 1e6), 3e10 / 1.5e15);
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 3e10, 1e6, {}), 3e10 / 1.5e15);  // no shape
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::gemm, 3e10, 1e6, {0, 4096, 4096}), 3e10 / 1.5e15);
  // No attention curve in the calibration (1e10 / (2e15 x 0.5)), elementwise never calibrated, no
  // calibration at all.
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::attention, 1e10, 1e6, {4096, 4096, 128}), 1e10 / 1e15);
  EXPECT_DOUBLE_EQ(kernel_seconds(p, OpClass::elementwise, 0, 4e8, {1, 1, 1}), 4e8 / (5e12 * 0.8));
  EXPECT_DOUBLE_EQ(kernel_seconds(catalog_only, OpClass::gemm, 3e10, 1e6, {256, 4096, 4096}), 3e10 / 1.5e15);
}

CalibrationProfile small_profile(const std::string& gpu) {
  CalibrationProfile p = sample_calibration_profile(gpu, "NVIDIA " + gpu);
  GemmCurve g = sample_gemm_curve();
  p.gemm["grouped_gemm"] = g;
  g.efficiency = {{64}, {0.2}};
  p.gemm["grouped_gemm.small_k"] = g;
  return p;
}

// A fresh folder under the build tree with `files` (name -> text).
std::string make_dir(const std::string& name, const std::map<std::string, std::string>& files) {
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "sim_calibrated_compute_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir / "fitted");
  for (const auto& [file, text] : files) std::ofstream(dir / file) << text;
  return dir.string();
}

std::string error_of(const Scenario& s, const std::string& dir) {
  return test_support::error_of([&] { compute_profile_for(s, dir); });
}

TEST(ComputeProfileFor, CalibratedWhereMeasuredCatalogElsewhere) {
  // The end-to-end fitted profile's folder holds a file this lookup must never read (it would fail).
  const std::string dir =
      make_dir("lookup", {{"a-h200.toml", format_calibration_profile(small_profile("H200-SXM"))},
                          {"fitted/live-fit.toml", "not = [a calibration profile"}});
  const ComputeProfile h200 = compute_profile_for(small("p5en.48xlarge"), dir);
  ASSERT_TRUE(h200.calibration.has_value());
  // Paths inside the source tree are shown relative to it.
  const std::string root = std::string(MOETWIN_SOURCE_DIR) + "/";
  const std::string shown = dir.compare(0, root.size(), root) == 0 ? dir.substr(root.size()) : dir;
  EXPECT_EQ(h200.source, "calibrated (" + shown + "/a-h200.toml, H200-SXM)");
  const int g = static_cast<int>(OpClass::grouped_gemm);
  EXPECT_TRUE(h200.calibration->curve[static_cast<int>(OpClass::gemm)].empty());
  EXPECT_DOUBLE_EQ(h200.calibration->curve[g].memory_efficiency, 0.5);
  // Same hand numbers as above, now through the file: 256-token experts, 8 of them.
  EXPECT_DOUBLE_EQ(kernel_seconds(h200, OpClass::grouped_gemm, 8 * 8589934592.0, 1e6, {256, 4096, 4096}),
                   1e-5 + 8 * 8589934592.0 / 5e14);

  const ComputeProfile b300 = compute_profile_for(small("p6-b300.48xlarge"), dir);
  EXPECT_FALSE(b300.calibration.has_value());
  EXPECT_EQ(b300.source, "catalog efficiencies (no calibration profile for B300)");
  EXPECT_EQ(compute_profile_for(small("p5en.48xlarge"), "").source,
            "catalog efficiencies (calibration lookup off)");
  EXPECT_FALSE(compute_profile_for(small("p5en.48xlarge", "none"), dir).calibration.has_value());
  // Named profiles: by name in the folder, or by path; they must exist and be for the scenario's GPU.
  EXPECT_TRUE(compute_profile_for(small("p5en.48xlarge", "a-h200"), dir).calibration.has_value());
  EXPECT_TRUE(compute_profile_for(small("p5en.48xlarge", dir + "/a-h200.toml"), "").calibration.has_value());
  EXPECT_NE(error_of(small("p6-b300.48xlarge", "a-h200"), dir)
                .find("a-h200.toml: gpu: H200-SXM: "
                      "a profile for the scenario's GPU B300"),
            std::string::npos)
      << error_of(small("p6-b300.48xlarge", "a-h200"), dir);
  EXPECT_NE(error_of(small("p5en.48xlarge", "missing"), dir).find("calibration.profile: missing"),
            std::string::npos);
}

TEST(ComputeProfileFor, MalformedProfileIsInputErrorNamingFileAndKey) {
  std::string text = format_calibration_profile(small_profile("H200-SXM"));
  text.replace(text.find("memory_efficiency = 0.5"), 23, "memory_efficiency = 2.5");
  const std::string dir = make_dir("bad", {{"bad.toml", text}});
  const std::string e = error_of(small("p5en.48xlarge"), dir);
  EXPECT_NE(e.find(dir + "/bad.toml:"), std::string::npos) << e;
  EXPECT_NE(e.find("gemm.grouped_gemm.memory_efficiency: 2.5"), std::string::npos) << e;
  // A profile without any GEMM curve cannot serve the simulator.
  CalibrationProfile none = small_profile("H200-SXM");
  none.gemm.clear();
  const std::string dir2 = make_dir("nocurve", {{"n.toml", format_calibration_profile(none)}});
  EXPECT_NE(error_of(small("p5en.48xlarge"), dir2).find("n.toml: gemm: no curve"), std::string::npos)
      << error_of(small("p5en.48xlarge"), dir2);
}

TEST(ComputeProfileFor, ShippedH200ProfileReproducesTheMeasuredSquareGemm) {
  const ComputeProfile p = compute_profile_for(small("p5en.48xlarge"), default_calibration_dir());
  EXPECT_EQ(p.source, "calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)");
  // 8192^3 bf16 ran at 747 TFLOP/s after an idle gap (calibrate/README.md, run 2); within 10 %.
  const double flops = 2.0 * 8192 * 8192 * 8192;
  const double t = kernel_seconds(p, OpClass::gemm, flops, 3.0 * 8192 * 8192 * 2, {8192, 8192, 8192});
  EXPECT_NEAR(flops / t / 1e12, 747, 75);
}

TEST(ComputeProfileFor, H100BorrowsTheH200ProfileWithItsOwnMemoryRate) {
  // The catalog names H200-SXM as H100-SXM's calibration_from (same GH100 die, other HBM).
  const std::string dir =
      make_dir("borrow", {{"a-h200.toml", format_calibration_profile(small_profile("H200-SXM"))}});
  const ComputeProfile h200 = compute_profile_for(small("p5en.48xlarge"), dir);
  const ComputeProfile h100 = compute_profile_for(small("p5.48xlarge"), dir);
  ASSERT_TRUE(h100.calibration.has_value());
  const std::string root = std::string(MOETWIN_SOURCE_DIR) + "/";
  const std::string shown = dir.compare(0, root.size(), root) == 0 ? dir.substr(root.size()) : dir;
  EXPECT_EQ(h100.source, "calibrated (" + shown +
                             "/a-h200.toml, H200-SXM's, for H100-SXM: same die, memory-bound rates x 0.698)");
  // Tensor-core curves as measured; the copy rate that bounds memory-bound GEMMs x 3.35 / 4.8.
  const int g = static_cast<int>(OpClass::grouped_gemm);
  EXPECT_EQ(h100.calibration->curve[g].efficiency, h200.calibration->curve[g].efficiency);
  EXPECT_DOUBLE_EQ(h100.calibration->peak_flops, h200.calibration->peak_flops);
  EXPECT_DOUBLE_EQ(h100.calibration->copy_bandwidth, h200.calibration->copy_bandwidth * 3.35 / 4.8);
  // A compute-bound grouped GEMM takes the same time; a memory-bound one (tiny k, many bytes) longer
  // by the HBM ratio: the sample curve's memory term is bytes / (copy bandwidth x 0.5).
  EXPECT_DOUBLE_EQ(kernel_seconds(h100, OpClass::grouped_gemm, 8 * 8589934592.0, 1e6, {256, 4096, 4096}),
                   kernel_seconds(h200, OpClass::grouped_gemm, 8 * 8589934592.0, 1e6, {256, 4096, 4096}));
  // (4e12 bytes: about a second, so the 10 us floor is below the tolerance.)
  const double t200 = kernel_seconds(h200, OpClass::grouped_gemm, 1e6, 4e12, {4096, 4096, 4096});
  const double t100 = kernel_seconds(h100, OpClass::grouped_gemm, 1e6, 4e12, {4096, 4096, 4096});
  EXPECT_GT(t200, 0.1);
  EXPECT_NEAR(t100 / t200, 4.8 / 3.35, 1e-4);
  // By name too; the B300 (no calibration_from) still may not use it.
  EXPECT_TRUE(compute_profile_for(small("p5.48xlarge", "a-h200"), dir).calibration.has_value());
  EXPECT_NE(error_of(small("p6-b300.48xlarge", "a-h200"), dir).find("a profile for the scenario's GPU B300"),
            std::string::npos);
  // Since 2026-12-07 the H100 has a shipped profile of its own (measured on one H100, issue 56): p5 uses it
  // for compute and keeps the lender's NVLink bands (NCCL ran on one GPU there), and both sources say so.
  const Prediction p5 = predict(small("p5.48xlarge"), PredictOptions{});
  EXPECT_EQ(p5.compute_source, "calibrated (calibrate/profiles/h100-measured.toml, H100-SXM)");
  EXPECT_EQ(
      p5.collective_source.rfind("calibrated NVLink (calibrate/profiles/h200-measured.toml, NCCL on 2,4 "
                                 "GPUs of H200-SXM; calibrate/profiles/h100-measured.toml has no [nvlink])",
                                 0),
      0u)
      << p5.collective_source;
}

TEST(AttentionKernelSeconds, InterpolatesInFlopsAndHeadWidthAndFallsBackWithoutCurves) {
  ComputeProfile p = hand_profile();  // calibration peak 1e15 FLOP/s
  p.min_kernel_s = 2e-6;
  EXPECT_FALSE(attention_kernel_seconds(p, false, 1e11, 256).has_value());  // no attention curves
  // Forward at head widths 128 and 256: efficiency 0.2 at 1e9 FLOPs .. 0.4 at 1e11 (128), 0.3 .. 0.6 (256).
  p.calibration->attention_kernels.push_back({false, false, 128, {1e9, 1e11}, {0.2, 0.4}});
  p.calibration->attention_kernels.push_back({false, false, 256, {1e9, 1e11}, {0.3, 0.6}});
  // Exact width, a measured size: 1e11 / (1e15 x 0.6).
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 1e11, 256), 1e11 / 6e14);
  // Between sizes, linear in log2(flops): 1e10 is halfway between 1e9 and 1e11 -> 0.45 at width 256.
  EXPECT_NEAR(*attention_kernel_seconds(p, false, 1e10, 256), 1e10 / (1e15 * 0.45), 1e-18);
  // Between widths, linear in log2(width): 181.02 = 2^7.5 is halfway -> (0.4 + 0.6) / 2 at 1e11.
  EXPECT_NEAR(*attention_kernel_seconds(p, false, 1e11, std::pow(2.0, 7.5)), 1e11 / (1e15 * 0.5), 1e-15);
  // Beyond the measured widths and sizes: the nearest curve, its end value.
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 1e12, 512), 1e12 / 6e14);
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 1e11, 112), 1e11 / 4e14);
  // Never below the smallest kernel time; no backward curve -> the caller's GEMM pricing.
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 10, 256), 2e-6);
  EXPECT_FALSE(attention_kernel_seconds(p, true, 1e11, 256).has_value());
  // Grouped KV without a GQA curve: the multi-head time.
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 1e11, 256, true), 1e11 / 6e14);
  // A GQA curve at width 256 (0.45 at 1e9, 0.72 at 1e11: 1.5x and 1.2x the MHA curve there) scales the
  // multi-head efficiency by that ratio, at the model's own width too: width 128 at 1e11 -> 0.4 x 1.2.
  p.calibration->attention_kernels.push_back({false, true, 256, {1e9, 1e11}, {0.45, 0.72}});
  EXPECT_NEAR(*attention_kernel_seconds(p, false, 1e11, 256, true), 1e11 / (1e15 * 0.72), 1e-15);
  EXPECT_NEAR(*attention_kernel_seconds(p, false, 1e11, 128, true), 1e11 / (1e15 * 0.48), 1e-15);
  EXPECT_NEAR(*attention_kernel_seconds(p, false, 1e9, 256, true), 1e9 / (1e15 * 0.45), 1e-17);
  // Multi-head calls ignore it.
  EXPECT_DOUBLE_EQ(*attention_kernel_seconds(p, false, 1e11, 256, false), 1e11 / 6e14);
}

TEST(AttentionKernelSeconds, ShippedProfilesServeH200AndH100) {
  // DeepSeek-V3's MLA core at TP8 (16 heads of q/k 192, v 128; 4,096 tokens), cuDNN: measured 0.215 ms
  // forward and 0.613 ms backward on the H200 (calibrate/data/h200-layer-probe.csv), 0.200 ms and 0.741 ms
  // on the H100 (calibrate/data/h100-layer-probe.csv); each GPU reads its own profile's curves.
  const double fwd = 4096.0 * 4096 * (192 + 128) * 16;
  struct Probe {
    const char* instance;
    double fwd_s, bwd_s;
  };
  for (const Probe& m :
       {Probe{"p5en.48xlarge", 0.215e-3, 0.613e-3}, Probe{"p5.48xlarge", 0.200e-3, 0.741e-3}}) {
    const ComputeProfile p = compute_profile_for(small(m.instance), default_calibration_dir());
    ASSERT_TRUE(attention_kernel_seconds(p, false, fwd, 320).has_value()) << m.instance;
    EXPECT_NEAR(*attention_kernel_seconds(p, false, fwd, 320) / m.fwd_s, 1.0, 0.1) << m.instance;
    EXPECT_NEAR(*attention_kernel_seconds(p, true, 2.5 * fwd, 320) / m.bwd_s, 1.0, 0.1) << m.instance;
  }
  // The B300 has no measured attention: priced as a GEMM by the caller.
  EXPECT_FALSE(attention_kernel_seconds(
                   compute_profile_for(small("p6-b300.48xlarge"), default_calibration_dir()), false, fwd, 320)
                   .has_value());
}

TEST(Predict, SaysWhichComputeSourceItUsed) {
  const Scenario h200 = load_scenario_file(
      std::string(MOETWIN_SOURCE_DIR) + "/scenarios/examples/qwen3-30b-p5en-2n.toml", catalog());
  const PredictOptions defaults;
  const Prediction p = predict(h200, defaults);
  EXPECT_EQ(p.compute_source, "calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)");
  ASSERT_TRUE(p.built.compute.calibration.has_value());
  EXPECT_FALSE(p.built.compute.calibration->curve[static_cast<int>(OpClass::grouped_gemm)].empty());
  EXPECT_GT(p.iteration_s, 0);

  const Prediction b300 = predict(small("p6-b300.48xlarge"), defaults);
  EXPECT_EQ(b300.compute_source, "catalog efficiencies (no calibration profile for B300)");
  EXPECT_FALSE(b300.built.compute.calibration.has_value());

  PredictOptions off;
  off.calibration = false;
  EXPECT_EQ(predict(small("p5en.48xlarge"), off).compute_source,
            "catalog efficiencies (calibration lookup off)");
  // A caller's own compute profile wins over the lookup.
  const ComputeProfile mine = ComputeProfile::from_gpu(h200.gpu);
  PredictOptions own;
  own.seams.compute = &mine;
  EXPECT_EQ(predict(small("p5en.48xlarge"), own).compute_source, "catalog efficiencies");
}

}  // namespace
}  // namespace moetwin
