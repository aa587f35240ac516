// Database -> profile (fitter.hpp).
#include "moetwin/calibrate/fitter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin {

namespace {

// Merges (x, y) points with equal x by the median of their y; ascending x.
LogCurve merged_curve(const std::vector<std::pair<double, double>>& points) {
  std::map<double, std::vector<double>> by_x;
  for (const auto& [x, y] : points) by_x[x].push_back(y);
  LogCurve c;
  for (const auto& [x, ys] : by_x) {
    c.x.push_back(x);
    c.y.push_back(median_of(ys));
  }
  return c;
}

struct Shape {
  std::string name;
  std::string op;  // op class without the precision ("gemm", not "gemm_fp8")
  double m, n, k, batch, flops, t;
  double bytes;  // operands + result of the call: gemm_bytes (bf16) or gemm_fp8_bytes
};

const Experiment* find_experiment(const CalibrationDb& db, const std::string& name) {
  const auto it = db.experiments.find(name);
  return it == db.experiments.end() || it->second.samples.empty() ? nullptr : &it->second;
}

// The GEMM model of one op class: t = max(floor_s, floor_s - hidden_floor_s + work), work =
// max(flops / (peak x efficiency(min_dim)), bytes / (copy bandwidth x memory_efficiency));
// memory_efficiency 0 = no memory term, hidden_floor_s 0 = floor and work add up.
struct GemmModel {
  double floor_s = 0;
  double memory_efficiency = 0;
  double hidden_floor_s = 0;
  // What the GPU adds to a call's work: the floor less its part hidden behind the work.
  double gpu_floor_s() const { return floor_s - hidden_floor_s; }
};

double shape_bytes(const Shape& s) {
  return s.bytes;
}

// Efficiency points of `shapes` (one curve key) under `model`: flops / (peak x (t - floor)) from the
// shapes the memory term does not bind (a memory-bound call says nothing about the compute rate) and
// that take at least 1.5x the floor (launch-bound calls neither: 256^3 in 11 us over a 10 us floor
// would claim 4 % of peak), merged by median per smallest dimension. Empty when no shape informs it.
// The work of such a call is t - (floor - hidden floor): the hidden part overlapped it.
LogCurve efficiency_curve(const std::vector<const Shape*>& shapes, const GemmModel& model, double peak,
                          double copy_bw) {
  std::vector<std::pair<double, double>> points;
  for (const Shape* s : shapes) {
    const double work = s->t - model.gpu_floor_s();
    if (!(work > 0) || s->t < 1.5 * model.floor_s) continue;
    if (model.memory_efficiency > 0 && shape_bytes(*s) / (copy_bw * model.memory_efficiency) >= work)
      continue;
    points.push_back({std::min({s->m, s->n, s->k}), std::min(s->flops / (peak * work), 1.0)});
  }
  return merged_curve(points);
}

double predicted_s(const Shape& s, const LogCurve& curve, const GemmModel& model, double peak,
                   double copy_bw) {
  return calibrated_gemm_seconds({.floor_s = model.floor_s,
                                  .hidden_floor_s = model.hidden_floor_s,
                                  .efficiency = curve.at(std::min({s.m, s.n, s.k})),
                                  .memory_efficiency = model.memory_efficiency,
                                  .peak_flops = peak,
                                  .copy_bandwidth = copy_bw,
                                  .flops = s.flops,
                                  .bytes = shape_bytes(s)});
}

// Curves of one class by key ("<op>", "<op>.small_k"); keys without points are left out (the
// profile then falls back to "<op>").
std::map<std::string, LogCurve> class_curves(const std::vector<const Shape*>& cls, const GemmModel& model,
                                             double peak, double copy_bw) {
  std::map<std::string, std::vector<const Shape*>> by_key;
  for (const Shape* s : cls) by_key[gemm_curve_key(s->op, s->m, s->n, s->k)].push_back(s);
  std::map<std::string, LogCurve> out;
  for (const auto& [key, shapes] : by_key) {
    LogCurve c = efficiency_curve(shapes, model, peak, copy_bw);
    if (!c.x.empty()) out[key] = std::move(c);
  }
  return out;
}

// Grid search over the floor (0 .. 0.98 x the fastest trained call of any class, in 2 % steps: a
// per-call cost common to all kernels cannot exceed the fastest call), the part of it hidden behind
// longer calls' work (0 .. 1 x the floor in 10 % steps, 0 first) and the memory efficiency (none, or
// 0.50 .. 1.30 of the copy bandwidth in 0.02 steps: above 1 where operands stay in L2), minimising the
// sum of squared relative leave-one-out errors of the class's trained shapes. First minimum in grid
// order wins (deterministic). Classes too small for leave-one-out keep 0.9 x fastest, no hidden part
// and no memory term.
GemmModel select_gemm_model(const std::vector<const Shape*>& cls, double fastest, double peak,
                            double copy_bw) {
  GemmModel best{0.9 * fastest, 0};
  double best_score = std::numeric_limits<double>::infinity();
  std::vector<double> memory_grid{0};
  for (int i = 50; i <= 130; i += 2) memory_grid.push_back(i / 100.0);
  for (int f = 0; f < 50; ++f) {
    for (int h = 0; h <= 10; ++h) {
      for (const double me : memory_grid) {
        const double floor_s = fastest * f / 50.0;
        const GemmModel model{floor_s, me, floor_s * (h / 10.0)};  // h = 10: all of it, exactly
        double score = 0;
        bool complete = true;
        for (std::size_t i = 0; i < cls.size() && complete; ++i) {
          const Shape& s = *cls[i];
          const std::string key = gemm_curve_key(s.op, s.m, s.n, s.k);
          // The curve the held-out shape would use: its key's, else the class's plain curve.
          LogCurve curve;
          for (const std::string& k : {key, s.op}) {
            std::vector<const Shape*> rest;
            for (std::size_t j = 0; j < cls.size(); ++j) {
              if (j != i && gemm_curve_key(cls[j]->op, cls[j]->m, cls[j]->n, cls[j]->k) == k)
                rest.push_back(cls[j]);
            }
            curve = efficiency_curve(rest, model, peak, copy_bw);
            if (!curve.x.empty()) break;
          }
          if (curve.x.empty()) {
            complete = false;
            break;
          }
          const double e = (predicted_s(s, curve, model, peak, copy_bw) - s.t) / s.t;
          score += e * e;
        }
        if (complete && score < best_score) {
          best_score = score;
          best = model;
        }
      }
    }
  }
  return best;
}

// The GEMM-class experiments of `db` at `precision`, ordered by class then name. InputError when there
// are fewer than 3; for fp8 none is no error (FP8 curves are optional) and gives an empty list.
std::vector<Shape> gemm_shapes(const CalibrationDb& db, const std::string& path,
                               GemmPrecision precision = GemmPrecision::bf16) {
  const bool fp8 = precision == GemmPrecision::fp8;
  std::vector<Shape> shapes;
  for (const char* op : {"gemm", "grouped_gemm", "attention"}) {
    for (const Experiment* e : db.of_kind(gemm_kind(op, precision))) {
      const double m = e->param("m"), n = e->param("n"), k = e->param("k"), batch = e->param("batch");
      shapes.push_back({e->name, op, m, n, k, batch, e->param("flops"), e->stats().median,
                        fp8 ? gemm_fp8_bytes(m, n, k, batch) : gemm_bytes(m, n, k, batch)});
    }
  }
  if (fp8 && shapes.empty()) return shapes;
  if (shapes.size() < 3) {
    throw InputError({path, 0}, std::string("fewer than 3 ") + (fp8 ? "FP8 " : "") +
                                    "GEMM experiments: run `moetwin-calibrate gemm" +
                                    (fp8 ? " --precision fp8" : "") + "` first");
  }
  std::sort(shapes.begin(), shapes.end(),
            [](const Shape& a, const Shape& b) { return a.op != b.op ? a.op < b.op : a.name < b.name; });
  return shapes;
}

// Fits GEMM curves (a profile's `gemm` or `gemm_fp8`, efficiencies of `peak`) on the shapes outside
// `fold` and predicts the shapes in it. Per op class: the floor and memory efficiency with the smallest
// leave-one-out error on the trained shapes (select_gemm_model); curves from all trained shapes of the
// class. Fills each curve's heldout_* statistics; returns the held-back shapes, class then name order.
std::vector<HeldOutShape> fit_gemm_classes(const std::vector<Shape>& shapes, int fold, double peak,
                                           double copy_bw, std::map<std::string, GemmCurve>& curves,
                                           const std::string& path) {
  std::vector<const Shape*> train, test;
  for (const Shape& s : shapes) (gemm_fold(s.name) == fold ? test : train).push_back(&s);
  if (train.empty()) {
    throw InputError({path, 0}, "all " + std::to_string(shapes.size()) +
                                    " GEMM experiments fall in held-back fold " + std::to_string(fold) +
                                    ": measure more shapes (`moetwin-calibrate gemm`)");
  }
  double fastest = train.front()->t;
  for (const Shape* s : train) fastest = std::min(fastest, s->t);
  curves.clear();
  for (const char* op : {"attention", "gemm", "grouped_gemm"}) {
    std::vector<const Shape*> cls;
    for (const Shape* s : train) {
      if (s->op == op) cls.push_back(s);
    }
    if (cls.empty()) continue;
    const GemmModel model = select_gemm_model(cls, fastest, peak, copy_bw);
    for (auto& [key, curve] : class_curves(cls, model, peak, copy_bw)) {
      GemmCurve g;
      g.floor_s = model.floor_s;
      g.memory_efficiency = model.memory_efficiency;
      g.hidden_floor_s = model.hidden_floor_s;
      g.efficiency = std::move(curve);
      curves[key] = std::move(g);
    }
  }
  std::vector<HeldOutShape> heldout;
  std::map<std::string, std::vector<double>> errors;
  for (const Shape* s : test) {
    const auto predicted =
        gemm_curves_time_s(curves, peak, copy_bw, s->op, s->m, s->n, s->k, s->batch, s->bytes);
    if (!predicted) continue;
    HeldOutShape h{s->name, s->op, s->t, *predicted, fold};
    errors[gemm_curve_key(s->op, s->m, s->n, s->k)].push_back(h.relative_error());
    heldout.push_back(h);
  }
  for (auto& [op, g] : curves) {
    const std::vector<double>& e = errors[op];
    g.heldout_shapes = static_cast<int>(e.size());
    if (e.empty()) continue;
    g.heldout_median_error = median_of(e);
    g.heldout_max_error = *std::max_element(e.begin(), e.end());
    g.heldout_within_5pct =
        static_cast<double>(std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.05; })) /
        static_cast<double>(e.size());
  }
  return heldout;
}

