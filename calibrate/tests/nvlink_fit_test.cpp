// The NVLink collective fit (nvlink_fit.hpp), its database points (fitter.hpp) and the profile's
// [nvlink] section.
#include "moetwin/calibrate/nvlink_fit.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/topology/cluster.hpp"

namespace moetwin {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return c;
}
const InstanceSpec& p5en() {
  return catalog().instance("p5en.48xlarge");
}
const GpuSpec& h200() {
  return catalog().gpu("H200-SXM");
}

// Points the model itself produces with known parameters: the fit must give them back.
CollectiveParams truth() {
  CollectiveParams p;
  p.nvlink_call_latency_s = 12e-6;
  p.nvlink_step_latency_s = 2e-6;
  p.nvlink_efficiency_by_kind.emplace(CollectiveKind::all_reduce,
                                      EfficiencyCurve({{0, 0.3}, {1 << 20, 0.6}, {1 << 26, 0.8}}));
  p.nvlink_efficiency_by_kind.emplace(CollectiveKind::all_gather, EfficiencyCurve::constant(0.55));
  return p;
}

std::vector<NvlinkPoint> synthetic(const std::vector<int>& ranks) {
  Cluster c(p5en(), h200(), 1);
  c.seal();
  std::vector<NvlinkPoint> out;
  for (const char* op : {"all_reduce", "all_gather"}) {
    for (const int n : ranks) {
      for (double bytes = 1024; bytes <= double(1 << 30); bytes *= 16) {
        CollectiveRequest r;
        r.kind = nvlink_op_kind(op, "test");
        r.algorithm = default_algorithm(r.kind);
        r.bytes = bytes;
        r.ranks.resize(static_cast<std::size_t>(n));
        std::iota(r.ranks.begin(), r.ranks.end(), 0);
        out.push_back({op, n, bytes, estimate_collective(c, r, truth()).time_s});
      }
    }
  }
  return out;
}

