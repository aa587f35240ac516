#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/test_support/input_error_of.hpp"
#include "sample_calibration_profile.hpp"
#include "sample_fit_options.hpp"

namespace moetwin {
namespace {

CalibrationProfile sample_profile() {
  CalibrationProfile p = sample_calibration_profile("H200-SXM", "NVIDIA H200");
  GemmCurve g = sample_gemm_curve();
  set_heldout_stats(g, 3, 0.01, 0.04, 1);
  p.gemm["gemm"] = g;
  p.kernels["permute"] = {{1e6, 1e9}, {1e12, 4e12}};
  p.transports["nccl.all_reduce.n8"] = {{{0, 5e-6, 1e11}, {1e6, 1e-5, 3e11}}};
  return p;
}

TEST(LogCurve, InterpolatesInLog2AndClamps) {
  const LogCurve c{{64, 1024}, {0.25, 0.75}};
  EXPECT_DOUBLE_EQ(c.at(32), 0.25);
  EXPECT_DOUBLE_EQ(c.at(4096), 0.75);
  // 256 is 2 of the 4 doublings from 64 to 1024: halfway.
  EXPECT_DOUBLE_EQ(c.at(256), 0.5);
}

TEST(LogCurve, Log2InterpolateIsTheCurvesOneImplementation) {
  const std::vector<double> x{64, 1024}, y{0.25, 0.75};
  EXPECT_DOUBLE_EQ(log2_interpolate(x, y, 32), 0.25);
  EXPECT_DOUBLE_EQ(log2_interpolate(x, y, 4096), 0.75);
  // 128 is 1 of the 4 doublings from 64 to 1024: a quarter of the way.
  EXPECT_DOUBLE_EQ(log2_interpolate(x, y, 128), 0.375);
  EXPECT_DOUBLE_EQ(log2_interpolate({}, {}, 128), 0);
  const LogCurve c{x, y};
  EXPECT_DOUBLE_EQ(c.at(128), log2_interpolate(x, y, 128));
}

TEST(CalibratedGemmSeconds, FloorPlusMaxOfComputeAndMemory) {
  // 1e12 FLOP at 1e15 x 0.5 = 2 ms; 4e9 bytes at 4e12 x 0.5 = 2 ms -> equal: 2 ms + 10 us floor.
  GemmTimeInputs in{.floor_s = 1e-5,
                    .efficiency = 0.5,
                    .memory_efficiency = 0.5,
                    .peak_flops = 1e15,
                    .copy_bandwidth = 4e12,
                    .flops = 1e12,
                    .bytes = 4e9};
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5 + 2e-3);
  in.bytes = 8e9;  // memory bound: 4 ms
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5 + 4e-3);
  in.memory_efficiency = 0;  // no memory term: compute only
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5 + 2e-3);
  in.memory_efficiency = 0.5;
  in.copy_bandwidth = 0;  // no copy bandwidth measured: no memory term either
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5 + 2e-3);
}

TEST(CalibratedGemmSeconds, HiddenFloorOverlapsLongerCallsOnly) {
  // Floor 10 us of which 6 us hide behind a longer call's work: the GPU adds 4 us.
  GemmTimeInputs in{.floor_s = 1e-5,
                    .hidden_floor_s = 6e-6,
                    .efficiency = 0.5,
                    .peak_flops = 1e15,
                    .flops = 1e12};  // 2 ms of work
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 4e-6 + 2e-3);
  in.flops = 2e9;  // 4 us of work: 4 + 4 = 8 us < the 10 us floor -> launch-bound
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5);
  in.flops = 4e9;  // 8 us of work: 4 + 8 = 12 us
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 4e-6 + 8e-6);
  in.hidden_floor_s = 0;  // additive: 10 + 8 us
  EXPECT_DOUBLE_EQ(calibrated_gemm_seconds(in), 1e-5 + 8e-6);
}

TEST(TransportCurve, PicksBandByMessageSize) {
  const TransportCurve t{{{0, 5e-6, 1e11}, {1e6, 1e-5, 3e11}}};
  EXPECT_DOUBLE_EQ(t.time_s(1e5), 5e-6 + 1e-6);
  EXPECT_DOUBLE_EQ(t.time_s(3e6), 1e-5 + 1e-5);
}