// The copy reference: bandwidth of the largest kernel.d2d_copy experiment (bytes moved / median s).
double d2d_reference_bandwidth(const CalibrationDb& db, const std::string& path) {
  double copy_bytes = 0, bandwidth = 0;
  for (const Experiment* e : db.of_kind("kernel")) {
    if (e->labels.at("op") != "d2d_copy") continue;
    const double bytes = e->param("bytes_moved");
    if (bytes >= copy_bytes) {
      copy_bytes = bytes;
      bandwidth = bytes / e->stats().median;
    }
  }
  if (copy_bytes == 0)
    throw InputError({path, 0}, "no kernel.d2d_copy.* experiments: run `moetwin-calibrate all` first");
  return bandwidth;
}

}  // namespace

double HeldOutShape::relative_error() const {
  return std::fabs(predicted_s - measured_s) / measured_s;
}

TransportCurve fit_transport(const std::vector<std::pair<double, double>>& points) {
  TransportCurve c;
  if (points.empty()) return c;
  if (points.size() == 1) {
    c.bands.push_back({0, 0, points[0].first / points[0].second});
    return c;
  }
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const auto [s0, t0] = points[i];
    const auto [s1, t1] = points[i + 1];
    TransportBand b;
    b.min_bytes = i == 0 ? 0 : s0;
    if (t1 > t0) {
      b.bandwidth = (s1 - s0) / (t1 - t0);
      b.latency_s = t0 - s0 / b.bandwidth;
      if (b.latency_s < 0) {  // steeper than through the origin: throughput-bound band
        b.bandwidth = s1 / t1;
        b.latency_s = 0;
      }
    } else {
      // Flat or falling (noise at latency-bound sizes): the band costs its smaller time; the
      // bandwidth term stays negligible (1e15 bytes/s).
      b.latency_s = std::min(t0, t1);
      b.bandwidth = 1e15;
    }
    c.bands.push_back(b);
  }
  return c;
}

