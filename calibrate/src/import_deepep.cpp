// Importer of DeepEP / UCCL-EP test_internode.py output (format described in importers.hpp).
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const std::size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

std::optional<double> to_number(const std::string& s) {
  const std::string t = trim(s);
  double value = 0;
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(t.data(), end, value);
  if (t.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The number right after `key` in `text` ("SMs 24" -> 24), up to the next ',' ':' or space.
std::optional<double> number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':')) ++i;
  std::size_t j = i;
  while (j < text.size() && text[j] != ',' && text[j] != ' ' && text[j] != ':') ++j;
  return to_number(text.substr(i, j - i));
}

// The number right before `suffix` ("56.47 GB/s (RDMA)" -> 56.47).
std::optional<double> number_before(const std::string& text, const std::string& suffix) {
  const std::size_t at = text.find(suffix);
  if (at == std::string::npos || at == 0) return std::nullopt;
  std::size_t j = at;
  while (j > 0 && text[j - 1] == ' ') --j;
  std::size_t i = j;
  while (i > 0 && text[i - 1] != ' ' && text[i - 1] != ',' && text[i - 1] != ':') --i;
  return to_number(text.substr(i, j - i));
}

struct Tuning {
  int line = 0;
  double sms = 0, nvl_chunk = 0, rdma_chunk = 0, rdma_gbps = 0, nvl_gbps = 0;
  std::optional<double> transmit_us, notify_us;
};

Tuning parse_tuning(const std::string& body, const std::string& path, int line) {
  Tuning t;
  t.line = line;
  const auto require = [&](std::optional<double> v, const char* what) {
    if (!v)
      throw InputError({path, line}, "[tuning]", trim(body),
                       std::string("a value for ") + what + " (truncated input?)");
    return *v;
  };
  t.sms = require(number_after(body, "SMs "), "'SMs N'");
  t.nvl_chunk = require(number_after(body, "NVL chunk "), "'NVL chunk N'");
  t.rdma_chunk = require(number_after(body, "RDMA chunk "), "'RDMA chunk N'");
  t.rdma_gbps = require(number_before(body, "GB/s (RDMA)"), "'X GB/s (RDMA)'");
  t.nvl_gbps = require(number_before(body, "GB/s (NVL)"), "'X GB/s (NVL)'");
  // Newer DeepEP prints "transmit: X us, notify: Y us"; UCCL-EP prints "avg_t: X us".
  t.transmit_us = number_after(body, "transmit:");
  if (!t.transmit_us) t.transmit_us = number_after(body, "avg_t:");
  t.notify_us = number_after(body, "notify:");
  return t;
}

std::string format_int(double v) {
  return std::to_string(static_cast<long long>(std::llround(v)));
}

}  // namespace

std::vector<Experiment> import_deepep(const std::string& text, const std::string& path) {
  const std::string stem = name_safe_stem(path);
  std::map<std::string, double> config;
  std::vector<Experiment> out;
  std::set<std::string> names;  // a name seen twice (several ranks' logs in one file) gets ".l<line>"
  std::vector<Tuning> pending;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;

  const auto make = [&](const Tuning& t, const std::string& phase, const std::string& dtype, bool best) {
    Experiment e;
    e.kind = "deepep";
    e.unit = "s";
    e.name = "deepep." + stem + "." + phase + "." + dtype + ".sms" + format_int(t.sms) + ".nvl" +
             format_int(t.nvl_chunk) + ".rdma" + format_int(t.rdma_chunk) + (best ? ".best" : "");
    e.params = config;
    e.params["num_sms"] = t.sms;
    e.params["nvl_chunk"] = t.nvl_chunk;
    e.params["rdma_chunk"] = t.rdma_chunk;
    e.params["rdma_bw_Bps"] = t.rdma_gbps * 1e9;  // DeepEP prints GB/s as bytes / 1e9 / t
    e.params["nvl_bw_Bps"] = t.nvl_gbps * 1e9;
    e.params["line"] = t.line;
    if (t.notify_us) e.params["notify_s"] = *t.notify_us * 1e-6;
    if (t.transmit_us) e.samples = {*t.transmit_us * 1e-6};
    e.labels = {{"phase", phase}, {"dtype", dtype}, {"best", best ? "1" : "0"}, {"source", path}};
    if (!names.insert(e.name).second) e.name += ".l" + std::to_string(t.line);
    return e;
  };

  while (std::getline(in, line)) {
    ++line_no;
    const std::string l = trim(line);
    if (l.rfind("[config]", 0) == 0) {
      std::istringstream items(l.substr(8));
      std::string item;
      while (std::getline(items, item, ',')) {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos) throw InputError({path, line_no}, "[config]", trim(item), "key=value");
        const std::string key = trim(item.substr(0, eq));
        const auto value = to_number(item.substr(eq + 1));
        if (!value) throw InputError({path, line_no}, key, trim(item.substr(eq + 1)), "a number");
        config[key] = *value;
      }
    } else if (l.rfind("[layout]", 0) == 0) {
      const auto ms = number_after(l, "Kernel performance:");
      if (!ms) throw InputError({path, line_no}, "[layout]", l, "'Kernel performance: X ms'");
      Experiment e;
      e.kind = "deepep";
      e.unit = "s";
      e.name = "deepep." + stem + ".layout";
      e.params = config;
      e.params["line"] = line_no;
      e.labels = {{"phase", "layout"}, {"source", path}};
      e.samples = {*ms * 1e-3};
      out.push_back(std::move(e));
    } else if (l.rfind("[tuning]", 0) == 0) {
      const std::string body = l.substr(8);
      const std::size_t best_at = body.find("Best ");
      if (best_at == std::string::npos) {
        pending.push_back(parse_tuning(body, path, line_no));
        continue;
      }
      std::string phase;
      std::string dtype = "bf16";
      if (body.find("Best dispatch") != std::string::npos) {
        phase = "dispatch";
        const std::size_t open = body.find('(');
        const std::size_t close = body.find(')');
        if (open == std::string::npos || close == std::string::npos || close < open) {
          throw InputError({path, line_no}, "[tuning]", l, "'Best dispatch (FP8|BF16): ...'");
        }
        dtype = body.substr(open + 1, close - open - 1);
        for (char& ch : dtype) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      } else if (body.find("Best combine") != std::string::npos) {
        phase = "combine";
      } else {
        throw InputError({path, line_no}, "[tuning]", l, "'Best dispatch (...)' or 'Best combine'");
      }
      const std::size_t colon = body.find(':', best_at);
      const Tuning best =
          parse_tuning(colon == std::string::npos ? body : body.substr(colon + 1), path, line_no);
      for (const Tuning& t : pending) out.push_back(make(t, phase, dtype, false));
      pending.clear();
      out.push_back(make(best, phase, dtype, true));
    }
  }
  if (!pending.empty()) {
    throw InputError(
        {path, pending.front().line},
        "tuning lines with no following '[tuning] Best dispatch/combine' line (truncated input?)");
  }
  if (out.empty())
    throw InputError({path, line_no}, "no [layout] or [tuning] lines: not test_internode.py output");
  return out;
}

}  // namespace moetwin