TEST(CalibrationProfile, GemmTimeUsesFloorPeakAndEfficiency) {
  const CalibrationProfile p = sample_profile();
  // m=n=k=2048: flops 2*2048^3 = 17179869184; efficiency clamped at 0.75 -> 22.9 us; the 25165824
  // bytes take 12.6 us at 4e12 x 0.5 B/s: compute bound.
  EXPECT_DOUBLE_EQ(*p.gemm_time_s("gemm", 2048, 2048, 2048, 1), 1e-5 + 17179869184.0 / 7.5e14);
  // m=n=k=256: efficiency 0.5 gives 33554432 / 5e14 = 0.07 us, but 393216 bytes take 0.2 us.
  EXPECT_DOUBLE_EQ(*p.gemm_time_s("gemm", 256, 256, 256, 1), 1e-5 + 393216.0 / 2e12);
  // batch 4, smallest dim 64: efficiency 0.25 gives 2 x 64 x 4096^2 x 4 / 2.5e14 = 34.4 us, but the
  // call moves 2 x (64 x 4096 + 4096^2 + 64 x 4096) x 4 = 138412032 bytes at 4e12 x 0.5 B/s = 69.2 us.
  EXPECT_DOUBLE_EQ(gemm_bytes(64, 4096, 4096, 4), 138412032.0);
  EXPECT_DOUBLE_EQ(*p.gemm_time_s("gemm", 64, 4096, 4096, 4), 1e-5 + 138412032.0 / 2e12);
  EXPECT_FALSE(p.gemm_time_s("attention", 1, 1, 1, 1).has_value());
  EXPECT_EQ(gemm_curve_key("gemm", 4096, 4096, 64), "gemm.small_k");
  EXPECT_EQ(gemm_curve_key("gemm", 64, 4096, 64), "gemm");
}

