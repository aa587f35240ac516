// NVLink collective fit (nvlink_fit.hpp).
#include "moetwin/calibrate/nvlink_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"
#include "moetwin/topology/cluster.hpp"

namespace moetwin {
namespace {

// The group of a point: ranks 0..n-1 of the node; send/recv between the first two.
CollectiveRequest request_of(const NvlinkPoint& p, const std::string& source) {
  CollectiveRequest r;
  r.kind = nvlink_op_kind(p.op, source);
  r.algorithm = default_algorithm(r.kind);
  r.bytes = p.bytes;
  r.ranks.resize(r.kind == CollectiveKind::send_recv ? 2 : static_cast<std::size_t>(p.ranks));
  std::iota(r.ranks.begin(), r.ranks.end(), 0);
  return r;
}

// Bands of one op from (message, implied factor) pairs: one band per distinct message, median factor.
EfficiencyBands bands_of(const std::vector<std::pair<double, double>>& message_factor) {
  std::map<double, std::vector<double>> by_message;
  for (const auto& [message, factor] : message_factor) by_message[message].push_back(factor);
  EfficiencyBands b;
  for (const auto& [message, factors] : by_message) {
    b.min_bytes.push_back(b.min_bytes.empty() ? 0.0 : message);
    b.factor.push_back(median_of(factors));
  }
  return b;
}

}  // namespace

double NvlinkPointResult::relative_error() const {
  return std::abs(predicted_s - point.measured_s) / point.measured_s;
}
double NvlinkPointResult::loo_relative_error() const {
  return std::abs(loo_predicted_s - point.measured_s) / point.measured_s;
}

EfaFabricFit fit_efa_fabric(const std::vector<FabricPoint>& points, const InstanceSpec& instance,
                            const std::string& buffer, const std::string& source) {
  std::map<double, double> stream, latency;  // bytes -> seconds (a repeated size keeps the last)
  for (const FabricPoint& p : points) {
    if (!(p.bytes > 0) || !(p.seconds > 0) || !std::isfinite(p.seconds)) {
      throw InputError({source, 0}, std::string("fabric.efa ") + (p.stream ? "stream" : "latency"),
                       format_exact(p.bytes) + " bytes in " + format_exact(p.seconds) + " s",
                       "expected bytes > 0 and seconds > 0");
    }
    (p.stream ? stream : latency)[p.bytes] = p.seconds;
  }
  if (stream.empty() || latency.empty()) {
    throw InputError({source, 0}, "fabric.efa", stream.empty() ? "no streamed sizes" : "no ping-pong sizes",
                     "expected both (moetwin-calibrate fabric runs ping-pong and streaming)");
  }
  EfaFabricFit f;
  f.instance = instance.name;
  f.buffer = buffer;
  f.step_latency_s = latency.begin()->second;
  for (const auto& [bytes, seconds] : stream) {
    f.efficiency.min_bytes.push_back(f.efficiency.min_bytes.empty() ? 0.0 : bytes);
    f.efficiency.factor.push_back(std::clamp(bytes / (seconds * instance.nic_bandwidth), 1e-6, 1.0));
  }
  const EfficiencyCurve curve = efficiency_curve_of(f.efficiency);
  std::vector<double> errors;
  for (const auto& [bytes, seconds] : latency) {
    const double predicted = f.step_latency_s + bytes / (instance.nic_bandwidth * curve.factor(bytes));
    errors.push_back(std::abs(predicted - seconds) / seconds);
  }
  f.points = static_cast<int>(stream.size() + latency.size());
  f.median_error = median_of(errors);
  f.max_error = *std::max_element(errors.begin(), errors.end());
  return f;
}

namespace {

// The request of a point, after checking that the model can take it.
CollectiveRequest checked_request(const NvlinkPoint& p, const InstanceSpec& instance,
                                  const std::string& source) {
  const std::string what = p.op + " on " + std::to_string(p.ranks) + " GPUs";
  if (p.ranks < 2 || p.ranks > instance.gpus) {
    throw InputError({source, 0}, "ranks", std::to_string(p.ranks),
                     "expected 2.." + std::to_string(instance.gpus) + " GPUs of one " + instance.name);
  }
  if (!(p.bytes > 0) || !std::isfinite(p.bytes))
    throw InputError({source, 0}, what + " bytes", format_exact(p.bytes), "expected > 0");
  if (!(p.measured_s > 0) || !std::isfinite(p.measured_s))
    throw InputError({source, 0}, what + " seconds", format_exact(p.measured_s), "expected > 0");
  return request_of(p, source);
}

// One point's model terms: its request read with a unit step latency and no call latency.
struct PointTerms {
  CollectiveKind kind = CollectiveKind::all_reduce;
  double steps = 0;         // latency steps
  double nvlink_bytes = 0;  // bytes per rank over NVLink
  double message = 0;       // per-step / per-peer message
};

// The model's own latency and traffic terms of a point (checked): its request read with a unit step
// latency and no call latency, so latency_s counts steps.
PointTerms point_terms(const Cluster& cluster, const NvlinkPoint& p, const InstanceSpec& instance,
                       const std::string& source) {
  CollectiveParams unit;
  unit.nvlink_step_latency_s = 1;
  unit.nvlink_call_latency_s = 0;
  const CollectiveRequest r = checked_request(p, instance, source);
  const CollectiveEstimate e = estimate_collective(cluster, r, unit);
  return {r.kind, e.latency_s, e.nvlink_bytes_per_rank, e.message_bytes};
}

// The model's time of a point: estimate_collective's latency and NVLink terms (one node, NVLink the
// only resource), with the efficiency read for the GPU count of the run (send/recv on n GPUs too).
double predict(const NvlinkPoint& p, const PointTerms& t, const CollectiveParams& params, double bandwidth) {
  const double latency = t.steps * params.nvlink_step_latency_s + params.nvlink_call_latency_s;
  return latency + t.nvlink_bytes / (bandwidth * params.nvlink_factor(t.kind, p.ranks, p.bytes, t.message));
}

NvlinkFitReport fit_impl(const std::vector<NvlinkPoint>& points, const InstanceSpec& instance,
                         const GpuSpec& gpu, const std::string& source, NvlinkIndexing indexing) {
  if (points.empty()) throw std::invalid_argument("fit_nvlink_collectives: no points");
  Cluster cluster(instance, gpu, 1);
  cluster.seal();
  std::vector<PointTerms> terms;
  for (const NvlinkPoint& p : points) terms.push_back(point_terms(cluster, p, instance, source));

  // 1. Latencies from the smallest message of every (op, ranks).
  std::map<std::pair<std::string, int>, std::size_t> smallest;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto key = std::make_pair(points[i].op, points[i].ranks);
    const auto it = smallest.find(key);
    if (it == smallest.end() || points[i].bytes < points[it->second].bytes) smallest[key] = i;
  }
  // Weighted least squares (weights 1/t^2: relative error) of t = c + s l.
  double sw = 0, sws = 0, swss = 0, swt = 0, swst = 0;
  for (const auto& [key, i] : smallest) {
    const double t = points[i].measured_s, s = terms[i].steps, w = 1 / (t * t);
    sw += w;
    sws += w * s;
    swss += w * s * s;
    swt += w * t;
    swst += w * s * t;
  }
  const double det = sw * swss - sws * sws;
  double call = 0, step = kNvlinkHopLatencyS;
  bool prior = true;
  if (det > 1e-12 * sw * swss) {
    const double c = (swss * swt - sws * swst) / det, l = (sw * swst - sws * swt) / det;
    if (l >= 0 && c >= 0) {
      call = c;
      step = l;
      prior = false;
    } else if (l >= 0) {  // c < 0: all latency per step
      call = 0;
      step = swst / swss;
      prior = false;
    }
  }
  if (prior) call = std::max(0.0, (swt - step * sws) / sw);