TEST(NvlinkFit, RecoversTheModelsOwnParametersAcrossGpuCounts) {
  const NvlinkFitReport r = fit_nvlink_collectives(synthetic({2, 4, 8}), p5en(), h200(), "synthetic");
  EXPECT_FALSE(r.step_latency_from_prior);
  // Smallest messages carry a few ns of bandwidth time on top of the latencies: near, not exact.
  EXPECT_NEAR(r.fit.call_latency_s, 12e-6, 0.05e-6);
  EXPECT_NEAR(r.fit.step_latency_s, 2e-6, 0.01e-6);
  EXPECT_EQ(r.fit.ranks, (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(r.fit.points, 36);  // 2 ops x 3 GPU counts x 6 sizes
  // Bandwidth-bound bands come back exactly as the truth's factors.
  const EfficiencyBands& ag = r.fit.curves.at("all_gather");
  EXPECT_NEAR(ag.factor.back(), 0.55, 1e-3);
  const EfficiencyBands& ar = r.fit.curves.at("all_reduce");
  EXPECT_NEAR(ar.factor.back(), 0.8, 1e-3);
  EXPECT_LT(r.fit.median_error, 0.005);
  EXPECT_LT(r.fit.max_error, 0.05);
}

TEST(NvlinkFit, OneGpuCountKeepsThePriorStepLatency) {
  std::vector<NvlinkPoint> two = synthetic({2});
  const NvlinkFitReport r = fit_nvlink_collectives(two, p5en(), h200(), "synthetic");
  // All-reduce on 2 GPUs has 2 steps, all-gather 1: with exact data the two are separable...
  EXPECT_FALSE(r.step_latency_from_prior);
  // ...but not when all-reduce's two steps take less than all-gather's one (a negative step latency).
  for (NvlinkPoint& p : two) {
    if (p.bytes == 1024) p.measured_s = p.op == "all_reduce" ? 19e-6 : 20e-6;
  }
  const NvlinkFitReport flat = fit_nvlink_collectives(two, p5en(), h200(), "synthetic");
  EXPECT_TRUE(flat.step_latency_from_prior);
  EXPECT_DOUBLE_EQ(flat.fit.step_latency_s, kNvlinkHopLatencyS);
  // Call latency: the 1/t^2-weighted mean of t - steps x 1 us: all-reduce 19 - 2, all-gather 20 - 1.
  const double w_ar = 1 / (19e-6 * 19e-6), w_ag = 1 / (20e-6 * 20e-6);
  EXPECT_NEAR(flat.fit.call_latency_s, (w_ar * 17e-6 + w_ag * 19e-6) / (w_ar + w_ag), 1e-15);
}

TEST(NvlinkFit, ParametersReachTheCollectiveModel) {
  NvlinkCollectiveFit f;
  f.call_latency_s = 15e-6;
  f.step_latency_s = 1.5e-6;
  f.curves["reduce_scatter"] = {{0, 1e6}, {0.4, 0.7}};
  const CollectiveParams p = nvlink_collective_params(f);
  EXPECT_DOUBLE_EQ(p.nvlink_call_latency_s, 15e-6);
  EXPECT_DOUBLE_EQ(p.nvlink_step_latency_s, 1.5e-6);
  EXPECT_DOUBLE_EQ(p.nvlink_curve(CollectiveKind::reduce_scatter).factor(2e6), 0.7);
  EXPECT_DOUBLE_EQ(p.nvlink_curve(CollectiveKind::reduce_scatter).factor(10), 0.4);
  // Ops the fit did not see keep the default curve.
  EXPECT_EQ(p.nvlink_curve(CollectiveKind::all_to_all), default_nvlink_efficiency());
}

TEST(NvlinkFit, RejectsPointsItCannotModel) {
  const auto error = [](NvlinkPoint p) {
    try {
      fit_nvlink_collectives({p}, p5en(), h200(), "db.h5");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({"broadcast", 2, 1024, 1e-5}),
            "db.h5: op: broadcast: expected all_reduce, reduce_scatter, all_gather, all_to_all or send_recv");
  EXPECT_EQ(error({"all_reduce", 16, 1024, 1e-5}),
            "db.h5: ranks: 16: expected 2..8 GPUs of one p5en.48xlarge");
  EXPECT_EQ(error({"all_reduce", 2, 1024, 0}), "db.h5: all_reduce on 2 GPUs seconds: 0: expected > 0");
}

TEST(NvlinkPoints, TakesMultiGpuNcclRunsThatFitInOneNode) {
  CalibrationDb db;
  const auto nccl = [&](const std::string& op, int ranks, double bytes, double s) {
    Experiment e;
    e.name = "nccl." + op + ".n" + std::to_string(ranks) + "." + std::to_string(static_cast<long>(bytes));
    e.kind = "nccl";
    e.unit = "s";
    e.labels = {{"op", op}};
    e.params = {{"bytes", bytes}, {"ranks", ranks}};
    e.samples = {s, s};
    db.put(e);
  };
  nccl("all_reduce", 1, 1024, 4e-6);  // one GPU: no NVLink
  nccl("all_reduce", 2, 4096, 2e-5);
  nccl("all_reduce", 2, 1024, 1.8e-5);
  Experiment t;  // nccl-tests alltoall on 16 ranks (two nodes): skipped; on 4: kept as all_to_all
  t.name = "nccl_tests.alltoall.out_of_place.1024";
  t.kind = "nccl_tests";
  t.unit = "s";
  t.labels = {{"op", "alltoall"}, {"placement", "out_of_place"}};
  t.params = {{"size_bytes", 1024}, {"ranks", 16}};
  t.samples = {3e-5};
  db.put(t);
  t.name = "nccl_tests.alltoall.out_of_place.1024.n4";
  t.params["ranks"] = 4;
  db.put(t);
  t.name = "nccl_tests.alltoall.in_place.1024.n4";
  t.labels["placement"] = "in_place";
  db.put(t);
  const std::vector<NvlinkPoint> p = nvlink_points(db, 8);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].op, "all_reduce");
  EXPECT_EQ(p[0].bytes, 1024);  // sorted by op, ranks, bytes
  EXPECT_DOUBLE_EQ(p[0].measured_s, 1.8e-5);
  EXPECT_EQ(p[1].bytes, 4096);
  EXPECT_EQ(p[2].op, "all_to_all");
  EXPECT_EQ(p[2].ranks, 4);
}

TEST(NvlinkProfile, RoundTripsAndRejectsMalformedSections) {
  CalibrationProfile p;
  p.gpu = "H200-SXM";
  p.peak_bf16_flops = 989e12;
  p.d2d_bandwidth = 4e12;
  NvlinkCollectiveFit f;
  f.ranks = {2, 8};
  f.call_latency_s = 1.75e-5;
  f.step_latency_s = 1e-6;
  f.curves["all_reduce"] = {{0, 512, 1048576}, {0.25, 0.5, 0.75}};
  f.points = 22;
  f.median_error = 0.01;
  f.max_error = 0.1;
  f.loo_median_error = 0.1;
  f.loo_max_error = 0.6;
  p.nvlink = f;
  const std::string text = format_calibration_profile(p);
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  ASSERT_TRUE(back.nvlink.has_value());
  EXPECT_EQ(back.nvlink->ranks, f.ranks);
  EXPECT_EQ(back.nvlink->curves.at("all_reduce").factor, f.curves.at("all_reduce").factor);
  EXPECT_EQ(format_calibration_profile(back), text);

  const auto error_of = [&](const std::string& from, const std::string& to) {
    std::string bad = text;
    bad.replace(bad.find(from), from.size(), to);
    try {
      parse_calibration_profile(bad, "p.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("[nvlink.efficiency.all_reduce]", "[nvlink.efficiency.broadcast]").find("broadcast"),
            std::string::npos);
  EXPECT_NE(error_of("factor = [0.25, 0.5, 0.75]", "factor = [0.25, 0.5]")
                .find("nvlink.efficiency.all_reduce.factor"),
            std::string::npos);
  EXPECT_NE(error_of("ranks = [2, 8]", "ranks = [1, 8]").find("nvlink.ranks"), std::string::npos);
}

// EFA: step latency from the smallest ping-pong, one band per streamed size at bytes / (time x line rate).
TEST(EfaFit, StepLatencyAndBandsFromFabricRuns) {
  const double nic = p5en().nic_bandwidth;
  std::vector<FabricPoint> pts;
  pts.push_back({true, 65536, 65536 / (nic * 0.5)});
  pts.push_back({true, 1048576, 1048576 / (nic * 0.9)});
  pts.push_back({false, 8, 15e-6});
  pts.push_back({false, 65536, 15e-6 + 65536 / (nic * 0.5)});
  pts.push_back({false, 4194304, 15e-6 + 4194304 / (nic * 0.9) + 1e-6});  // 1 us the model does not have
  const EfaFabricFit f = fit_efa_fabric(pts, p5en(), "cuda", "db.h5");
  EXPECT_EQ(f.instance, "p5en.48xlarge");
  EXPECT_EQ(f.buffer, "cuda");
  EXPECT_DOUBLE_EQ(f.step_latency_s, 15e-6);
  EXPECT_EQ(f.efficiency.min_bytes, (std::vector<double>{0, 1048576}));
  EXPECT_NEAR(f.efficiency.factor[0], 0.5, 1e-12);
  EXPECT_NEAR(f.efficiency.factor[1], 0.9, 1e-12);
  EXPECT_EQ(f.points, 5);
  // The 8 B ping-pong reads the first band (0.5): 8 B / (0.5 x line rate) too much, well below 1 %.
  const double last = 1e-6 / (15e-6 + 4194304 / (nic * 0.9) + 1e-6);
  EXPECT_NEAR(f.max_error, last, 1e-9);
  const CollectiveParams p = efa_collective_params(f);
  EXPECT_DOUBLE_EQ(p.efa_step_latency_s, 15e-6);
  EXPECT_NEAR(p.efa_efficiency.factor(2e6), 0.9, 1e-12);
  EXPECT_EQ(p.nvlink_efficiency, default_nvlink_efficiency());  // NVLink terms untouched

  EXPECT_THROW(fit_efa_fabric({pts[0]}, p5en(), "host", "db.h5"), InputError);
  try {
    fit_efa_fabric({pts[2]}, p5en(), "host", "db.h5");
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "db.h5: fabric.efa: no streamed sizes: expected both (moetwin-calibrate fabric runs "
                 "ping-pong and streaming)");
  }
}

TEST(EfaFit, DatabasePointsAreTheEfaProvidersOnly) {
  CalibrationDb db;
  const auto run = [&](const std::string& provider, const std::string& what, double bytes, double s,
                       const std::string& buffer) {
    Experiment e;
    e.name = "fabric." + provider + "." + what + "." + std::to_string(static_cast<long>(bytes));
    e.kind = what == "latency" ? "fabric_latency" : "fabric_bandwidth";
    e.unit = "s";
    e.labels = {{"provider", provider}, {"buffer", buffer}};
    e.params = {{"bytes", bytes}};
    e.samples = {s};
    db.put(e);
  };
  run("tcp", "latency", 8, 3e-5, "host");
  run("efa", "latency", 8, 1.5e-5, "cuda");
  run("efa", "bandwidth", 65536, 2e-6, "cuda");
  std::string buffer;
  const std::vector<FabricPoint> p = efa_fabric_points(db, buffer);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(buffer, "cuda");
  EXPECT_FALSE(p[0].stream);
  EXPECT_DOUBLE_EQ(p[0].seconds, 1.5e-5);
  EXPECT_TRUE(p[1].stream);
  run("efa", "bandwidth", 1048576, 2e-5, "host");
  EXPECT_THROW(efa_fabric_points(db, buffer), InputError);
}

TEST(EfaProfile, RoundTrips) {
  CalibrationProfile p;
  p.gpu = "H200-SXM";
  p.peak_bf16_flops = 989e12;
  p.d2d_bandwidth = 4e12;
  EfaFabricFit f;
  f.instance = "p5en.48xlarge";
  f.buffer = "host";
  f.step_latency_s = 1.5e-5;
  f.efficiency = {{0, 65536}, {0.5, 0.875}};
  f.points = 4;
  f.median_error = 0.02;
  f.max_error = 0.05;
  p.efa = f;
  const std::string text = format_calibration_profile(p);
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  ASSERT_TRUE(back.efa.has_value());
  EXPECT_EQ(back.efa->efficiency.factor, f.efficiency.factor);
  EXPECT_EQ(format_calibration_profile(back), text);
  std::string bad = text;
  bad.replace(bad.find("buffer = \"host\""), 15, "buffer = \"disk\"");
  try {
    parse_calibration_profile(bad, "p.toml");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("efa.buffer: \"disk\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moetwin