TEST(CalibrationProfile, WriteThenParseGivesTheSameNumbers) {
  const CalibrationProfile p = sample_profile();
  const std::string text = format_calibration_profile(p);
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  EXPECT_EQ(format_calibration_profile(back), text);
  EXPECT_EQ(back.gpu, "H200-SXM");
  EXPECT_DOUBLE_EQ(back.gemm.at("gemm").efficiency.y[1], 0.75);
  EXPECT_DOUBLE_EQ(back.gemm.at("gemm").memory_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(back.transports.at("nccl.all_reduce.n8").bands[1].bandwidth, 3e11);
  EXPECT_DOUBLE_EQ(back.kernels.at("permute").x[1], 1e9);
  EXPECT_DOUBLE_EQ(back.kernels.at("permute").y[1], 4e12);
}

TEST(CalibrationProfile, StrictErrorsNameFileLineAndKey) {
  const std::string good = format_calibration_profile(sample_profile());
  EXPECT_NE(profile_error_of(good + "typo = 1\n").find("transports.nccl.all_reduce.n8.typo: 1: no such key"),
            std::string::npos)
      << profile_error_of(good + "typo = 1\n");
  std::string bad = good;
  bad.replace(bad.find("efficiency = [0.25, 0.75]"), 25, "efficiency = [0.25]");
  EXPECT_NE(profile_error_of(bad).find("gemm.gemm.efficiency: 1 values: 2 values, one per min_dim"),
            std::string::npos)
      << profile_error_of(bad);
  bad = good;
  bad.replace(bad.find("min_dim = [64, 1024]"), 20, "min_dim = [1024, 64]");
  EXPECT_NE(profile_error_of(bad).find(": gemm.gemm.min_dim: 64: strictly increasing values"),
            std::string::npos)
      << profile_error_of(bad);
  bad = good;
  bad.replace(bad.find("schema_version = 4"), 18, "schema_version = 5");
  EXPECT_NE(profile_error_of(bad).find("p.toml:8: schema_version: 5: an integer in [1, 4]"),
            std::string::npos)
      << profile_error_of(bad);
  bad = good;
  bad.replace(bad.find("hidden_floor_s = 0"), 18, "hidden_floor_s = 2e-5");
  EXPECT_NE(profile_error_of(bad).find("gemm.gemm.hidden_floor_s: 2e-05: a number in [0, 1e-05]"),
            std::string::npos)
      << profile_error_of(bad);
  bad = good;
  bad.replace(bad.find("memory_efficiency = 0.5"), 23, "memory_efficiency = 3");
  EXPECT_NE(profile_error_of(bad).find("gemm.gemm.memory_efficiency: 3: a number in [0, 2]"),
            std::string::npos)
      << profile_error_of(bad);
}

TEST(CalibrationProfile, HiddenFloorRoundTripsAndSchemaTwoReadsWithoutIt) {
  CalibrationProfile p = sample_profile();
  p.gemm["gemm"].hidden_floor_s = 6e-6;
  const std::string v3 = format_calibration_profile(p);
  EXPECT_NE(v3.find("hidden_floor_s = 6e-06\n"), std::string::npos) << v3;
  const CalibrationProfile back = parse_calibration_profile(v3, "v3.toml");
  EXPECT_DOUBLE_EQ(back.gemm.at("gemm").hidden_floor_s, 6e-6);
  EXPECT_EQ(format_calibration_profile(back), v3);
  // m=n=k=2048 (22.9 us of work): 10 - 6 + 22.9 us; m=n=k=256 (0.2 us of bytes): the 10 us floor.
  EXPECT_DOUBLE_EQ(*back.gemm_time_s("gemm", 2048, 2048, 2048, 1), 4e-6 + 17179869184.0 / 7.5e14);
  EXPECT_DOUBLE_EQ(*back.gemm_time_s("gemm", 256, 256, 256, 1), 1e-5);
  // Schema 2: the key is unknown and the floor adds to the work.
  p.schema_version = 2;
  const std::string v2 = format_calibration_profile(p);
  EXPECT_EQ(v2.find("hidden_floor_s ="), std::string::npos);
  const CalibrationProfile back2 = parse_calibration_profile(v2, "v2.toml");
  EXPECT_DOUBLE_EQ(back2.gemm.at("gemm").hidden_floor_s, 0);
  EXPECT_DOUBLE_EQ(*back2.gemm_time_s("gemm", 2048, 2048, 2048, 1), 1e-5 + 17179869184.0 / 7.5e14);
  std::string bad = v2;
  bad.replace(bad.find("heldout_shapes"), 0, "hidden_floor_s = 1e-6\n");
  EXPECT_NE(profile_error_of(bad).find("gemm.gemm.hidden_floor_s: 1e-06: no such key"), std::string::npos)
      << profile_error_of(bad);
}

TEST(CalibrationProfile, SchemaOneStillReadsWithoutMemoryTerm) {
  // A schema-1 file (no memory_efficiency) reads with the memory term off; in schema 1 the key is unknown.
  CalibrationProfile p = sample_profile();
  p.schema_version = 1;
  const std::string v1 = format_calibration_profile(p);
  EXPECT_EQ(v1.find("memory_efficiency ="), std::string::npos);
  const CalibrationProfile back = parse_calibration_profile(v1, "v1.toml");
  EXPECT_EQ(back.schema_version, 1);
  EXPECT_DOUBLE_EQ(back.gemm.at("gemm").memory_efficiency, 0);
  // Without the memory term a weight-read-bound shape is timed by its FLOPs alone.
  EXPECT_DOUBLE_EQ(*back.gemm_time_s("gemm", 64, 4096, 4096, 8), 1e-5 + 2.0 * 64 * 4096 * 4096 * 8 / 2.5e14);
  std::string bad = v1;
  bad.replace(bad.find("heldout_shapes"), 0, "memory_efficiency = 0.5\n");
  EXPECT_NE(profile_error_of(bad).find("gemm.gemm.memory_efficiency: 0.5: no such key"), std::string::npos)
      << profile_error_of(bad);
}

TEST(CalibrationProfile, ShippedH200ProfileLoads) {
  const std::string dir = std::string(MOETWIN_SOURCE_DIR) + "/calibrate/profiles";
  const auto p = find_calibration_profile(dir, "H200-SXM");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->measured_gpu, "NVIDIA H200");
  EXPECT_GT(p->d2d_bandwidth, 3e12);
  EXPECT_TRUE(p->gemm.count("grouped_gemm") == 1);
  // 8192^3 predicted within 10 % of the rate measured in the same run (747 TFLOP/s).
  const double t = *p->gemm_time_s("gemm", 8192, 8192, 8192, 1);
  EXPECT_NEAR(2.0 * 8192 * 8192 * 8192 / t / 1e12, 747, 75);
  EXPECT_FALSE(find_calibration_profile(dir, "B300").has_value());
  // No launch-bound call (within 1.5x the floor) left a near-zero efficiency point: the lowest are the
  // 64-token expert GEMMs (~0.2-0.25 of peak, and those are bound by their weight reads anyway).
  for (const auto& [op, g] : p->gemm) {
    for (const double e : g.efficiency.y) EXPECT_GE(e, 0.2) << op;
  }
}

