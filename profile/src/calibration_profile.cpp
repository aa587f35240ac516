// Calibration profile: evaluation, strict TOML reading and deterministic writing (profile.hpp).
#include "moetwin/profile/calibration_profile.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/quoted_string.hpp"

namespace moetwin {

double log2_interpolate(const std::vector<double>& x, const std::vector<double>& y, double value) {
  if (x.empty()) return 0;
  if (value <= x.front()) return y.front();
  if (value >= x.back()) return y.back();
  const auto upper = static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), value) - x.begin());
  const std::size_t lower = upper - 1;
  const double f = (std::log2(value) - std::log2(x[lower])) / (std::log2(x[upper]) - std::log2(x[lower]));
  return y[lower] + (y[upper] - y[lower]) * f;
}

double TransportCurve::time_s(double bytes) const {
  if (bands.empty()) return 0;
  const TransportBand* band = &bands.front();
  for (const TransportBand& b : bands) {
    if (bytes >= b.min_bytes) band = &b;
  }
  return band->latency_s + bytes / band->bandwidth;
}

std::string gemm_curve_key(const std::string& op, double m, double n, double k) {
  return k < m && k < n ? op + ".small_k" : op;
}

double gemm_bytes(double m, double n, double k, double batch) {
  // bf16 operands A (m x k), B (k x n) and result C (m x n), each read or written once.
  return 2 * (m * k + k * n + m * n) * batch;
}

double calibrated_gemm_seconds(const GemmTimeInputs& in) {
  double t = in.flops / (in.peak_flops * in.efficiency);
  if (in.memory_efficiency > 0 && in.copy_bandwidth > 0)
    t = std::max(t, in.bytes / (in.copy_bandwidth * in.memory_efficiency));
  // hidden_floor_s 0: max(floor, floor + work) = floor + work, exactly (rounding is monotonic).
  return std::max(in.floor_s, in.floor_s - in.hidden_floor_s + t);
}

double gemm_fp8_bytes(double m, double n, double k, double batch) {
  // E4M3 operands A (m x k) and B (k x n), 1 byte each, and the bf16 result C (m x n).
  return (m * k + k * n + 2 * m * n) * batch;
}

std::optional<double> gemm_curves_time_s(const std::map<std::string, GemmCurve>& curves, double peak_flops,
                                         double copy_bandwidth, const std::string& op, double m, double n,
                                         double k, double batch, double bytes) {
  auto it = curves.find(gemm_curve_key(op, m, n, k));
  if (it == curves.end()) it = curves.find(op);
  if (it == curves.end() || peak_flops <= 0) return std::nullopt;
  const GemmCurve& g = it->second;
  return calibrated_gemm_seconds({.floor_s = g.floor_s,
                                  .hidden_floor_s = g.hidden_floor_s,
                                  .efficiency = g.efficiency.at(std::min({m, n, k})),
                                  .memory_efficiency = g.memory_efficiency,
                                  .peak_flops = peak_flops,
                                  .copy_bandwidth = copy_bandwidth,
                                  .flops = 2 * m * n * k * batch,
                                  .bytes = bytes});
}

std::optional<double> CalibrationProfile::gemm_time_s(const std::string& op, double m, double n, double k,
                                                      double batch) const {
  return gemm_curves_time_s(gemm, peak_bf16_flops, d2d_bandwidth, op, m, n, k, batch,
                            gemm_bytes(m, n, k, batch));
}

std::optional<double> CalibrationProfile::gemm_fp8_time_s(const std::string& op, double m, double n, double k,
                                                          double batch) const {
  return gemm_curves_time_s(gemm_fp8, peak_fp8_flops, d2d_bandwidth, op, m, n, k, batch,
                            gemm_fp8_bytes(m, n, k, batch));
}

namespace {

// Strict reader of one TOML table that also knows arrays of numbers.
class Reader {
 public:
  Reader(const toml::table& table, std::string path, std::string prefix)
      : table_(table), path_(std::move(path)), prefix_(std::move(prefix)) {}

