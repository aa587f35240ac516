// The NVLink collective fit (nvlink_fit.hpp), its database points (fitter.hpp) and the profile's
// [nvlink] section.
#include "moetwin/calibrate/nvlink_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/nvlink_profile.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/topology/cluster.hpp"

namespace moetwin {
namespace {

using test_support::catalog;
const InstanceSpec& p5en() {
  return catalog().instance("p5en.48xlarge");
}
const GpuSpec& h200() {
  return catalog().gpu("H200-SXM");
}

// Points the model itself produces with known per-GPU-count factors: the fit must give them back.
CollectiveParams truth() {
  CollectiveParams p;
  p.nvlink_call_latency_s = 12e-6;
  p.nvlink_step_latency_s = 2e-6;
  p.nvlink_efficiency_by_ranks[CollectiveKind::all_reduce] = {
      {2, EfficiencyCurve({{0, 0.3}, {1 << 20, 0.6}, {1 << 26, 0.7}})},
      {4, EfficiencyCurve({{0, 0.35}, {1 << 20, 0.65}, {1 << 26, 0.8}})}};
  p.nvlink_efficiency_by_ranks[CollectiveKind::all_gather] = {{2, EfficiencyCurve::constant(0.55)},
                                                              {4, EfficiencyCurve::constant(0.6)}};
  return p;
}

std::vector<NvlinkPoint> synthetic(const std::vector<int>& ranks, const CollectiveParams& params = truth(),
                                   const std::vector<const char*>& ops = {"all_reduce", "all_gather"}) {
  Cluster c(p5en(), h200(), 1);
  c.seal();
  std::vector<NvlinkPoint> out;
  for (const char* op : ops) {
    for (const int n : ranks) {
      for (double bytes = 1024; bytes <= double(1 << 30); bytes *= 16) {
        CollectiveRequest r;
        r.kind = nvlink_op_kind(op, "test");
        r.algorithm = default_algorithm(r.kind);
        r.bytes = bytes;
        r.ranks.resize(static_cast<std::size_t>(n));
        std::iota(r.ranks.begin(), r.ranks.end(), 0);
        out.push_back({op, n, bytes, estimate_collective(c, r, params).time_s});
      }
    }
  }
  return out;
}

TEST(NvlinkFit, RecoversPerGpuCountFactorsByBuffer) {
  // 8 GPUs are generated from the 4-GPU curves (held beyond the truth's counts) and fitted as a count
  // of their own.
  const NvlinkFitReport r = fit_nvlink_collectives(synthetic({2, 4, 8}), p5en(), h200(), "synthetic");
  EXPECT_FALSE(r.step_latency_from_prior);
  // Smallest messages carry a few ns of bandwidth time on top of the latencies: near, not exact.
  EXPECT_NEAR(r.fit.call_latency_s, 12e-6, 0.05e-6);
  EXPECT_NEAR(r.fit.step_latency_s, 2e-6, 0.01e-6);
  EXPECT_EQ(r.fit.ranks, (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(r.fit.points, 36);  // 2 ops x 3 GPU counts x 6 sizes
  EXPECT_TRUE(r.fit.curves.empty());
  // One band per measured buffer (1 KiB .. 1 GiB in x16 steps, the first from 0), per GPU count.
  const EfficiencyBands& ar4 = r.fit.buffer_curves.at("all_reduce").at(4);
  EXPECT_EQ(ar4.min_bytes, (std::vector<double>{0, 16384, 262144, 4194304, 67108864, 1073741824}));
  // Bandwidth-bound bands come back as the truth's factors: 4 MiB in the 1 MiB band, 64 MiB and 1 GiB
  // in the 64 MiB band.
  EXPECT_NEAR(ar4.factor[3], 0.65, 2e-3);
  EXPECT_NEAR(ar4.factor[5], 0.8, 1e-3);
  EXPECT_NEAR(r.fit.buffer_curves.at("all_reduce").at(2).factor[5], 0.7, 1e-3);
  EXPECT_NEAR(r.fit.buffer_curves.at("all_reduce").at(8).factor[5], 0.8, 1e-3);
  EXPECT_NEAR(r.fit.buffer_curves.at("all_gather").at(2).factor[5], 0.55, 1e-3);
  EXPECT_NEAR(r.fit.buffer_curves.at("all_gather").at(4).factor[5], 0.6, 1e-3);
  EXPECT_LT(r.fit.median_error, 0.005);
  EXPECT_LT(r.fit.max_error, 0.05);
  // The report's predictions are the simulator's: estimate_collective with the fitted parameters.
  Cluster c(p5en(), h200(), 1);
  c.seal();
  const CollectiveParams fitted = nvlink_collective_params(r.fit);
  const NvlinkPointResult& last = r.points.back();  // all_gather, 8 GPUs, 1 GiB
  CollectiveRequest req{CollectiveKind::all_gather, CollectiveAlgorithm::ring, last.point.bytes, {}};
  req.ranks.resize(8);
  std::iota(req.ranks.begin(), req.ranks.end(), 0);
  EXPECT_DOUBLE_EQ(last.predicted_s, estimate_collective(c, req, fitted).time_s);
  // Cross-count summaries: per indexing, each count's fit predicting the others, then in sample.
  ASSERT_EQ(r.cross_counts.size(), 8u);
  EXPECT_EQ(r.cross_counts[0].indexing, NvlinkIndexing::buffer);
  EXPECT_EQ(r.cross_counts[0].fit_ranks, (std::vector<int>{2}));
  EXPECT_EQ(r.cross_counts[0].predict_ranks, (std::vector<int>{4, 8}));
  EXPECT_EQ(r.cross_counts[3].fit_ranks, (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(r.cross_counts[3].points, 36);
  EXPECT_EQ(r.cross_counts[4].indexing, NvlinkIndexing::message);
  EXPECT_EQ(r.cross_counts[1].fit_ranks, (std::vector<int>{4}));
  EXPECT_EQ(r.cross_counts[1].predict_ranks, (std::vector<int>{2, 8}));
  // 4 -> 8 by buffer: the 8-GPU truth holds the 4-GPU curves, so the held 4-GPU bands predict it to the
  // latency fit's precision.
  const NvlinkCrossCountErrors four_to_eight =
      cross_count_errors(synthetic({2, 4, 8}), {4}, {8}, NvlinkIndexing::buffer, p5en(), h200(), "synthetic");
  EXPECT_EQ(four_to_eight.points, 12);
  EXPECT_LT(four_to_eight.max_error, 2e-3);
}

// Per-step-message bands (schema <= 3) pool the GPU counts: the fit can still produce them.
TEST(NvlinkFit, MessageIndexingPoolsGpuCounts) {
  const NvlinkFitReport r =
      fit_nvlink_collectives(synthetic({2, 4}), p5en(), h200(), "synthetic", NvlinkIndexing::message);
  EXPECT_TRUE(r.fit.buffer_curves.empty());
  // All-gather messages: bytes / 2 and bytes / 4 for 1 KiB .. 1 GiB, x16 apart: 256 B .. 512 MiB.
  const EfficiencyBands& ag = r.fit.curves.at("all_gather");
  EXPECT_EQ(ag.min_bytes.size(), 12u);
  EXPECT_EQ(ag.min_bytes[1], 512);
  EXPECT_EQ(ag.min_bytes.back(), 536870912);
  EXPECT_EQ(to_string(NvlinkIndexing::message), std::string("message"));
}

// The out-of-sample test across GPU counts on points with one buffer curve for both counts (all-gather,
// 0.4 below 16 MiB, 0.8 from there; 12 us per call, 1 us per step = the prior a one-count fit keeps):
// buffer-indexed bands fitted on 2 GPUs predict 4, per-step-message bands read 64 MiB on 4 GPUs (16 MiB
// messages) in the band of the 2-GPU 4 MiB buffer (2 MiB messages) at 0.4.
TEST(NvlinkFit, CrossCountErrorsByIndexing) {
  CollectiveParams same;
  same.nvlink_call_latency_s = 12e-6;
  same.nvlink_step_latency_s = 1e-6;
  // One measured count: both group sizes read it.
  same.nvlink_efficiency_by_ranks[CollectiveKind::all_gather] = {
      {2, EfficiencyCurve({{0, 0.4}, {16 * 1048576.0, 0.8}})}};
  const std::vector<NvlinkPoint> points = synthetic({2, 4}, same, {"all_gather"});
  const NvlinkCrossCountErrors buffer =
      cross_count_errors(points, {2}, {4}, NvlinkIndexing::buffer, p5en(), h200(), "synthetic");
  EXPECT_EQ(buffer.points, 6);
  EXPECT_EQ(buffer.large_points, 2);  // 64 MiB and 1 GiB
  EXPECT_LT(buffer.max_error, 1e-3);
  const NvlinkCrossCountErrors message =
      cross_count_errors(points, {2}, {4}, NvlinkIndexing::message, p5en(), h200(), "synthetic");
  // 64 MiB on 4 GPUs, hand-computed: measured 12 + 3 x 1 us + 3/4 x 64 MiB / (450 GB/s x 0.8); predicted
  // with the 2-GPU fit (call 12 us + the 1 KiB point's 2.84 ns of bandwidth time, prior step 1 us) and
  // the 2 MiB-message band's factor, 4 MiB / 2 / (450 GB/s x (its bandwidth time - 2.84 ns)).
  const double bw = 450e9, mib = 1048576.0;
  const double leak = 512 / (bw * 0.4);  // the 1 KiB point's bandwidth time
  const double f2m = 0.4 * (2 * mib / (bw * 0.4)) / (2 * mib / (bw * 0.4) - leak);
  const double measured = 15e-6 + 0.75 * 64 * mib / (bw * 0.8);
  const double predicted = 15e-6 + leak + 0.75 * 64 * mib / (bw * f2m);
  EXPECT_NEAR(message.large_max_signed, predicted / measured - 1, 1e-9);  // +90.3 %
  EXPECT_NEAR(message.large_max_signed, 0.903, 1e-3);
  EXPECT_LT(std::abs(message.large_min_signed), 1e-3);  // 1 GiB: 256 MiB messages, the 0.8 band
  EXPECT_NEAR(message.max_error, message.large_max_signed, 1e-15);
  // In sample both reproduce the points.
  EXPECT_LT(
      cross_count_errors(points, {2, 4}, {2, 4}, NvlinkIndexing::message, p5en(), h200(), "s").max_error,
      1e-3);
  EXPECT_THROW(cross_count_errors(points, {8}, {4}, NvlinkIndexing::buffer, p5en(), h200(), "s"),
               std::invalid_argument);
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
  EXPECT_TRUE(p.nvlink_efficiency_by_ranks.empty());
  // Bands by GPU count and buffer (schema 4) become the curves by GPU count.
  NvlinkCollectiveFit g;
  g.buffer_curves["all_to_all"][2] = {{0, 1e6}, {0.3, 0.6}};
  g.buffer_curves["all_to_all"][4] = {{0}, {0.9}};
  const CollectiveParams q = nvlink_collective_params(g, p);
  EXPECT_TRUE(q.nvlink_efficiency_by_kind.empty());
  // 2 GPUs at 2 MB: 0.6; 4 at 10 bytes: 0.9; 3 at 2 MB: 0.6 + 0.3 x (log2 3 - 1) = 0.775488750216347.
  EXPECT_DOUBLE_EQ(q.nvlink_factor(CollectiveKind::all_to_all, 2, 2e6, 1e6), 0.6);
  EXPECT_DOUBLE_EQ(q.nvlink_factor(CollectiveKind::all_to_all, 4, 10, 10), 0.9);
  EXPECT_NEAR(q.nvlink_factor(CollectiveKind::all_to_all, 3, 2e6, 1e6), 0.775488750216347, 1e-15);
  EXPECT_DOUBLE_EQ(q.nvlink_factor(CollectiveKind::all_to_all, 8, 2e6, 1e6), 0.9);
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

// Schema 4: [nvlink.efficiency.<op>.n<ranks>] tables, read strictly.
TEST(NvlinkProfile, RoundTripsAndRejectsMalformedSections) {
  CalibrationProfile p = test_support::bare_h200_profile();
  NvlinkCollectiveFit f = test_support::nvlink_fit({2, 8}, 1.75e-5, 1e-6, 22);
  f.buffer_curves["all_reduce"][2] = {{0, 512, 1048576}, {0.25, 0.5, 0.75}};
  f.buffer_curves["all_reduce"][8] = {{0, 4096}, {0.5, 0.875}};
  f.median_error = 0.01;
  f.max_error = 0.1;
  f.loo_median_error = 0.1;
  f.loo_max_error = 0.6;
  p.nvlink = f;
  const std::string text = format_calibration_profile(p);
  EXPECT_NE(text.find("schema_version = 4\n"), std::string::npos);
  EXPECT_NE(text.find("[nvlink.efficiency.all_reduce.n8]  # by per-rank buffer on 8 GPUs\n"
                      "min_bytes = [0, 4096]\nfactor = [0.5, 0.875]\n"),
            std::string::npos);
  const CalibrationProfile back = parse_calibration_profile(text, "p.toml");
  ASSERT_TRUE(back.nvlink.has_value());
  EXPECT_EQ(back.nvlink->ranks, f.ranks);
  EXPECT_TRUE(back.nvlink->curves.empty());
  EXPECT_EQ(back.nvlink->buffer_curves.at("all_reduce").at(2).factor,
            f.buffer_curves.at("all_reduce").at(2).factor);
  EXPECT_EQ(back.nvlink->buffer_curves.at("all_reduce").at(8).min_bytes, (std::vector<double>{0, 4096}));
  EXPECT_EQ(format_calibration_profile(back), text);

  const auto line_of = [&](const std::string& what) {
    return std::to_string(std::count(text.begin(), text.begin() + static_cast<long>(text.find(what)), '\n') +
                          1);
  };
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
  EXPECT_NE(
      error_of("[nvlink.efficiency.all_reduce.n2]", "[nvlink.efficiency.broadcast.n2]").find("broadcast"),
      std::string::npos);
  // A GPU count the fit did not measure.
  EXPECT_EQ(error_of("[nvlink.efficiency.all_reduce.n8]", "[nvlink.efficiency.all_reduce.n4]"),
            "p.toml:" + line_of("[nvlink.efficiency.all_reduce.n8]") +
                ": nvlink.efficiency.all_reduce.n4: a table: a table n<GPU count> of ranks (n2, n8); "
                "per-step-message bands [nvlink.efficiency.<op>] are schema <= 3");
  // Schema 3's per-step-message bands in a schema 4 file.
  EXPECT_EQ(error_of("[nvlink.efficiency.all_reduce.n2]  # by per-rank buffer on 2 GPUs\n",
                     "[nvlink.efficiency.all_reduce]\nmin_bytes = [0, 1]\nfactor = [0.5, 0.5]\n"
                     "[nvlink.efficiency.all_reduce.n2]\n"),
            "p.toml:" + std::to_string(std::stoi(line_of("[nvlink.efficiency.all_reduce.n2]")) + 2) +
                ": nvlink.efficiency.all_reduce.factor: an array: a table n<GPU count> of ranks (n2, n8); "
                "per-step-message bands [nvlink.efficiency.<op>] are schema <= 3");
  EXPECT_EQ(error_of("min_bytes = [0, 4096]\nfactor = [0.5, 0.875]", "min_bytes = [0, 4096]\nfactor = [0.5]"),
            "p.toml:" + std::to_string(std::stoi(line_of("min_bytes = [0, 4096]")) + 1) +
                ": nvlink.efficiency.all_reduce.n8.factor: 1 values: 2 values, one per min_bytes");
  EXPECT_EQ(error_of("factor = [0.5, 0.875]", "factor = [0.5, 1.5]"),
            "p.toml:" + line_of("factor = [0.5, 0.875]") +
                ": nvlink.efficiency.all_reduce.n8.factor: 1.5: numbers in [1e-06, 1]");
  EXPECT_NE(error_of("ranks = [2, 8]", "ranks = [1, 8]").find("nvlink.ranks"), std::string::npos);
  // A profile object whose bands do not match its schema is a caller's bug.
  CalibrationProfile mixed = p;
  mixed.schema_version = 3;
  EXPECT_THROW(format_calibration_profile(mixed), std::logic_error);
}

// Schema 3 profiles keep their per-step-message bands ([nvlink.efficiency.<op>]) and behaviour.
TEST(NvlinkProfile, ReadsSchema3PerStepMessageBands) {
  CalibrationProfile p = test_support::bare_h200_profile();
  p.schema_version = 3;
  NvlinkCollectiveFit f = test_support::nvlink_fit({2, 4}, 1.6e-5, 3e-6, 22);
  f.curves["all_gather"] = {{0, 1048576}, {0.25, 0.75}};
  p.nvlink = f;
  const std::string text = format_calibration_profile(p);
  EXPECT_NE(text.find("schema_version = 3\n"), std::string::npos);
  EXPECT_NE(text.find("[nvlink.efficiency.all_gather]\nmin_bytes = [0, 1048576]\nfactor = [0.25, 0.75]\n"),
            std::string::npos);
  const CalibrationProfile back = parse_calibration_profile(text, "old.toml");
  ASSERT_TRUE(back.nvlink.has_value());
  EXPECT_TRUE(back.nvlink->buffer_curves.empty());
  EXPECT_EQ(back.nvlink->curves.at("all_gather").factor, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(format_calibration_profile(back), text);
  // Behaviour unchanged: the per-step message picks the band. All-gather of 4 MiB: 2 MiB steps on 2
  // GPUs (0.75), 512 KiB on 8 (0.25), whatever the buffer.
  const CollectiveParams params = nvlink_collective_params(*back.nvlink);
  EXPECT_TRUE(params.nvlink_efficiency_by_ranks.empty());
  EXPECT_DOUBLE_EQ(params.nvlink_factor(CollectiveKind::all_gather, 2, 4194304, 2097152), 0.75);
  EXPECT_DOUBLE_EQ(params.nvlink_factor(CollectiveKind::all_gather, 8, 4194304, 524288), 0.25);
  // n<ranks> tables are schema 4: a schema 3 file with one is rejected (no min_bytes in the op table).
  std::string bad = text;
  bad.replace(bad.find("[nvlink.efficiency.all_gather]"), 30, "[nvlink.efficiency.all_gather.n2]");
  EXPECT_THROW(parse_calibration_profile(bad, "old.toml"), InputError);
}

}  // namespace
}  // namespace moetwin