  // 2. Bands: per (op, GPU count) by buffer, or per op by per-step message (GPU count 0: pooled).
  const auto implied = [&](std::size_t i) {
    const double latency = call + terms[i].steps * step;
    const double busy = points[i].measured_s - latency;
    if (!(busy > 0) || terms[i].nvlink_bytes <= 0) return 1.0;
    return std::clamp(terms[i].nvlink_bytes / (gpu.nvlink_bandwidth * busy), 1e-6, 1.0);
  };
  const bool by_buffer = indexing == NvlinkIndexing::buffer;
  const auto key_of = [&](std::size_t i) {
    return std::make_pair(points[i].op, by_buffer ? points[i].ranks : 0);
  };
  std::map<std::pair<std::string, int>, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < points.size(); ++i) by_key[key_of(i)].push_back(i);
  NvlinkFitReport report;
  NvlinkCollectiveFit& fit = report.fit;
  fit.call_latency_s = call;
  fit.step_latency_s = step;
  report.step_latency_from_prior = prior;
  const auto bands_without = [&](const std::pair<std::string, int>& key, std::size_t skip) {
    std::vector<std::pair<double, double>> xf;
    for (const std::size_t i : by_key.at(key)) {
      if (i != skip) xf.push_back({by_buffer ? points[i].bytes : terms[i].message, implied(i)});
    }
    return bands_of(xf);
  };
  const auto set_bands = [&](NvlinkCollectiveFit& f, const std::pair<std::string, int>& key,
                             EfficiencyBands b) {
    if (by_buffer)
      f.buffer_curves[key.first][key.second] = std::move(b);
    else
      f.curves[key.first] = std::move(b);
  };
  for (const auto& [key, idx] : by_key) set_bands(fit, key, bands_without(key, points.size()));