  InputLocation where(const std::string& key) const {
    const toml::node* n = table_.get(key);
    return {path_, n != nullptr ? static_cast<int>(n->source().begin.line)
                                : static_cast<int>(table_.source().begin.line)};
  }
  [[noreturn]] void fail(const std::string& key, const std::string& value,
                         const std::string& expected) const {
    throw InputError(where(key), prefix_ + key, value, expected);
  }
  const toml::node& node(const std::string& key) {
    read_.insert(key);
    const toml::node* n = table_.get(key);
    if (n == nullptr) fail(key, "missing", "a value (required key)");
    return *n;
  }
  bool has(const std::string& key) const { return table_.get(key) != nullptr; }
  double number(const std::string& key, double min, double max) {
    const toml::node& n = node(key);
    std::optional<double> v;
    if (auto f = n.as_floating_point()) v = f->get();
    if (auto i = n.as_integer()) v = static_cast<double>(i->get());
    if (!v) fail(key, describe_toml_value(n), "a number");
    if (!(*v >= min && *v <= max))
      fail(key, format_exact(*v), "a number in [" + format_exact(min) + ", " + format_exact(max) + "]");
    return *v;
  }
  int integer(const std::string& key, int min, int max) {
    const toml::node& n = node(key);
    const auto i = n.as_integer();
    if (i == nullptr || i->get() < min || i->get() > max) {
      fail(key, describe_toml_value(n),
           "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return static_cast<int>(i->get());
  }
  std::string string(const std::string& key) {
    const toml::node& n = node(key);
    const auto s = n.as_string();
    if (s == nullptr) fail(key, describe_toml_value(n), "a string");
    return s->get();
  }
  // Non-empty array of numbers in [min, max]; `ascending` demands strictly increasing values.
  std::vector<double> numbers(const std::string& key, double min, double max, bool ascending) {
    const toml::node& n = node(key);
    const auto a = n.as_array();
    if (a == nullptr || a->empty()) fail(key, describe_toml_value(n), "a non-empty array of numbers");
    std::vector<double> out;
    for (const toml::node& e : *a) {
      std::optional<double> v;
      if (auto f = e.as_floating_point()) v = f->get();
      if (auto i = e.as_integer()) v = static_cast<double>(i->get());
      if (!v || !(*v >= min && *v <= max)) {
        fail(key, describe_toml_value(e),
             "numbers in [" + format_exact(min) + ", " + format_exact(max) + "]");
      }
      if (ascending && !out.empty() && *v <= out.back())
        fail(key, format_exact(*v), "strictly increasing values");
      out.push_back(*v);
    }
    return out;
  }
  const toml::table& table(const std::string& key) {
    const toml::node& n = node(key);
    const auto t = n.as_table();
    if (t == nullptr) fail(key, describe_toml_value(n), "a table");
    return *t;
  }
  // Keys of a table whose values are all tables (e.g. [gemm.<op>]).
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : table_) out.emplace_back(k.str());
    return out;
  }
  void finish() const {
    for (const auto& [k, v] : table_) {
      const std::string key(k.str());
      if (read_.count(key) == 0) {
        throw InputError({path_, static_cast<int>(v.source().begin.line)}, prefix_ + key,
                         describe_toml_value(v), "no such key");
      }
    }
  }
  const std::string& path() const { return path_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const toml::table& table_;
  std::string path_;
  std::string prefix_;
  std::set<std::string> read_;
};

LogCurve read_curve(Reader& r, const std::string& x_key, const std::string& y_key, double y_max) {
  LogCurve c;
  c.x = r.numbers(x_key, 1e-300, 1e300, true);
  c.y = r.numbers(y_key, 1e-300, y_max, false);
  if (c.x.size() != c.y.size()) {
    r.fail(y_key, std::to_string(c.y.size()) + " values",
           std::to_string(c.x.size()) + " values, one per " + x_key);
  }
  return c;
}

std::string array(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : ", ") + format_exact(v[i]);
  return out + "]";
}

// The keys of one [gemm.*] or [gemm_fp8.*] table that describe its curve (the caller finishes the table).
GemmCurve read_gemm_curve(Reader& r, int schema_version) {
  GemmCurve g;
  g.floor_s = r.number("floor_s", 0, 1);
  g.efficiency = read_curve(r, "min_dim", "efficiency", 1.0);
  if (schema_version >= 2) g.memory_efficiency = r.number("memory_efficiency", 0, 2);
  if (schema_version >= 3) g.hidden_floor_s = r.number("hidden_floor_s", 0, g.floor_s);
  g.heldout_shapes = r.integer("heldout_shapes", 0, 1000000);
  g.heldout_median_error = r.number("heldout_median_error", 0, 1e6);
  g.heldout_max_error = r.number("heldout_max_error", 0, 1e6);
  g.heldout_within_5pct = r.number("heldout_within_5pct", 0, 1);
  return g;
}

// The NCCL ops the NVLink fit knows (nvlink_fit.cpp), as the profile names them.
bool is_nvlink_op(const std::string& op) {
  return op == "all_reduce" || op == "reduce_scatter" || op == "all_gather" || op == "all_to_all" ||
         op == "send_recv";
}

EfficiencyBands read_bands(Reader c) {
  EfficiencyBands b;
  b.min_bytes = c.numbers("min_bytes", 0, 1e15, true);
  b.factor = c.numbers("factor", 1e-6, 1, false);
  if (b.factor.size() != b.min_bytes.size()) {
    c.fail("factor", std::to_string(b.factor.size()) + " values",
           std::to_string(b.min_bytes.size()) + " values, one per min_bytes");
  }
  if (b.min_bytes.front() != 0) c.fail("min_bytes", format_exact(b.min_bytes.front()), "a first band at 0");
  c.finish();
  return b;
}

EfaFabricFit read_efa(Reader r) {
  EfaFabricFit f;
  f.instance = r.string("instance");
  f.buffer = r.string("buffer");
  if (f.buffer != "host" && f.buffer != "cuda")
    r.fail("buffer", "\"" + f.buffer + "\"", "\"host\" or \"cuda\"");
  f.step_latency_s = r.number("step_latency_s", 0, 1);
  f.points = r.integer("points", 0, 1000000);
  f.median_error = r.number("median_error", 0, 1e6);
  f.max_error = r.number("max_error", 0, 1e6);
  f.efficiency = read_bands(Reader(r.table("efficiency"), r.path(), r.prefix() + "efficiency."));
  r.finish();
  return f;
}

NvlinkCollectiveFit read_nvlink(Reader r, int schema_version) {
  NvlinkCollectiveFit f;
  for (const double n : r.numbers("ranks", 2, 1024, true)) {
    if (n != static_cast<int>(n)) r.fail("ranks", format_exact(n), "whole GPU counts");
    f.ranks.push_back(static_cast<int>(n));
  }
  f.call_latency_s = r.number("call_latency_s", 0, 1);
  f.step_latency_s = r.number("step_latency_s", 0, 1);
  f.points = r.integer("points", 1, 1000000);
  f.median_error = r.number("median_error", 0, 1e6);
  f.max_error = r.number("max_error", 0, 1e6);
  f.loo_median_error = r.number("loo_median_error", 0, 1e6);
  f.loo_max_error = r.number("loo_max_error", 0, 1e6);
  Reader ops(r.table("efficiency"), r.path(), r.prefix() + "efficiency.");
  for (const std::string& op : ops.keys()) {
    if (!is_nvlink_op(op))
      ops.fail(op, "a table", "one of all_reduce, reduce_scatter, all_gather, all_to_all, send_recv");
    Reader bands(ops.table(op), r.path(), ops.prefix() + op + ".");
    if (schema_version <= 3) {
      f.curves[op] = read_bands(bands);
      continue;
    }
    // Schema 4: one table n<GPU count> per measured count of `ranks`.
    std::string counts;
    for (const int n : f.ranks) counts += (counts.empty() ? "n" : ", n") + std::to_string(n);
    const std::vector<std::string> keys = bands.keys();
    if (keys.empty()) bands.fail("n<ranks>", "missing", "at least one table of " + counts);
    for (const std::string& key : keys) {
      int n = 0;
      for (const int m : f.ranks) {
        // Not "n" + std::to_string(m): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
        if (key == concat({"n", std::to_string(m)})) n = m;
      }
      if (n == 0) {
        bands.fail(key, describe_toml_value(bands.node(key)),
                   "a table n<GPU count> of ranks (" + counts +
                       "); per-step-message bands [nvlink.efficiency.<op>] are schema <= 3");
      }
      f.buffer_curves[op][n] = read_bands(Reader(bands.table(key), r.path(), bands.prefix() + key + "."));
    }
    bands.finish();
  }
  ops.finish();
  r.finish();
  return f;
}

void write_gemm_curve(std::ostream& o, const GemmCurve& g, int schema_version) {
  o << "floor_s = " << format_exact(g.floor_s) << '\n'
    << "min_dim = " << array(g.efficiency.x) << '\n'
    << "efficiency = " << array(g.efficiency.y) << '\n';
  if (schema_version >= 2) o << "memory_efficiency = " << format_exact(g.memory_efficiency) << '\n';
  if (schema_version >= 3) o << "hidden_floor_s = " << format_exact(g.hidden_floor_s) << '\n';
  o << "heldout_shapes = " << g.heldout_shapes << '\n'
    << "heldout_median_error = " << format_exact(g.heldout_median_error) << '\n'
    << "heldout_max_error = " << format_exact(g.heldout_max_error) << '\n'
    << "heldout_within_5pct = " << format_exact(g.heldout_within_5pct) << '\n';
}

}  // namespace

