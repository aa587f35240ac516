// Importer of DeepEP / UCCL-EP benchmark output (formats described in importers.hpp).
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "launcher_prefix.hpp"
#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

namespace {

std::string trim(std::string_view s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  const std::size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

std::optional<double> to_number(std::string_view s) {
  const std::string t = trim(s);
  double value = 0;
  const char* end = t.data() + t.size();
  const auto [ptr, ec] = std::from_chars(t.data(), end, value);
  if (t.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Position of `key` in `text` where it starts a word ("t:" but not the end of "transmit:"), or npos.
std::size_t find_word(std::string_view text, std::string_view key) {
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (at == 0 || !word_char(text[at - 1])) return at;
  }
  return std::string_view::npos;
}

// The token after `key` (spaces, ':' and '=' skipped), up to the next ',' ':' '|' or space; nullopt when
// `key` is absent. `end` receives the position after the token.
std::optional<std::string> token_after(std::string_view text, std::string_view key,
                                       std::size_t* end = nullptr) {
  const std::size_t at = find_word(text, key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == ':' || text[i] == '=')) ++i;
  std::size_t j = i;
  while (j < text.size() && text[j] != ',' && text[j] != ' ' && text[j] != ':' && text[j] != '|') ++j;
  if (end) *end = j;
  return std::string(text.substr(i, j - i));
}

// The number right before `suffix` ("56.47 GB/s (RDMA)" -> 56.47), or nullopt.
std::optional<double> number_before(std::string_view text, std::string_view suffix) {
  const std::size_t at = text.find(suffix);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::size_t j = at;
  while (j > 0 && text[j - 1] == ' ') --j;
  std::size_t i = j;
  while (i > 0 && text[i - 1] != ' ' && text[i - 1] != ',' && text[i - 1] != ':' && text[i - 1] != '=') --i;
  return to_number(text.substr(i, j - i));
}

// Reads the values of one line, each required or optional; a missing required value or a number not
// followed by its unit is an InputError naming the line (a line cut inside a number loses its unit).
class LineReader {
 public:
  LineReader(std::string_view text, const std::string& path, int line, const char* tag)
      : text_(text), path_(path), line_(line), tag_(tag) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError({path_, line_}, tag_, trim(text_), concat({what, " (truncated or garbled line?)"}));
  }

  // "SMs 24" -> 24; nullopt when `key` is absent and not required.
  std::optional<double> after(std::string_view key, bool required) const {
    const auto token = token_after(text_, key);
    if (!token) {
      if (required) fail(concat({"a value for '", key, " N'"}));
      return std::nullopt;
    }
    const auto v = to_number(*token);
    if (!v) fail(concat({"a number after '", key, "'"}));
    return v;
  }

  // "transmit: 1289.00 us" -> 1289; the value must be followed by "us".
  std::optional<double> us_after(std::string_view key) const {
    std::size_t end = 0;
    const auto token = token_after(text_, key, &end);
    if (!token) return std::nullopt;
    const auto v = to_number(*token);
    if (!v || trim(text_.substr(end)).substr(0, 2) != "us") fail(concat({"'", key, " X us'"}));
    return v;
  }

  std::optional<double> before(std::string_view suffix, bool required) const {
    const auto v = number_before(text_, suffix);
    if (!v && (required || text_.find(suffix) != std::string_view::npos))
      fail(concat({"a number before '", suffix, "'"}));
    return v;
  }

  // "867 + 2008 us" -> (867, 2008); nullopt when there is no " + ".
  std::optional<std::pair<double, double>> sum_us() const {
    const std::size_t plus = text_.find(" + ");
    if (plus == std::string_view::npos) return std::nullopt;
    std::size_t k = plus;
    while (k > 0 && text_[k - 1] != ' ' && text_[k - 1] != ',' && text_[k - 1] != ':') --k;
    const auto a = to_number(text_.substr(k, plus - k));
    std::size_t i = plus + 3;
    std::size_t j = i;
    while (j < text_.size() && text_[j] != ' ' && text_[j] != ',') ++j;
    const auto b = to_number(text_.substr(i, j - i));
    if (!a || !b || trim(text_.substr(j)).substr(0, 2) != "us") fail("'N + T us'");
    return std::make_pair(*a, *b);
  }

  // Intranode tuning "..., 544.47 us" at the end of the line.
  std::optional<double> trailing_us() const {
    const std::string t = trim(text_);
    if (t.size() < 3 || t.compare(t.size() - 3, 3, " us") != 0) return std::nullopt;
    const auto v = number_before(t, " us");
    if (!v) fail("a number before the final 'us'");
    return v;
  }

 private:
  std::string_view text_;
  const std::string& path_;
  int line_;
  const char* tag_;
};

struct Tuning {
  int line = 0;
  double sms = 0, nvl_gbps = 0;
  std::optional<double> nvl_chunk;  // nullopt: "NVL chunk default" (the buffer's default config)
  bool internode = false;
  std::optional<double> rdma_chunk, rdma_gbps;
  std::optional<double> time_us, notify_us;
};

Tuning parse_tuning(std::string_view body, const std::string& path, int line) {
  const LineReader r(body, path, line, "[tuning]");
  Tuning t;
  t.line = line;
  t.sms = *r.after("SMs", true);
  // test_intranode.py also times the buffer's default config: "NVL chunk default".
  if (token_after(body, "NVL chunk").value_or("") != "default") t.nvl_chunk = *r.after("NVL chunk", true);
  t.internode = token_after(body, "RDMA chunk").has_value();
  if (t.internode && token_after(body, "RDMA chunk").value_or("") != "default")
    t.rdma_chunk = r.after("RDMA chunk", true);
  t.rdma_gbps = r.before("GB/s (RDMA)", t.internode);
  t.nvl_gbps = *r.before("GB/s (NVL)", true);
  // DeepEP since e02e4d2: "N + T us" (notify + transmit); UCCL-EP: "transmit: T us, notify: N us" or
  // "avg_t: T us"; test_intranode.py: "t: T us" (Best lines) or a final "T us".
  if (const auto sum = r.sum_us()) {
    t.notify_us = sum->first;
    t.time_us = sum->second;
  } else {
    t.time_us = r.us_after("transmit:");
    if (!t.time_us) t.time_us = r.us_after("avg_t:");
    if (!t.time_us) t.time_us = r.us_after("t:");
    if (!t.time_us) t.time_us = r.trailing_us();
    t.notify_us = r.us_after("notify:");
  }
  return t;
}

std::string format_int(double v) {
  return std::to_string(static_cast<long long>(std::llround(v)));
}

// The largest bandwidth a DeepEP line may report (B/s): twice NVLink 5's 1.8 TB/s per GPU (NVIDIA B200
// datasheet), the fastest link between GPUs; DeepEP divides the bytes one rank moves by its kernel time.
constexpr double kMaxBandwidthBps = 3600e9;

// A time or bandwidth is never negative, and a bandwidth no GPU link reaches is a garbled line
// (29,424,000 GB/s beside 544 us, issue 55).
void check_measurements(const Experiment& e, const std::string& path, int line) {
  for (const char* key : {"notify_s", "nvl_bw_Bps", "rdma_bw_Bps", "bw_Bps"}) {
    const auto it = e.params.find(key);
    if (it != e.params.end() && !(it->second >= 0))
      throw InputError({path, line}, key, format_exact(it->second), "a non-negative measurement");
    if (it != e.params.end() && std::string_view(key) != "notify_s" && it->second > kMaxBandwidthBps)
      throw InputError({path, line}, key, concat({format_exact(it->second / 1e9), " GB/s"}),
                       "at most 3600 GB/s (twice NVLink 5's 1,800 GB/s per GPU, the fastest GPU link; "
                       "RDMA is slower still)");
  }
}

// A result line met again word for word: one run's output twice in one file (two logs concatenated),
// each copy imported as its own experiment. Two nodes' or ranks' lines differ in their measured values.
void warn_repeated_result(std::map<std::string, int>& seen, const std::string& l, int line,
                          const std::string& path, std::vector<std::string>& warnings) {
  const auto [it, fresh] = seen.emplace(l, line);
  if (fresh) return;
  warnings.push_back(
      concat({path, ":", std::to_string(line), ": \"", l, "\" repeats line ", std::to_string(it->second),
              " word for word: the log holds one run twice (concatenated?); each copy is "
              "imported as its own experiment, so the fit counts it twice: split the log"}));
}

}  // namespace