TEST(FitTransport, BandsThroughConsecutivePoints) {
  // (1 kB, 10 us), (1 MB, 20 us), (2 MB, 30 us): band 0 slope 999000 B / 10 us = 9.99e10 B/s,
  // latency 10 us - 1000 / 9.99e10; band 1 from 1 MB: 1e6 B / 10 us = 1e11 B/s, latency 20 - 10 = 10 us.
  const TransportCurve t = fit_transport({{1e3, 1e-5}, {1e6, 2e-5}, {2e6, 3e-5}});
  ASSERT_EQ(t.bands.size(), 2u);
  EXPECT_DOUBLE_EQ(t.bands[0].min_bytes, 0);
  EXPECT_NEAR(t.bands[0].bandwidth, 9.99e10, 1);
  EXPECT_NEAR(t.bands[0].latency_s, 1e-5 - 1e3 / 9.99e10, 1e-15);
  EXPECT_DOUBLE_EQ(t.bands[1].min_bytes, 1e6);
  EXPECT_NEAR(t.bands[1].bandwidth, 1e11, 1e-3);
  EXPECT_NEAR(t.bands[1].latency_s, 1e-5, 1e-15);
  // Flat segment: latency = smaller time, negligible bandwidth term.
  const TransportCurve flat = fit_transport({{1e3, 5e-6}, {4e3, 4.9e-6}});
  EXPECT_DOUBLE_EQ(flat.bands[0].latency_s, 4.9e-6);
  EXPECT_DOUBLE_EQ(flat.bands[0].bandwidth, 1e15);
}

Experiment experiment(const std::string& name, const std::string& kind, std::map<std::string, double> params,
                      std::map<std::string, std::string> labels, double t) {
  Experiment e;
  e.name = name;
  e.kind = kind;
  e.unit = "s";
  e.params = std::move(params);
  e.labels = std::move(labels);
  e.samples = {t, t, t};
  return e;
}

// What every fit needs besides GEMMs: the three launch experiments and a 4e12 B/s device copy.
CalibrationDb launch_and_copy_db() {
  CalibrationDb db;
  db.put(experiment("launch.empty.sync_latency", "launch", {}, {}, 1e-5));
  db.put(experiment("launch.empty.back_to_back", "launch", {}, {}, 4e-6));
  db.put(experiment("launch.empty.graph_per_kernel", "launch", {}, {}, 5e-7));
  db.put(experiment("kernel.d2d_copy.a", "kernel", {{"bytes_moved", 1e9}}, {{"op", "d2d_copy"}}, 1e9 / 4e12));
  return db;
}