std::string attention_kernel_key(const AttentionKernelKey& key) {
  return std::string(key.backward ? "bwd" : "fwd") + ".q" + std::to_string(key.qk_dim) + "v" +
         std::to_string(key.v_dim) + (key.grouped_kv ? ".gqa" : "");
}

std::optional<AttentionKernelKey> parse_attention_kernel_key(const std::string& text) {
  // "fwd.q128v128" or "fwd.q128v128.gqa": direction, ".q", digits, "v", digits, optional ".gqa".
  AttentionKernelKey key;
  std::string body = text;
  const std::string suffix = ".gqa";
  if (body.size() > suffix.size() && body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0) {
    key.grouped_kv = true;
    body.resize(body.size() - suffix.size());
  }
  if (body.size() < 8 || body.compare(3, 2, ".q") != 0) return std::nullopt;
  const std::string dir = body.substr(0, 3);
  if (dir != "fwd" && dir != "bwd") return std::nullopt;
  const std::size_t v_at = body.find('v', 5);
  if (v_at == std::string::npos || v_at == 5 || v_at + 1 >= body.size()) return std::nullopt;
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 4 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  const std::string q = body.substr(5, v_at - 5);
  const std::string v = body.substr(v_at + 1);
  if (!digits(q) || !digits(v)) return std::nullopt;
  key.backward = dir == "bwd";
  key.qk_dim = std::stoi(q);
  key.v_dim = std::stoi(v);
  if (key.qk_dim < 1 || key.qk_dim > 1024 || key.v_dim < 1 || key.v_dim > 1024) return std::nullopt;
  return key;
}

