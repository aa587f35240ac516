#include "moetwin/reports/report_input.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

bool has_all(const std::vector<std::string>& columns, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    bool found = false;
    for (const std::string& c : columns) found = found || c == n;
    if (!found) return false;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string json_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

std::string context_string(const nlohmann::ordered_json& context, const char* key) {
  if (!context.is_object() || !context.contains(key)) return "";
  return json_cell(context.at(key));
}

ReportInput parse_json(const std::string& text, const std::string& path) {
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError({path, 0}, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    throw InputError({path, 0}, "JSON document", "not an object", "a moetwin JSON output");
  const nlohmann::ordered_json* rows = nullptr;
  for (const char* key : {"options", "rows", "points", "runs"}) {
    if (doc.contains(key) && doc.at(key).is_array()) {
      rows = &doc.at(key);
      break;
    }
  }
  if (!rows) {
    for (const auto& [key, value] : doc.items()) {
      if (value.is_array() && !value.empty() && value.front().is_object()) {
        rows = &value;
        break;
      }
    }
  }
  if (!rows)
    throw InputError({path, 0}, "JSON document", "no table", "an array of row objects (\"rows\", ...)");
  ReportInput in;
  in.path = path;
  for (const auto& row : *rows) {
    if (!row.is_object()) throw InputError({path, 0}, "row", row.dump(), "an object");
    for (const auto& [key, value] : row.items()) {
      bool known = false;
      for (const std::string& c : in.columns) known = known || c == key;
      if (!known) in.columns.push_back(key);
    }
  }
  for (const auto& row : *rows) {
    std::vector<std::string> cells;
    for (const std::string& c : in.columns) cells.push_back(row.contains(c) ? json_cell(row.at(c)) : "");
    in.rows.push_back(std::move(cells));
  }
  const nlohmann::ordered_json context =
      doc.contains("context") ? doc.at("context") : nlohmann::ordered_json();
  in.moetwin_version = context_string(context, "moetwin_version");
  in.git_revision = context_string(context, "git_revision");
  in.command = context_string(context, "command");
  in.profile = context_string(context, "profile");
  // The plan's summary table carries its profile.
  if (in.profile.empty() && doc.contains("plan") && doc.at("plan").is_array() && !doc.at("plan").empty()) {
    in.profile = context_string(doc.at("plan").front(), "profile");
  }
  if (doc.contains("plan") && doc.at("plan").is_array() && !doc.at("plan").empty()) {
    in.deadline_days = context_string(doc.at("plan").front(), "deadline_days");
  }
  return in;
}

// The '#' comment lines a CSV output starts with (csv_context_header): "# key: value" for the context keys
// the report names; other comments are ignored.
void read_csv_context(const std::string& text, ReportInput& in) {
  std::size_t pos = 0;
  while (pos < text.size() && text[pos] == '#') {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(0, key.find_first_not_of(' '));
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (!value.empty() && value.back() == '\r') value.pop_back();
    if (key == "moetwin_version") in.moetwin_version = value;
    if (key == "git_revision") in.git_revision = value;
    if (key == "command") in.command = value;
    if (key == "profile") in.profile = value;
    if (key == "deadline_days") in.deadline_days = value;
  }
}

// FIPS 180-4 SHA-256.
constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

}  // namespace

const char* to_string(ReportKind kind) {
  switch (kind) {
    case ReportKind::plan:
      return "plan";
    case ReportKind::sweep:
      return "sweep";
    case ReportKind::validate:
      return "validate";
    case ReportKind::recommend:
      return "recommend";
    case ReportKind::predict:
      return "predict";
    case ReportKind::compare:
      return "compare";
  }
  return "?";
}

std::size_t ReportInput::find(const std::vector<std::string>& names) const {
  for (const std::string& n : names) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == n) return i;
    }
  }
  return npos;
}

const std::string& ReportInput::cell(std::size_t row, const std::vector<std::string>& names) const {
  static const std::string empty;
  const std::size_t c = find(names);
  return c == npos ? empty : rows.at(row).at(c);
}

double ReportInput::number(std::size_t row, const std::vector<std::string>& names) const {
  const std::string& s = cell(row, names);
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
  return v;
}

ReportKind detect_report_kind(const std::vector<std::string>& c, const std::string& path) {
  if (has_all(c, {"ratio", "ratio_lo", "ratio_hi", "verdict"})) return ReportKind::compare;
  if (has_all(c, {"days", "node_hours", "pareto"})) return ReportKind::plan;
  if (has_all(c, {"winner", "margin_pct", "predicted_lo_s", "predicted_hi_s"}) ||
      has_all(c, {"winner", "margin_pct", "lo_s", "hi_s"}))
    return ReportKind::recommend;
  if (has_all(c, {"error_pct", "predicted_iter_s"})) return ReportKind::validate;
  if (has_all(c, {"point", "status"}) && (has_all(c, {"iteration_s"}) || has_all(c, {"predicted_iter_s"})))
    return ReportKind::sweep;
  if (has_all(c, {"scenario", "predicted_iter_s"})) return ReportKind::predict;
  throw InputError({path, 0}, "columns", std::to_string(c.size()) + " columns",
                   "the output of plan (days, node_hours, pareto), recommend (winner, margin_pct, "
                   "predicted_lo_s, predicted_hi_s), "
                   "validate or predict --runs (error_pct or iter_err_pct, predicted_iter_s), sweep (point, "
                   "status, iteration_s), predict (scenario, predicted_iter_s) or compare (ratio, ratio_lo, "
                   "ratio_hi, verdict)");
}

ReportInput parse_report_input(const std::string& text, const std::string& path) {
  ReportInput in;
  if (ends_with(path, ".json")) {
    in = parse_json(text, path);
  } else {
    const CsvTable t = parse_csv(text, path);
    read_csv_context(text, in);
    in.path = path;
    in.columns = t.header;
    for (const CsvRow& r : t.rows) in.rows.push_back(r.fields);
  }
  // `predict --runs` is validate's table with its error column named iter_err_pct.
  const bool has_error_pct = std::find(in.columns.begin(), in.columns.end(), "error_pct") != in.columns.end();
  for (std::string& c : in.columns) {
    if (c == "iter_err_pct" && !has_error_pct) c = "error_pct";
  }
  in.kind = detect_report_kind(in.columns, path);
  in.sha256 = sha256_hex(text);
  return in;
}

ReportInput load_report_input(const std::string& path) {
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) {
    throw InputError({path, 0}, "input", "an HDF5 file",
                     "a CSV or JSON output (a sweep writes PREFIX.csv beside PREFIX.h5 with the same rows: "
                     "pass that)");
  }
  return parse_report_input(read_text_file(path), path);
}

std::string sha256_hex(const std::string& bytes) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = bytes;
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (std::size_t off = 0; off < msg.size(); off += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = 0;
      for (std::size_t b = 0; b < 4; ++b)
        w[i] = (w[i] << 8) | static_cast<std::uint8_t>(msg[off + 4 * i + b]);
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = h;
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      const std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
      const std::uint32_t t1 = v[7] + s1 + ch + kK[i] + w[i];
      const std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      const std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      const std::uint32_t t2 = s0 + maj;
      v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (std::size_t i = 0; i < 8; ++i) h[i] += v[i];
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::uint32_t x : h) {
    for (int i = 7; i >= 0; --i) out.push_back(hex[(x >> (4 * i)) & 0xf]);
  }
  return out;
}

}  // namespace moetwin