TEST(Fitter, RecoversAKnownModelAndPredictsHeldBackShapes) {
  // Synthetic GPU: peak 1e15, every GEMM t = 10 us + flops / (1e15 * 0.5). The floor grid steps by 2 % of
  // the fastest trained call (1024^3: 14.29 us); leave-one-out picks the step nearest 10 us (35/50 x
  // 14.29 = 10.006 us), so the held-back shapes come out within 0.1 %.
  CalibrationDb db = launch_and_copy_db();
  db.put(experiment("nccl.all_reduce.n2.1000", "nccl", {{"bytes", 1e3}, {"ranks", 2}}, {{"op", "all_reduce"}},
                    1e-5));
  db.put(experiment("nccl.all_reduce.n2.1000000", "nccl", {{"bytes", 1e6}, {"ranks", 2}},
                    {{"op", "all_reduce"}}, 2e-5));
  for (const double s : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0}) {
    const double flops = 2 * s * s * s;
    db.put(experiment("gemm.square.m" + std::to_string(static_cast<int>(s)), "gemm",
                      {{"m", s}, {"n", s}, {"k", s}, {"batch", 1}, {"flops", flops}}, {},
                      1e-5 + flops / 5e14));
  }
  FitOptions o = sample_fit_options("X", "db.h5");
  const FitResult fit = fit_calibration_profile(db, o);
  const CalibrationProfile& p = fit.profile;
  EXPECT_DOUBLE_EQ(p.d2d_bandwidth, 4e12);
  EXPECT_DOUBLE_EQ(p.launch_back_to_back_s, 4e-6);
  ASSERT_EQ(p.gemm.count("gemm"), 1u);
  // High half of FNV-1a 64 of the names mod 3: m2048, m8192 and m16384 are fold 0 (held back), m4096 and
  // m32768 fold 1, m1024 fold 2; held-back shapes in name order.
  EXPECT_EQ(gemm_fold("gemm.square.m1024"), 2);
  EXPECT_EQ(gemm_fold("gemm.square.m4096"), 1);
  ASSERT_EQ(fit.heldout.size(), 3u);
  EXPECT_EQ(fit.heldout[0].name, "gemm.square.m16384");
  EXPECT_EQ(fit.heldout[1].name, "gemm.square.m2048");
  EXPECT_EQ(fit.heldout[2].name, "gemm.square.m8192");
  EXPECT_NEAR(p.gemm.at("gemm").floor_s, 35 / 50.0 * (1e-5 + 2.0 * 1024 * 1024 * 1024 / 5e14), 1e-12);
  for (const HeldOutShape& h : fit.heldout) {
    EXPECT_EQ(h.fold, 0) << h.name;
    EXPECT_LT(h.relative_error(), 0.001) << h.name;
  }
  EXPECT_EQ(p.gemm.at("gemm").heldout_shapes, 3);
  // 3-fold cross-validation predicts each of the six shapes once, from a fit without its fold (fold 2
  // trains without 1024^3, so its floor grid steps by 2 % of 2048^3's 44.4 us: within 2 %, not 0.1 %).
  const std::vector<HeldOutShape> cv = gemm_cross_validation(db, o);
  ASSERT_EQ(cv.size(), 6u);
  std::map<std::string, int> seen;
  for (const HeldOutShape& h : cv) {
    ++seen[h.name];
    EXPECT_EQ(h.fold, gemm_fold(h.name)) << h.name;
    EXPECT_LT(h.relative_error(), 0.02) << h.name;
  }
  EXPECT_EQ(seen.size(), 6u);
  // Reusing the profile's own held-back fold gives the same predictions with one fit fewer.
  const std::vector<HeldOutShape> reused = gemm_cross_validation(db, o, &fit);
  ASSERT_EQ(reused.size(), cv.size());
  for (std::size_t i = 0; i < cv.size(); ++i) {
    EXPECT_EQ(reused[i].name, cv[i].name);
    EXPECT_EQ(reused[i].fold, cv[i].fold);
    EXPECT_EQ(reused[i].predicted_s, cv[i].predicted_s) << cv[i].name;
  }
  EXPECT_NEAR(p.transports.at("nccl.all_reduce.n2").time_s(1e6), 2e-5, 1e-12);
  // The profile text round-trips through the strict reader.
  EXPECT_NO_THROW(parse_calibration_profile(format_calibration_profile(p), "fit.toml"));
}