ImportResult import_deepep(const std::string& text, const std::string& path) {
  const std::string stem = name_safe_stem(path);
  std::map<std::string, double> config;
  ImportResult result;
  std::vector<Experiment>& out = result.experiments;
  std::set<std::string> names;  // a name seen twice (several ranks' logs in one file) gets ".l<line>"
  std::vector<Tuning> pending;
  std::map<std::string, int> best_lines;  // each "[tuning] Best ..." line's text -> its line
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  const bool ends_with_newline = !text.empty() && text.back() == '\n';

  // Every value is a measurement: a kernel never takes zero or negative time, and a bandwidth is never
  // negative. A row that says otherwise is refused at its line instead of entering a fit.
  const auto add = [&](Experiment e, int line) {
    for (const double seconds : e.samples) {
      if (!(seconds > 0))
        throw InputError({path, line}, concat({e.labels["phase"], " time"}),
                         concat({format_exact(seconds * 1e6), " us"}),
                         "a positive time (no kernel takes zero or negative time)");
    }
    check_measurements(e, path, line);
    if (!names.insert(e.name).second) e.name += concat({".l", std::to_string(line)});
    out.push_back(std::move(e));
  };
  const auto make = [&](const Tuning& t, const std::string& phase, const std::string& dtype, bool best) {
    Experiment e;
    e.kind = "deepep";
    e.unit = std::string("s");  // not = "s": GCC 12 -O3 -Wrestrict false positive
    const std::string nvl = t.nvl_chunk ? format_int(*t.nvl_chunk) : "default";
    const std::string rdma = t.rdma_chunk ? format_int(*t.rdma_chunk) : "default";
    e.name = concat({"deepep.", stem, ".", phase, ".", dtype, ".sms", format_int(t.sms), ".nvl", nvl,
                     t.internode ? concat({".rdma", rdma}) : "", best ? ".best" : ""});
    e.params = config;
    e.params["num_sms"] = t.sms;
    if (t.nvl_chunk) e.params["nvl_chunk"] = *t.nvl_chunk;
    if (t.rdma_chunk) e.params["rdma_chunk"] = *t.rdma_chunk;
    if (t.rdma_gbps) e.params["rdma_bw_Bps"] = *t.rdma_gbps * 1e9;  // DeepEP prints GB/s as bytes / 1e9 / t
    e.params["nvl_bw_Bps"] = t.nvl_gbps * 1e9;
    e.params["line"] = t.line;
    if (t.notify_us) e.params["notify_s"] = *t.notify_us * 1e-6;
    if (t.time_us) e.samples = {*t.time_us * 1e-6};
    e.labels = {{"phase", phase},
                {"dtype", dtype},
                {"best", best ? "1" : "0"},
                {"scope", t.internode ? "internode" : "intranode"},
                {"source", path}};
    add(std::move(e), t.line);
  };
  const auto low_latency = [&](const std::string& rank, const std::string& what, double seconds, int line,
                               std::map<std::string, double> params) {
    Experiment e;
    e.kind = "deepep";
    e.unit = std::string("s");
    e.name = concat({"deepep.", stem, ".low_latency.r", rank, ".", what});
    e.params = config;
    for (const auto& [k, v] : params) e.params[k] = v;
    e.params["line"] = line;
    e.labels = {{"phase", what}, {"mode", "low_latency"}, {"rank", rank}, {"source", path}};
    e.samples = {seconds};
    add(std::move(e), line);
  };

  while (std::getline(in, raw)) {
    ++line_no;
    const bool complete = ends_with_newline || in.peek() != std::char_traits<char>::eof();
    const std::string l = trim(strip_launcher_prefix(raw));
    const bool ours = l.rfind("[config]", 0) == 0 || l.rfind("[layout]", 0) == 0 ||
                      l.rfind("[tuning]", 0) == 0 || l.rfind("[rank ", 0) == 0;
    if (ours && !complete) {
      throw InputError({path, line_no}, "line", l,
                       "a complete line: the file ends inside it, so its last value may be cut");
    }
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
      const LineReader r(l, path, line_no, "[layout]");
      const auto ms = r.after("Kernel performance:", true);
      if (l.size() < 3 || l.compare(l.size() - 3, 3, " ms") != 0) r.fail("'Kernel performance: X ms'");
      Experiment e;
      e.kind = "deepep";
      e.unit = std::string("s");
      e.name = concat({"deepep.", stem, ".layout"});
      e.params = config;
      e.params["line"] = line_no;
      e.labels = {{"phase", "layout"}, {"source", path}};
      e.samples = {*ms * 1e-3};
      add(std::move(e), line_no);
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
        for (char& ch : dtype) {
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (!word_char(ch)) ch = '_';
        }
      } else if (body.find("Best combine") != std::string::npos) {
        phase = "combine";
      } else {
        throw InputError({path, line_no}, "[tuning]", l, "'Best dispatch (...)' or 'Best combine'");
      }
      warn_repeated_result(best_lines, l, line_no, path, result.warnings);
      const std::size_t colon = body.find(':', best_at);
      const Tuning best = parse_tuning(
          colon == std::string::npos ? std::string_view(body) : std::string_view(body).substr(colon + 1),
          path, line_no);
      for (const Tuning& t : pending) make(t, phase, dtype, false);
      pending.clear();
      make(best, phase, dtype, true);
    } else if (l.rfind("[rank ", 0) == 0) {
      // test_low_latency.py: "[rank 0] Dispatch bandwidth: ... | Combine bandwidth: ..."
      const std::size_t close = l.find(']');
      const std::string rank = close == std::string::npos ? std::string() : trim(l.substr(6, close - 6));
      if (rank.empty() || !to_number(rank)) continue;
      std::istringstream segments(l.substr(close + 1));
      std::string segment;
      while (std::getline(segments, segment, '|')) {
        const LineReader r(segment, path, line_no, "[rank]");
        const std::string s = trim(segment);
        if (s.find("send/recv time:") != std::string::npos) {
          const std::string what = s.rfind("Dispatch", 0) == 0 ? "dispatch_send_recv" : "combine_send_recv";
          const auto sum = r.sum_us();
          if (!sum) r.fail("'send/recv time: S + R us'");
          low_latency(rank, what, (sum->first + sum->second) * 1e-6, line_no,
                      {{"send_s", sum->first * 1e-6}, {"recv_s", sum->second * 1e-6}});
        } else if (s.find("bandwidth:") != std::string::npos && s.find("avg_t") != std::string::npos) {
          const std::string what = s.rfind("Dispatch + combine", 0) == 0 ? "dispatch_combine"
                                   : s.rfind("Dispatch", 0) == 0         ? "dispatch"
                                                                         : "combine";
          std::map<std::string, double> params;
          params["bw_Bps"] = *r.before("GB/s", true) * 1e9;
          const auto avg = r.us_after("avg_t");
          if (!avg) r.fail("'avg_t=T us'");
          if (const auto v = r.us_after("min_t")) params["min_s"] = *v * 1e-6;
          if (const auto v = r.us_after("max_t")) params["max_s"] = *v * 1e-6;
          low_latency(rank, what, *avg * 1e-6, line_no, params);
        }
      }
    }
  }
  if (!pending.empty()) {
    throw InputError(
        {path, pending.front().line},
        "tuning lines with no following '[tuning] Best dispatch/combine' line (truncated input?)");
  }
  if (out.empty()) {
    throw InputError(
        {path, line_no},
        "no [layout], [tuning] or low-latency '[rank N] ... bandwidth' lines: not DeepEP / UCCL-EP "
        "test_internode.py, test_intranode.py or test_low_latency.py output");
  }
  return result;
}

}  // namespace moetwin