CalibrationProfile parse_calibration_profile(const std::string& text, const std::string& path) {
  const toml::table root_table = parse_toml(text, path);
  Reader root(root_table, path, "");
  CalibrationProfile p;
  // Schema 1 (no memory term) and 2 (no floor overlap) are still read; their curves get
  // memory_efficiency 0 (schema 1) and hidden_floor_s 0 (both).
  p.schema_version = root.integer("schema_version", 1, kCalibrationProfileSchemaVersion);
  p.gpu = root.string("gpu");
  p.measured_gpu = root.string("measured_gpu");
  p.source_db = root.string("source_db");
  p.git_revision = root.string("git_revision");
  p.measured_at = root.string("measured_at");
  p.peak_bf16_flops = root.number("peak_bf16_flops", 1e12, 1e17);
  {
    Reader launch(root.table("launch"), path, "launch.");
    p.launch_sync_s = launch.number("sync_latency_s", 0, 1);
    p.launch_back_to_back_s = launch.number("back_to_back_s", 0, 1);
    p.launch_graph_s = launch.number("graph_per_kernel_s", 0, 1);
    launch.finish();
  }
  {
    Reader memory(root.table("memory"), path, "memory.");
    p.d2d_bandwidth = memory.number("d2d_copy_bandwidth", 1e9, 1e15);
    memory.finish();
  }
  if (root.has("gemm")) {
    Reader ops(root.table("gemm"), path, "gemm.");
    for (const std::string& op : ops.keys()) {
      Reader r(ops.table(op), path, "gemm." + op + ".");
      p.gemm[op] = read_gemm_curve(r, p.schema_version);
      r.finish();
    }
    ops.finish();
  }
  if (root.has("gemm_fp8")) {
    // Each table names the FP8 peak its efficiencies are fractions of; one peak per profile.
    Reader ops(root.table("gemm_fp8"), path, "gemm_fp8.");
    for (const std::string& op : ops.keys()) {
      Reader r(ops.table(op), path, "gemm_fp8." + op + ".");
      const double peak = r.number("peak_flops", 1e12, 1e17);
      if (p.peak_fp8_flops > 0 && peak != p.peak_fp8_flops) {
        r.fail("peak_flops", format_exact(peak),
               format_exact(p.peak_fp8_flops) + ", the peak_flops of the other [gemm_fp8] tables");
      }
      p.peak_fp8_flops = peak;
      p.gemm_fp8[op] = read_gemm_curve(r, p.schema_version);
      r.finish();
    }
    ops.finish();
  }
  if (root.has("kernels")) {
    Reader ops(root.table("kernels"), path, "kernels.");
    for (const std::string& op : ops.keys()) {
      Reader r(ops.table(op), path, "kernels." + op + ".");
      p.kernels[op] = read_curve(r, "bytes", "bandwidth", 1e16);
      r.finish();
    }
    ops.finish();
  }
  if (root.has("attention_kernel")) {
    Reader keys(root.table("attention_kernel"), path, "attention_kernel.");
    for (const std::string& key : keys.keys()) {
      Reader r(keys.table(key), path, "attention_kernel." + key + ".");
      if (!parse_attention_kernel_key(key)) {
        keys.fail(key, "a table",
                  "a key \"fwd.q<QK>v<V>\" or \"bwd.q<QK>v<V>\", optionally \".gqa\" (head dims 1..1024)");
      }
      p.attention_kernels[key] = read_curve(r, "flops", "efficiency", 1.0);
      r.finish();
    }
    keys.finish();
  }
  if (root.has("transports")) {
    Reader names(root.table("transports"), path, "transports.");
    for (const std::string& name : names.keys()) {
      Reader r(names.table(name), path, "transports." + name + ".");
      const auto min_bytes = r.numbers("min_bytes", 0, 1e15, true);
      const auto latency = r.numbers("latency_s", 0, 10, false);
      const auto bandwidth = r.numbers("bandwidth", 1, 1e16, false);
      if (latency.size() != min_bytes.size() || bandwidth.size() != min_bytes.size()) {
        r.fail("latency_s",
               std::to_string(latency.size()) + " and " + std::to_string(bandwidth.size()) + " values",
               std::to_string(min_bytes.size()) + " latency_s and bandwidth values, one per band");
      }
      if (min_bytes.front() != 0)
        r.fail("min_bytes", format_exact(min_bytes.front()), "a first band starting at 0");
      TransportCurve t;
      for (std::size_t i = 0; i < min_bytes.size(); ++i)
        t.bands.push_back({min_bytes[i], latency[i], bandwidth[i]});
      r.finish();
      p.transports[name] = t;
    }
    names.finish();
  }
  if (root.has("nvlink"))
    p.nvlink = read_nvlink(Reader(root.table("nvlink"), path, "nvlink."), p.schema_version);
  if (root.has("efa")) p.efa = read_efa(Reader(root.table("efa"), path, "efa."));
  root.finish();
  return p;
}

