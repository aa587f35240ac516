// Importer of nccl-tests `*_perf` output (format described in importers.hpp).
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string token;
  while (in >> token) out.push_back(token);
  return out;
}

std::optional<double> parse_number(const std::string& s) {
  double value = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Collectives nccl-tests ships, longest first so "all_reduce" is not taken for "reduce".
const std::vector<std::string>& known_ops() {
  static const std::vector<std::string> ops = {"reduce_scatter", "all_reduce", "all_gather", "alltoall",
                                               "sendrecv",       "broadcast",  "hypercube",  "gather",
                                               "scatter",        "reduce"};
  return ops;
}

std::string op_from_text(const std::string& text) {
  for (const std::string& op : known_ops()) {
    if (text.find(op) != std::string::npos) return op;
  }
  return {};
}

// Column positions of one data row, found by header name.
struct Columns {
  std::size_t total = 0;
  std::optional<std::size_t> redop, root;
  std::size_t size = 0, count = 0, type = 0;
  std::size_t time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  std::optional<std::size_t> wrong[2];
};

std::optional<Columns> parse_header(const std::vector<std::string>& tokens) {
  if (tokens.size() < 9 || tokens[0] != "size" || tokens[1] != "count") return std::nullopt;
  Columns c;
  c.total = tokens.size();
  int placement = -1;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == "size")
      c.size = i;
    else if (t == "count")
      c.count = i;
    else if (t == "type")
      c.type = i;
    else if (t == "redop")
      c.redop = i;
    else if (t == "root")
      c.root = i;
    else if (t == "time") {
      if (++placement > 1) return std::nullopt;
      c.time[placement] = i;
    } else if (placement >= 0 && t == "algbw")
      c.algbw[placement] = i;
    else if (placement >= 0 && t == "busbw")
      c.busbw[placement] = i;
    else if (placement >= 0 && (t == "#wrong" || t == "error"))
      c.wrong[placement] = i;
  }
  if (placement != 1) return std::nullopt;
  return c;
}

}  // namespace

std::string name_safe_stem(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  for (char& ch : stem) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '-' || ch == '_';
    if (!ok) ch = '_';
  }
  return stem.empty() ? std::string("log") : stem;
}

std::vector<Experiment> import_nccl_tests(const std::string& text, const std::string& path,
                                          const std::string& op_arg) {
  std::string op = op_arg;
  if (op.empty()) op = op_from_text(std::filesystem::path(path).filename().string());
  const std::string stem = name_safe_stem(path);
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  int ranks = 0;
  std::optional<Columns> columns;
  std::optional<double> avg_busbw;
  int avg_line = 0;
  struct Row {
    int line;
    std::vector<std::string> fields;
  };
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      const std::string body = line.substr(first + 1);
      const std::vector<std::string> tokens = split_ws(body);
      if (tokens.empty()) continue;
      if (const auto header = parse_header(tokens)) {
        if (columns) throw InputError({path, line_no}, "a second column header: expected one test per file");
        columns = header;
      } else if (tokens[0] == "Rank" && tokens.size() > 1) {
        ++ranks;
      } else if (op.empty() && body.find("Collective test starting") != std::string::npos) {
        op = op_from_text(body);
      } else if (body.find("Avg bus bandwidth") != std::string::npos) {
        const std::size_t colon = body.find(':');
        const std::vector<std::string> after =
            colon == std::string::npos ? std::vector<std::string>{} : split_ws(body.substr(colon + 1));
        const std::string value = after.empty() ? std::string() : after[0];
        avg_busbw = parse_number(value);
        if (!avg_busbw) throw InputError({path, line_no}, "Avg bus bandwidth", value, "a number (GB/s)");
        avg_line = line_no;
      }
      continue;
    }
    std::vector<std::string> fields = split_ws(line);
    // NCCL_DEBUG and launcher lines interleave with the table: a data row starts with a byte count.
    if (!parse_number(fields[0])) continue;
    if (!columns) throw InputError({path, line_no}, "data row before the column header line");
    if (fields.size() != columns->total) {
      throw InputError({path, line_no}, "row", line.substr(first),
                       std::to_string(columns->total) + " columns as in the header (truncated input?)");
    }
    rows.push_back({line_no, std::move(fields)});
  }
  if (!columns) throw InputError({path, line_no}, "no nccl-tests column header (# size count type ...)");
  if (rows.empty())
    throw InputError({path, line_no}, "no data rows after the column header (truncated input?)");
  if (op.empty()) {
    throw InputError({path, 0}, "op", "", "a collective name in the file name or --op (all_reduce, ...)");
  }

  std::vector<Experiment> out;
  const char* placements[2] = {"out_of_place", "in_place"};
  for (const Row& row : rows) {
    const auto number = [&](std::size_t index, const char* key) {
      const auto value = parse_number(row.fields[index]);
      if (!value) throw InputError({path, row.line}, key, row.fields[index], "a number");
      return *value;
    };
    const double size = number(columns->size, "size");
    const double count = number(columns->count, "count");
    for (int p = 0; p < 2; ++p) {
      Experiment e;
      e.kind = "nccl_tests";
      e.unit = "s";
      e.name = "nccl_tests." + op + "." + stem + "." + row.fields[columns->size] + "." + placements[p];
      e.labels["op"] = op;
      e.labels["type"] = row.fields[columns->type];
      if (columns->redop) e.labels["redop"] = row.fields[*columns->redop];
      e.labels["placement"] = placements[p];
      e.labels["source"] = path;
      e.params["size_bytes"] = size;
      e.params["count"] = count;
      if (columns->root) e.params["root"] = number(*columns->root, "root");
      e.params["algbw_Bps"] = number(columns->algbw[p], "algbw") * 1e9;  // nccl-tests prints GB/s (1e9)
      e.params["busbw_Bps"] = number(columns->busbw[p], "busbw") * 1e9;
      if (columns->wrong[p]) {
        const std::string& w = row.fields[*columns->wrong[p]];
        if (const auto value = parse_number(w))
          e.params["wrong"] = *value;
        else
          e.labels["wrong"] = w;
      }
      if (ranks > 0) e.params["ranks"] = ranks;
      e.params["line"] = row.line;
      e.samples = {number(columns->time[p], "time") * 1e-6};  // nccl-tests prints microseconds
      out.push_back(std::move(e));
    }
  }
  if (avg_busbw) {
    Experiment e;
    e.kind = "nccl_tests_avg";
    e.unit = "B/s";
    e.name = "nccl_tests." + op + "." + stem + ".avg_busbw";
    e.labels = {{"op", op}, {"source", path}};
    e.params["line"] = avg_line;
    if (ranks > 0) e.params["ranks"] = ranks;
    e.samples = {*avg_busbw * 1e9};
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace moetwin
