// Attention-kernel curves from the probe's CSV (attention_fit.hpp).
#include "moetwin/calibrate/attention_fit.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin {
namespace {

const std::vector<std::string> kColumns = {"direction", "qk_dim", "v_dim", "heads",   "kv_heads",
                                           "seq",       "rows",   "flops", "median_s"};

double number(const CsvTable& t, const CsvRow& row, const std::string& column, double lo, double hi) {
  const std::string& text = row.fields[t.column(column)];
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < lo ||
      value > hi) {
    throw InputError({t.path, row.line}, column, text.empty() ? "empty" : text,
                     "a number in [" + format_exact(lo) + ", " + format_exact(hi) + "]");
  }
  return value;
}

int integer(const CsvTable& t, const CsvRow& row, const std::string& column, int lo, int hi) {
  const double v = number(t, row, column, lo, hi);
  if (v != std::floor(v)) {
    throw InputError({t.path, row.line}, column, row.fields[t.column(column)],
                     "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(v);
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
    AttentionPoint p;
    p.line = row.line;
    const std::string& dir = row.fields[t.column("direction")];
    if (dir != "fwd" && dir != "bwd") throw InputError({path, row.line}, "direction", dir, "fwd or bwd");
    p.backward = dir == "bwd";
    p.qk_dim = integer(t, row, "qk_dim", 1, 1024);
    p.v_dim = integer(t, row, "v_dim", 1, 1024);
    p.heads = integer(t, row, "heads", 1, 1 << 20);
    p.kv_heads = integer(t, row, "kv_heads", 1, p.heads);
    if (p.heads % p.kv_heads != 0) {
      throw InputError({path, row.line}, "kv_heads", std::to_string(p.kv_heads),
                       "a divisor of heads (" + std::to_string(p.heads) + ")");
    }
    p.seq = integer(t, row, "seq", 1, 1 << 24);
    number(t, row, "rows", 1, 1e15);  // informative (heads x seq); present so the file is the probe's
    p.flops = number(t, row, "flops", 1, 1e18);
    p.seconds = number(t, row, "median_s", 1e-9, 100);
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
    std::sort(gqa.begin(), gqa.end());
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