CalibrationProfile load_calibration_profile(const std::string& path) {
  return parse_calibration_profile(read_text_file(path, input_kind::toml), path);
}

std::string format_calibration_profile(const CalibrationProfile& p) {
  std::ostringstream o;
  o << "# moetwin calibration profile (written by `moetwin-calibrate fit`; see calibrate/README.md).\n"
    << "# GEMM: t = max(floor_s, floor_s - hidden_floor_s + work), work = max(flops / (peak_bf16_flops *\n"
    << "# efficiency(min_dim)), bytes / (d2d_copy_bandwidth * memory_efficiency)), efficiency linear in\n"
    << "# log2(min_dim), bytes = bf16 A + B + C (memory_efficiency 0: no memory term; hidden_floor_s: the\n"
    << "# part of the floor that overlaps a longer call's work, 0: floor and work add up).\n"
    << "# Kernels: bandwidth (bytes read + written per s) vs bytes moved. Transports:\n"
    << "# t = latency_s + bytes / bandwidth of the band with the largest min_bytes <= bytes.\n"
    << "schema_version = " << p.schema_version << '\n'
    << "gpu = " << quoted_string(p.gpu) << '\n'
    << "measured_gpu = " << quoted_string(p.measured_gpu) << '\n'
    << "source_db = " << quoted_string(p.source_db) << '\n'
    << "git_revision = " << quoted_string(p.git_revision) << '\n'
    << "measured_at = " << quoted_string(p.measured_at) << '\n'
    << "peak_bf16_flops = " << format_exact(p.peak_bf16_flops) << "  # catalog peak, FLOP/s\n\n"
    << "[launch]  # seconds\n"
    << "sync_latency_s = " << format_exact(p.launch_sync_s) << '\n'
    << "back_to_back_s = " << format_exact(p.launch_back_to_back_s) << '\n'
    << "graph_per_kernel_s = " << format_exact(p.launch_graph_s) << "\n\n"
    << "[memory]\n"
    << "d2d_copy_bandwidth = " << format_exact(p.d2d_bandwidth) << "  # bytes read + written per s\n";
  for (const auto& [op, g] : p.gemm) {
    o << "\n[gemm." << quoted_string(op) << "]\n";
    write_gemm_curve(o, g, p.schema_version);
  }
  if (!p.gemm_fp8.empty() && !(p.peak_fp8_flops > 0))
    throw std::logic_error("format_calibration_profile: FP8 GEMM curves without peak_fp8_flops");
  for (const auto& [op, g] : p.gemm_fp8) {
    if (op == p.gemm_fp8.begin()->first) {
      o << "\n# FP8 GEMMs (cuBLASLt E4M3 A and B, per-tensor scales, bf16 result, fp32 accumulate): the "
           "same\n"
        << "# formula with peak_flops, the catalog dense FP8 peak, and bytes = E4M3 A + B + bf16 C.\n";
    } else {
      o << '\n';
    }
    o << "[gemm_fp8." << quoted_string(op) << "]\n"
      << "peak_flops = " << format_exact(p.peak_fp8_flops) << "  # FLOP/s\n";
    write_gemm_curve(o, g, p.schema_version);
  }
  for (const auto& [op, c] : p.kernels) {
    o << "\n[kernels." << quoted_string(op) << "]\n"
      << "bytes = " << array(c.x) << '\n'
      << "bandwidth = " << array(c.y) << '\n';
  }
  for (const auto& [key, c] : p.attention_kernels) {
    o << "\n[attention_kernel." << quoted_string(key)
      << "]  # efficiency of peak_bf16_flops vs FLOPs per call\n"
      << "flops = " << array(c.x) << '\n'
      << "efficiency = " << array(c.y) << '\n';
  }
  for (const auto& [name, t] : p.transports) {
    std::vector<double> min_bytes, latency, bandwidth;
    for (const TransportBand& b : t.bands) {
      min_bytes.push_back(b.min_bytes);
      latency.push_back(b.latency_s);
      bandwidth.push_back(b.bandwidth);
    }
    o << "\n[transports." << quoted_string(name) << "]\n"
      << "min_bytes = " << array(min_bytes) << '\n'
      << "latency_s = " << array(latency) << '\n'
      << "bandwidth = " << array(bandwidth) << '\n';
  }
  if (p.nvlink) {
    const NvlinkCollectiveFit& f = *p.nvlink;
    std::vector<double> ranks(f.ranks.begin(), f.ranks.end());
    o << "\n[nvlink]  # NCCL inside one node: t = call_latency_s + steps x step_latency_s\n"
      << (p.schema_version >= 4
              ? "#          + bus bytes / (catalog NVLink bandwidth x factor(op, GPUs, per-rank buffer)),\n"
                "#          factor linear in log2(GPUs) between measured counts, the nearest outside\n"
              : "#          + bus bytes / (catalog NVLink bandwidth x factor(op, per-step message))\n")
      << "ranks = " << array(ranks) << '\n'
      << "call_latency_s = " << format_exact(f.call_latency_s) << '\n'
      << "step_latency_s = " << format_exact(f.step_latency_s) << '\n'
      << "points = " << f.points << '\n'
      << "median_error = " << format_exact(f.median_error) << '\n'
      << "max_error = " << format_exact(f.max_error) << '\n'
      << "loo_median_error = " << format_exact(f.loo_median_error) << '\n'
      << "loo_max_error = " << format_exact(f.loo_max_error) << '\n';
    // A schema's reader knows one indexing only (read_nvlink): a mismatch would not read back.
    if ((p.schema_version >= 4 && !f.curves.empty()) || (p.schema_version <= 3 && !f.buffer_curves.empty())) {
      throw std::logic_error("format_calibration_profile: schema " + std::to_string(p.schema_version) +
                             " profile with " + (f.curves.empty() ? "buffer" : "per-step-message") +
                             " NVLink bands");
    }
    for (const auto& [op, b] : f.curves) {
      o << "\n[nvlink.efficiency." << op << "]\n"
        << "min_bytes = " << array(b.min_bytes) << '\n'
        << "factor = " << array(b.factor) << '\n';
    }
    for (const auto& [op, by_ranks] : f.buffer_curves) {
      for (const auto& [n, b] : by_ranks) {
        o << "\n[nvlink.efficiency." << op << ".n" << n << "]  # by per-rank buffer on " << n << " GPUs\n"
          << "min_bytes = " << array(b.min_bytes) << '\n'
          << "factor = " << array(b.factor) << '\n';
      }
    }
  }
  if (p.efa) {
    const EfaFabricFit& f = *p.efa;
    o << "\n[efa]  # collectives across nodes: step_latency_s per step + bytes / (NIC line rate x factor)\n"
      << "instance = " << quoted_string(f.instance) << '\n'
      << "buffer = " << quoted_string(f.buffer) << '\n'
      << "step_latency_s = " << format_exact(f.step_latency_s) << '\n'
      << "points = " << f.points << '\n'
      << "median_error = " << format_exact(f.median_error) << '\n'
      << "max_error = " << format_exact(f.max_error) << '\n'
      << "\n[efa.efficiency]\n"
      << "min_bytes = " << array(f.efficiency.min_bytes) << '\n'
      << "factor = " << array(f.efficiency.factor) << '\n';
  }
  return o.str();
}

std::optional<CalibrationProfile> find_calibration_profile(const std::string& dir, const std::string& gpu) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    CalibrationProfile p = load_calibration_profile(f);
    if (p.gpu == gpu) return p;
  }
  return std::nullopt;
}

}  // namespace moetwin