TEST(Fitter, RecoversFloorAndMemoryTermOfWeightBoundGroupedGemms) {
  // Synthetic GPU: peak 1e15, copy 4e12 B/s; every grouped GEMM (8 experts) takes
  // t = 5 us + max(flops / (1e15 x 0.7), bytes / (4e12 x 0.9)): up to 128 tokens per expert the weight
  // reads bind (e.g. 64 x 4096 x 2048: 12.3 us of FLOPs, 39.0 us of bytes), from 256 on the FLOPs.
  CalibrationDb db = launch_and_copy_db();
  const double nk[3][2] = {{4096, 2048}, {2048, 1024}, {7168, 2048}};
  for (int model = 0; model < 3; ++model) {
    for (const double m : {64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0}) {
      const double n = nk[model][0], k = nk[model][1];
      const double flops = 2 * m * n * k * 8;
      const double t = 5e-6 + std::max(flops / 7e14, gemm_bytes(m, n, k, 8) / 3.6e12);
      db.put(
          experiment("gemm.model" + std::to_string(model) + ".expert.m" + std::to_string(static_cast<int>(m)),
                     "grouped_gemm", {{"m", m}, {"n", n}, {"k", k}, {"batch", 8}, {"flops", flops}}, {}, t));
    }
  }
  FitOptions o = sample_fit_options("X", "db.h5");
  o.heldout_fold = 1;  // m128 and m256 of every model: the two memory-bound sizes' upper one held back
  const FitResult fit = fit_calibration_profile(db, o);
  const GemmCurve& g = fit.profile.gemm.at("grouped_gemm");
  // Floor grid: 2 % steps of the fastest trained call (2048 x 1024 at 64 tokens: 15.2 us) -> within 0.3 us.
  // No call here is launch-bound, so only what the GPU adds to the work (floor less its hidden part) is
  // determined, not how the floor splits.
  EXPECT_NEAR(g.floor_s - g.hidden_floor_s, 5e-6, 0.31e-6);
  EXPECT_NEAR(g.memory_efficiency, 0.9, 0.03);
  ASSERT_EQ(fit.heldout.size(), 6u);
  bool memory_bound_held_back = false;
  for (const HeldOutShape& h : fit.heldout) {
    EXPECT_LT(h.relative_error(), 0.02) << h.name;
    memory_bound_held_back |= h.name.ends_with(".m64") || h.name.ends_with(".m128");
  }
  EXPECT_TRUE(memory_bound_held_back);
}

TEST(Fitter, RecoversTheFloorPartHiddenBehindLongerCalls) {
  // Synthetic GPU: peak 1e15, efficiency 0.5; a call takes t = max(10 us, 4 us + flops / 5e14): 10 us of
  // host-side cost per call of which 6 us overlap a longer call's work. 256^3 .. 1024^3 are launch-bound
  // (10 us), 1536^3 takes 4 + 14.5 us. Fold 0 (held back): 2048, 6144, 8192. The floor grid's top step is
  // 0.98 x the fastest call (10 us) = 9.8 us; the hidden part in 10 % steps of it: 6/10 x 9.8 = 5.88 us
  // leaves 3.92 us, the step nearest 4 us.
  CalibrationDb db = launch_and_copy_db();
  for (const double s : {256.0, 512.0, 1024.0, 1536.0, 2048.0, 3072.0, 4096.0, 6144.0, 8192.0}) {
    const double flops = 2 * s * s * s;
    db.put(experiment("gemm.square.m" + std::to_string(static_cast<int>(s)), "gemm",
                      {{"m", s}, {"n", s}, {"k", s}, {"batch", 1}, {"flops", flops}}, {},
                      std::max(1e-5, 4e-6 + flops / 5e14)));
  }
  FitOptions o = sample_fit_options("X", "db.h5");
  const FitResult fit = fit_calibration_profile(db, o);
  const GemmCurve& g = fit.profile.gemm.at("gemm");
  EXPECT_NEAR(g.floor_s, 9.8e-6, 1e-12);
  EXPECT_NEAR(g.hidden_floor_s, 0.6 * 9.8e-6, 1e-12);
  ASSERT_EQ(fit.heldout.size(), 3u);
  for (const HeldOutShape& h : fit.heldout) EXPECT_LT(h.relative_error(), 0.005) << h.name;
  // An additive floor cannot fit both the launch-bound calls and 1536^3 (10 us + 14.5 us vs 18.5 us).
  EXPECT_NO_THROW(parse_calibration_profile(format_calibration_profile(fit.profile), "fit.toml"));
}

