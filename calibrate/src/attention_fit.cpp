// Attention-kernel curves from the probe's CSV (attention_fit.hpp).
#include "moetwin/calibrate/attention_fit.hpp"

#include <algorithm>
#include <cmath>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin {
namespace {

const std::vector<std::string> kColumns = {"direction", "qk_dim", "v_dim", "heads",   "kv_heads",
                                           "seq",       "rows",   "flops", "median_s"};

// "a number in [lo, hi]", the expectation of every numeric column.
std::string range(double lo, double hi) {
  return "a number in [" + format_exact(lo) + ", " + format_exact(hi) + "]";
}

}  // namespace

std::vector<AttentionPoint> read_attention_csv(const std::string& path) {
  const CsvTable t = read_csv_file(path);
  for (const std::string& h : t.header) {
    if (std::find(kColumns.begin(), kColumns.end(), h) == kColumns.end()) {
      throw InputError({path, 0}, "column", h,
                       "one of direction, qk_dim, v_dim, heads, kv_heads, seq, rows, flops, median_s");
    }
  }
  std::vector<AttentionPoint> out;
  for (const CsvRow& row : t.rows) {
    const CsvRowReader r(t, row);
    AttentionPoint p;
    p.line = row.line;
    const std::string& dir = r.text("direction");
    if (dir != "fwd" && dir != "bwd") r.fail("direction", "fwd or bwd");
    p.backward = dir == "bwd";
    p.qk_dim = r.int32("qk_dim", 1, 1024);
    p.v_dim = r.int32("v_dim", 1, 1024);
    p.heads = r.int32("heads", 1, 1 << 20);
    p.kv_heads = r.int32("kv_heads", 1, p.heads);
    if (p.heads % p.kv_heads != 0) r.fail("kv_heads", "a divisor of heads (" + std::to_string(p.heads) + ")");
    p.seq = r.int32("seq", 1, 1 << 24);
    r.number("rows", 1, 1e15,
             range(1, 1e15));  // informative (heads x seq); present so the file is the probe's
    p.flops = r.number("flops", 1, 1e18, range(1, 1e18));
    p.seconds = r.number("median_s", 1e-9, 100, range(1e-9, 100));
    out.push_back(p);
  }
  if (out.empty()) throw InputError({path, 0}, "no rows: expected the probe's attention sweep");
  return out;
}

std::map<std::string, LogCurve> fit_attention_kernels(const std::vector<AttentionPoint>& points,
                                                      double peak_flops, const std::string& path,
                                                      std::vector<AttentionCurveReport>* report) {
  if (!(peak_flops > 0)) throw InputError({path, 0}, "peak_flops", format_exact(peak_flops), "a peak > 0");
  // key -> flops -> efficiencies of the MHA calls of that size (std::map: ascending, deterministic).
  std::map<std::string, std::map<double, std::vector<double>>> by_key;
  std::map<std::string, int> calls;
  bool any_mha = false;
  for (const AttentionPoint& p : points) {
    const std::string key = attention_kernel_key({p.backward, p.qk_dim, p.v_dim, p.kv_heads != p.heads});
    by_key[key][p.flops].push_back(p.flops / (p.seconds * peak_flops));
    ++calls[key];
    any_mha = any_mha || p.kv_heads == p.heads;
  }
  if (!any_mha) {
    throw InputError({path, 0}, "no rows with kv_heads = heads: the curves are fitted on multi-head calls");
  }
  std::map<std::string, LogCurve> curves;
  for (const auto& [key, sizes] : by_key) {
    LogCurve c;
    for (const auto& [flops, effs] : sizes) {
      double sum = 0;
      for (const double e : effs) sum += e;
      c.x.push_back(flops);
      c.y.push_back(std::min(1.0, sum / static_cast<double>(effs.size())));
    }
    curves[key] = c;
  }
  if (report == nullptr) return curves;
  for (const auto& [key, c] : curves) {
    AttentionCurveReport r;
    r.key = key;
    r.calls = calls[key];
    r.points = static_cast<int>(c.x.size());
    std::vector<double> loo;
    for (std::size_t i = 0; c.x.size() > 1 && i < c.x.size(); ++i) {
      LogCurve without = c;
      without.x.erase(without.x.begin() + static_cast<std::ptrdiff_t>(i));
      without.y.erase(without.y.begin() + static_cast<std::ptrdiff_t>(i));
      // Time ratio = efficiency ratio inverted: t = flops / (peak x efficiency).
      loo.push_back(std::abs(c.y[i] / without.at(c.x[i]) - 1));
    }
    std::sort(loo.begin(), loo.end());
    if (!loo.empty()) {
      r.loo_median = median_of(loo);
      r.loo_max = loo.back();
    }
    std::vector<double> gqa;
    double signed_sum = 0;
    for (const AttentionPoint& p : points) {
      if (p.kv_heads == p.heads || attention_kernel_key({p.backward, p.qk_dim, p.v_dim, false}) != key)
        continue;
      const double predicted_s = p.flops / (peak_flops * c.at(p.flops));
      gqa.push_back(std::abs(predicted_s / p.seconds - 1));
      signed_sum += predicted_s / p.seconds - 1;
    }
    r.gqa_checked = static_cast<int>(gqa.size());
    if (!gqa.empty()) {
      r.gqa_median = median_of(gqa);
      r.gqa_mean_signed = signed_sum / static_cast<double>(gqa.size());
    }
    report->push_back(r);
  }
  return curves;
}

}  // namespace moetwin