FitResult fit_calibration_profile(const CalibrationDb& db, const FitOptions& o) {
  const std::string& path = o.source_db;
  FitResult result;
  CalibrationProfile& p = result.profile;
  p.gpu = o.gpu;
  p.measured_gpu = db.provenance.gpu_name;
  p.source_db = o.source_db;
  p.git_revision = db.provenance.git_revision;
  p.measured_at = db.provenance.time_utc;
  p.peak_bf16_flops = o.peak_bf16_flops;

  const Experiment* sync = find_experiment(db, "launch.empty.sync_latency");
  const Experiment* b2b = find_experiment(db, "launch.empty.back_to_back");
  const Experiment* graph = find_experiment(db, "launch.empty.graph_per_kernel");
  if (sync == nullptr || b2b == nullptr || graph == nullptr) {
    throw InputError({path, 0},
                     "no launch.empty.* experiments: run `moetwin-calibrate all` (or launch) first");
  }
  p.launch_sync_s = sync->stats().median;
  p.launch_back_to_back_s = b2b->stats().median;
  p.launch_graph_s = graph->stats().median;

  // Kernels: bandwidth vs bytes moved per op; the copy reference is the largest copy measured.
  p.d2d_bandwidth = d2d_reference_bandwidth(db, path);
  std::map<std::string, std::vector<std::pair<double, double>>> kernel_points;
  for (const Experiment* e : db.of_kind("kernel")) {
    const double bytes = e->param("bytes_moved");
    kernel_points[e->labels.at("op")].push_back({bytes, bytes / e->stats().median});
  }
  for (const auto& [op, points] : kernel_points) p.kernels[op] = merged_curve(points);

  if (o.heldout_fold < 0 || o.heldout_fold >= kGemmFolds) throw std::logic_error("FitOptions::heldout_fold");
  result.heldout = fit_gemm_classes(gemm_shapes(db, path), o.heldout_fold, o.peak_bf16_flops, p.d2d_bandwidth,
                                    p.gemm, path);
  // FP8 curves, the same way, where the db has FP8 runs (`gemm --precision fp8`).
  const std::vector<Shape> fp8 = gemm_shapes(db, path, GemmPrecision::fp8);
  if (!fp8.empty()) {
    if (!(o.peak_fp8_flops > 0))
      throw InputError({path, 0},
                       "FP8 GEMM experiments for " + o.gpu + ", whose catalog entry has no FP8 peak");
    p.peak_fp8_flops = o.peak_fp8_flops;
    result.heldout_fp8 =
        fit_gemm_classes(fp8, o.heldout_fold, o.peak_fp8_flops, p.d2d_bandwidth, p.gemm_fp8, path);
  }

  // Transports: NCCL per (op, ranks), imported nccl-tests out-of-place, libfabric per provider.
  std::map<std::string, std::vector<std::pair<double, double>>> transport_points;
  for (const Experiment* e : db.of_kind("nccl")) {
    const std::string name =
        "nccl." + e->labels.at("op") + ".n" + std::to_string(static_cast<int>(e->param("ranks")));
    transport_points[name].push_back({e->param("bytes"), e->stats().median});
  }
  for (const Experiment* e : db.of_kind("nccl_tests")) {
    if (e->labels.at("placement") != "out_of_place") continue;
    const auto ranks = e->params.find("ranks");
    const std::string name =
        "nccl_tests." + e->labels.at("op") +
        (ranks == e->params.end() ? "" : ".n" + std::to_string(static_cast<int>(ranks->second)));
    transport_points[name].push_back({e->param("size_bytes"), e->stats().median});
  }
  for (const char* kind : {"fabric_latency", "fabric_bandwidth"}) {
    for (const Experiment* e : db.of_kind(kind)) {
      // Experiment names are fabric.<provider>.<latency|bandwidth>.<bytes>.
      const std::size_t a = e->name.find('.');
      const std::size_t b = e->name.find('.', a + 1);
      const std::string provider = e->name.substr(a + 1, b - a - 1);
      const std::string name =
          "fabric." + provider + (std::string(kind) == "fabric_latency" ? "" : ".stream");
      transport_points[name].push_back({e->param("bytes"), e->stats().median});
    }
  }
  for (auto& [name, points] : transport_points) {
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end(),
                             [](const auto& x, const auto& y) { return x.first == y.first; }),
                 points.end());
    p.transports[name] = fit_transport(points);
  }
  if (o.instance && o.gpu_spec) {
    const std::vector<NvlinkPoint> points = nvlink_points(db, o.instance->gpus);
    if (!points.empty()) {
      result.nvlink = fit_nvlink_collectives(points, *o.instance, *o.gpu_spec, o.source_db);
      p.nvlink = result.nvlink->fit;
    }
    std::string buffer;
    const std::vector<FabricPoint> fabric = efa_fabric_points(db, buffer);
    if (!fabric.empty()) p.efa = fit_efa_fabric(fabric, *o.instance, buffer, o.source_db);
  }
  return result;
}