TEST(Fitter, EveryGemmShapeHeldBackIsInputError) {
  // Three shapes that all hash into fold 0 (gemm.square.m2048, m8192, m16384): nothing left to fit on.
  CalibrationDb db = launch_and_copy_db();
  for (const double s : {2048.0, 8192.0, 16384.0}) {
    db.put(experiment("gemm.square.m" + std::to_string(static_cast<int>(s)), "gemm",
                      {{"m", s}, {"n", s}, {"k", s}, {"batch", 1}, {"flops", 2 * s * s * s}}, {}, 1e-3));
  }
  FitOptions o = sample_fit_options("X", "three.h5");
  {
    const std::string e = test_support::error_of([&] { fit_calibration_profile(db, o); });
    EXPECT_NE(e.find("three.h5"), std::string::npos) << e;
    EXPECT_NE(e.find("all 3 GEMM experiments fall in held-back fold 0"), std::string::npos) << e;
  }
  o.heldout_fold = 1;  // the same three shapes train fold 1's fit
  EXPECT_NO_THROW(fit_calibration_profile(db, o));
}

TEST(Fitter, DatabaseWithoutGpuRunsIsInputError) {
  FitOptions o;
  o.peak_bf16_flops = 1e15;
  o.source_db = "empty.h5";
  EXPECT_THROW(fit_calibration_profile(CalibrationDb{}, o), InputError);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// Issue 55 item 4: NaN, zero, negative and absurd samples are refused by `fit`, naming the database, the
// HDF5 dataset and the sample; finite positive ones pass.
TEST(CheckFitSamples, RefusesNonFiniteAndNonPositiveSamplesNamingTheDataset) {
  const auto db_with = [](double v, const std::string& unit) {
    CalibrationDb db;
    Experiment e;
    e.name = "gemm.m8192.n8192.k8192";
    e.kind = "gemm";
    e.unit = unit;
    e.samples = {1.4e-3, v, 1.5e-3};
    db.put(e);
    return db;
  };
  const auto samples_error_of = [](const CalibrationDb& db) {
    return test_support::error_of([&] { check_fit_samples(db, "run.h5"); });
  };
  EXPECT_EQ(samples_error_of(db_with(std::nan(""), "s")),
            "run.h5: /experiments/gemm.m8192.n8192.k8192 sample 1: nan s: a finite time in (0, 3600] s "
            "(remeasure it, or leave this database out)");
  EXPECT_NE(samples_error_of(db_with(0, "s")).find("sample 1: 0 s: a finite time"), std::string::npos);
  EXPECT_NE(samples_error_of(db_with(-2e-3, "s")).find("sample 1: -0.002 s"), std::string::npos);
  EXPECT_NE(samples_error_of(db_with(1e308, "s")).find("sample 1: 1e+308 s"), std::string::npos);
  EXPECT_NE(samples_error_of(db_with(std::numeric_limits<double>::infinity(), "B/s"))
                .find("a finite positive number"),
            std::string::npos);
  EXPECT_EQ(samples_error_of(db_with(1.45e-3, "s")), "no error");
  EXPECT_EQ(samples_error_of(db_with(5e9, "B/s")), "no error");  // not a time: no hour bound
}

// A profile holding nan does not load back: `fit` reads what it wrote back with this loader before the
// rename, so such a profile is never written.
TEST(CheckFitSamples, AProfileWithNanDoesNotLoadBack) {
  CalibrationProfile p = sample_calibration_profile("H200-SXM", "NVIDIA H200");
  p.launch_sync_s = std::nan("");
  EXPECT_THROW((void)parse_calibration_profile(format_calibration_profile(p), "p.toml"), InputError);
}

}  // namespace
}  // namespace moetwin