  // 3. In-sample and leave-one-point-out errors.
  const CollectiveParams fitted = nvlink_collective_params(fit);
  std::vector<double> errors, loo_errors;
  for (std::size_t i = 0; i < points.size(); ++i) {
    NvlinkPointResult r;
    r.point = points[i];
    r.message_bytes = terms[i].message;
    r.predicted_s = predict(points[i], terms[i], fitted, gpu.nvlink_bandwidth);
    r.prior_predicted_s =
        estimate_collective(cluster, request_of(points[i], source), CollectiveParams{}).time_s;
    r.loo_predicted_s = r.predicted_s;
    if (by_key.at(key_of(i)).size() > 1) {
      NvlinkCollectiveFit loo = fit;
      set_bands(loo, key_of(i), bands_without(key_of(i), i));
      r.loo_predicted_s = predict(points[i], terms[i], nvlink_collective_params(loo), gpu.nvlink_bandwidth);
    }
    errors.push_back(r.relative_error());
    loo_errors.push_back(r.loo_relative_error());
    report.points.push_back(r);
  }
  for (const NvlinkPoint& p : points) fit.ranks.push_back(p.ranks);
  std::sort(fit.ranks.begin(), fit.ranks.end());
  fit.ranks.erase(std::unique(fit.ranks.begin(), fit.ranks.end()), fit.ranks.end());
  fit.points = static_cast<int>(points.size());
  fit.median_error = median_of(errors);
  fit.max_error = *std::max_element(errors.begin(), errors.end());
  fit.loo_median_error = median_of(loo_errors);
  fit.loo_max_error = *std::max_element(loo_errors.begin(), loo_errors.end());
  return report;
}

std::vector<NvlinkPoint> on_ranks(const std::vector<NvlinkPoint>& points, const std::vector<int>& ranks) {
  std::vector<NvlinkPoint> out;
  for (const NvlinkPoint& p : points) {
    if (std::find(ranks.begin(), ranks.end(), p.ranks) != ranks.end()) out.push_back(p);
  }
  return out;
}

}  // namespace

const char* to_string(NvlinkIndexing indexing) {
  return indexing == NvlinkIndexing::buffer ? "buffer" : "message";
}

NvlinkCrossCountErrors cross_count_errors(const std::vector<NvlinkPoint>& points,
                                          const std::vector<int>& fit_ranks,
                                          const std::vector<int>& predict_ranks, NvlinkIndexing indexing,
                                          const InstanceSpec& instance, const GpuSpec& gpu,
                                          const std::string& source) {
  const std::vector<NvlinkPoint> train = on_ranks(points, fit_ranks), test = on_ranks(points, predict_ranks);
  if (train.empty() || test.empty())
    throw std::invalid_argument("cross_count_errors: no points on the GPU counts to fit or to predict");
  const NvlinkFitReport fitted = fit_impl(train, instance, gpu, source, indexing);
  const CollectiveParams params = nvlink_collective_params(fitted.fit);
  NvlinkCrossCountErrors out;
  out.indexing = indexing;
  out.fit_ranks = fitted.fit.ranks;
  for (const NvlinkPoint& p : test) out.predict_ranks.push_back(p.ranks);
  std::sort(out.predict_ranks.begin(), out.predict_ranks.end());
  out.predict_ranks.erase(std::unique(out.predict_ranks.begin(), out.predict_ranks.end()),
                          out.predict_ranks.end());
  Cluster cluster(instance, gpu, 1);
  cluster.seal();
  std::vector<double> errors, large, large_signed;
  for (const NvlinkPoint& p : test) {
    const double t = predict(p, point_terms(cluster, p, instance, source), params, gpu.nvlink_bandwidth);
    const double signed_error = t / p.measured_s - 1;
    errors.push_back(std::abs(signed_error));
    if (p.bytes >= 16 * 1048576.0) {
      large.push_back(std::abs(signed_error));
      large_signed.push_back(signed_error);
    }
  }
  std::sort(errors.begin(), errors.end());
  out.points = static_cast<int>(errors.size());
  out.median_error = median_of(errors);
  const auto p90 = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(errors.size())));
  out.p90_error = errors[std::max<std::size_t>(p90, 1) - 1];
  out.max_error = errors.back();
  out.large_points = static_cast<int>(large.size());
  if (!large.empty()) {
    out.large_median_error = median_of(large);
    out.large_min_signed = *std::min_element(large_signed.begin(), large_signed.end());
    out.large_max_signed = *std::max_element(large_signed.begin(), large_signed.end());
  }
  return out;
}

NvlinkFitReport fit_nvlink_collectives(const std::vector<NvlinkPoint>& points, const InstanceSpec& instance,
                                       const GpuSpec& gpu, const std::string& source,
                                       NvlinkIndexing indexing) {
  NvlinkFitReport report = fit_impl(points, instance, gpu, source, indexing);
  const std::vector<int>& counts = report.fit.ranks;
  for (const NvlinkIndexing how : {NvlinkIndexing::buffer, NvlinkIndexing::message}) {
    for (const int n : counts) {
      std::vector<int> others;
      for (const int m : counts) {
        if (m != n) others.push_back(m);
      }
      if (!others.empty())
        report.cross_counts.push_back(cross_count_errors(points, {n}, others, how, instance, gpu, source));
    }
    report.cross_counts.push_back(cross_count_errors(points, counts, counts, how, instance, gpu, source));
  }
  return report;
}

}  // namespace moetwin