int gemm_fold(const std::string& name) {
  // The high half: FNV-1a's prime is 1 mod 3, so its low bits mod 3 barely mix across similar names.
  return static_cast<int>((fnv1a64(name) >> 32) % static_cast<std::uint64_t>(kGemmFolds));
}

std::string gemm_kind(const std::string& op, GemmPrecision precision) {
  return precision == GemmPrecision::fp8 ? op + "_fp8" : op;
}

std::vector<HeldOutShape> gemm_cross_validation(const CalibrationDb& db, const FitOptions& o,
                                                const FitResult* fitted, GemmPrecision precision) {
  const bool fp8 = precision == GemmPrecision::fp8;
  const double peak = fp8 ? o.peak_fp8_flops : o.peak_bf16_flops;
  const double copy_bw = d2d_reference_bandwidth(db, o.source_db);
  const std::vector<Shape> shapes = gemm_shapes(db, o.source_db, precision);
  std::vector<HeldOutShape> all;
  if (shapes.empty()) return all;
  if (!(peak > 0)) throw InputError({o.source_db, 0}, "FP8 GEMM experiments for a GPU without an FP8 peak");
  std::map<std::string, GemmCurve> curves;
  for (int fold = 0; fold < kGemmFolds; ++fold) {
    if (fitted != nullptr && fold == o.heldout_fold) {
      const std::vector<HeldOutShape>& h = fp8 ? fitted->heldout_fp8 : fitted->heldout;
      all.insert(all.end(), h.begin(), h.end());
      continue;
    }
    for (HeldOutShape& h : fit_gemm_classes(shapes, fold, peak, copy_bw, curves, o.source_db))
      all.push_back(std::move(h));
  }
  return all;
}

// Every sample the fit reads is a finite positive number (a time at most kMaxSampleSeconds): NaN, zero or
// negative samples made `fit` write a profile of nan/inf (issue 55 item 4). Names the database, the HDF5
// dataset and the sample.
void check_fit_samples(const CalibrationDb& db, const std::string& path) {
  for (const auto& [name, e] : db.experiments) {
    const bool time = e.unit == "s";
    for (std::size_t i = 0; i < e.samples.size(); ++i) {
      const double v = e.samples[i];
      if (std::isfinite(v) && v > 0 && (!time || v <= kMaxSampleSeconds)) continue;
      throw InputError({path, 0}, "/experiments/" + name + " sample " + std::to_string(i),
                       format_exact(v) + (time ? " s" : " " + e.unit),
                       time ? "a finite time in (0, 3600] s (remeasure it, or leave this database out)"
                            : "a finite positive number (remeasure it, or leave this database out)");
    }
  }
}

}  // namespace moetwin
