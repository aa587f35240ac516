// Importer of nccl-tests `*_perf` output (format described in importers.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
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

std::vector<std::string> split_ws(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  std::string token;
  while (in >> token) out.push_back(token);
  return out;
}

std::optional<double> parse_number(const std::string& s) {
  double value = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The collectives nccl-tests ships, by binary name without "_perf".
bool known_op(const std::string& op) {
  static const std::set<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                            "broadcast",  "reduce",     "gather",         "scatter",
                                            "sendrecv",   "hypercube"};
  return ops.count(op) > 0;
}

// The op named by a "<dir>/<op>_perf" token of `text` (a launch command, "Running: ...", or
// "# Collective test starting: all_reduce_perf"), or "".
std::string op_from_binary(std::string_view text) {
  for (const std::string& token : split_ws(text)) {
    const std::string name = std::filesystem::path(token).filename().string();
    constexpr std::string_view suffix = "_perf";
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string op = name.substr(0, name.size() - suffix.size());
    if (known_op(op)) return op;
  }
  return {};
}

// "2024-05-01" and "12:00:01" (what -S 1 prints in its timestamp column).
bool is_date(const std::string& t) {
  return t.size() == 10 && t[4] == '-' && t[7] == '-';
}
bool is_clock(const std::string& t) {
  return t.size() >= 8 && t[2] == ':' && t[5] == ':';
}

// Column positions of one data row, found by header name.
struct Columns {
  std::size_t total = 0;
  std::optional<std::size_t> redop, root, timestamp;
  std::size_t size = 0, count = 0, type = 0;
  std::size_t time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  std::optional<std::size_t> wrong[2], error[2];
  bool cpu_time = false;  // -C 1: the time columns are host CPU time
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
    else if (t == "timestamp")
      c.timestamp = i;
    else if (t == "time" || t == "cputime") {
      if (++placement > 1) return std::nullopt;
      c.time[placement] = i;
      c.cpu_time = t == "cputime";
    } else if (placement >= 0 && t == "algbw")
      c.algbw[placement] = i;
    else if (placement >= 0 && t == "busbw")
      c.busbw[placement] = i;
    else if (placement >= 0 && t == "#wrong")
      c.wrong[placement] = i;
    else if (placement >= 0 && t == "error")
      c.error[placement] = i;
  }
  if (placement != 1 || c.type == 0) return std::nullopt;
  return c;
}

// Bytes per element of an nccl-tests data type (its type column); 0 = not known here (not checked).
double type_bytes(const std::string& type) {
  static const std::map<std::string, double> bytes = {
      {"int8", 1},  {"uint8", 1},    {"char", 1},    {"f8e4m3", 1},  {"f8e5m2", 1},
      {"half", 2},  {"bfloat16", 2}, {"float16", 2}, {"bf16", 2},    {"fp16", 2},
      {"int32", 4}, {"uint32", 4},   {"float", 4},   {"float32", 4}, {"int", 4},
      {"int64", 8}, {"uint64", 8},   {"double", 8},  {"float64", 8}};
  const auto it = bytes.find(type);
  return it == bytes.end() ? 0 : it->second;
}

// nccl-tests prints algbw = size / time in GB/s (1e9 B/s) with two decimals: the printed value is within
// half a hundredth of size / time, and a copy edited by hand or a timer that went wrong is not. 5% on top of
// the rounding leaves room for the older formats' coarser time column.
constexpr double kAlgbwTolerance = 0.05;
constexpr double kAlgbwRounding = 0.005;  // GB/s: half the last printed digit

struct Row {
  int line;
  std::vector<std::string> fields;
};

struct Test {
  Columns columns;
  int header_line = 0;
  std::string op;
  int op_line = 0;
  int ranks = 0;
  std::vector<Row> rows;
  std::optional<double> avg_busbw;
  int avg_line = 0;
};

// Letters, digits, '-' and '_' kept, others -> '_': a piece of an experiment name (never '/').
std::string name_safe(std::string text) {
  for (char& ch : text) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '-' || ch == '_';
    if (!ok) ch = '_';
  }
  return text;
}

// nccl-tests -N repeats the whole sweep, so every size of a table appears equally often; a size that
// appears more often than the others is a duplicated row (an edit, a paste), whose time is pooled as a
// repeat of the first. A warning at the extra row (issue 55 item 5).
void warn_duplicate_sizes(const Test& test, const std::string& path, std::vector<std::string>& warnings) {
  std::map<std::string, std::vector<int>> lines;  // size (with type and redop) -> its rows' lines
  for (const Row& row : test.rows) {
    std::string key = row.fields[test.columns.size] + " B " + row.fields[test.columns.type];
    if (test.columns.redop) key += " " + row.fields[*test.columns.redop];
    lines[key].push_back(row.line);
  }
  std::size_t fewest = SIZE_MAX;
  for (const auto& [key, at] : lines) fewest = std::min(fewest, at.size());
  for (const auto& [key, at] : lines) {
    if (at.size() == fewest) continue;
    warnings.push_back(
        concat({path, ":", std::to_string(at[fewest]), ": size ", key, " appears ", std::to_string(at.size()),
                " times (line ", std::to_string(at[0]), " first), other sizes ", std::to_string(fewest),
                ": a duplicated row? its time is pooled with the others as a repeat"}));
  }
}

}  // namespace

std::string name_safe_stem(const std::string& path) {
  const std::string stem = name_safe(std::filesystem::path(path).stem().string());
  return stem.empty() ? std::string("log") : stem;
}

ImportResult import_nccl_tests(const std::string& text, const std::string& path,
                               const NcclTestsOptions& options) {
  const std::string stem = name_safe_stem(path);
  ImportResult result;
  std::vector<Test> tests;
  // What the lines before a column header say about the test it starts.
  std::string pending_op;
  int pending_op_line = 0, pending_ranks = 0;
  bool in_table = false;  // after a header, until the test's closing lines
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  while (std::getline(in, raw)) {
    ++line_no;
    const bool complete = ends_with_newline || in.peek() != std::char_traits<char>::eof();
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string_view line = strip_launcher_prefix(raw);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    if (line[first] == '#') {
      const std::string_view body = line.substr(first + 1);
      const std::vector<std::string> tokens = split_ws(body);
      if (tokens.empty()) continue;
      if (const auto header = parse_header(tokens)) {
        Test t;
        t.columns = *header;
        t.header_line = line_no;
        t.op = pending_op;
        t.op_line = pending_op_line;
        t.ranks = pending_ranks;
        tests.push_back(std::move(t));
        pending_op.clear();
        pending_ranks = 0;
        in_table = true;
      } else if (tokens[0] == "Rank" && tokens.size() > 1) {
        if (in_table) in_table = false;  // the preamble of the next test
        ++pending_ranks;
      } else if (body.find("Collective test starting") != std::string_view::npos) {
        in_table = false;
        pending_op = op_from_binary(body);
        pending_op_line = line_no;
      } else if (in_table && body.find("Avg bus bandwidth") != std::string_view::npos) {
        const std::size_t colon = body.find(':');
        const std::vector<std::string> after =
            colon == std::string_view::npos ? std::vector<std::string>{} : split_ws(body.substr(colon + 1));
        const std::string value = after.empty() ? std::string() : after[0];
        const auto avg = parse_number(value);
        if (!avg || !complete)
          throw InputError({path, line_no}, "Avg bus bandwidth", value, "a number (GB/s)");
        tests.back().avg_busbw = avg;
        tests.back().avg_line = line_no;
        in_table = false;  // the table is over: numbers after it are not rows
      } else if (in_table && body.find("Out of bounds values") != std::string_view::npos &&
                 body.find("OK") == std::string_view::npos) {
        result.warnings.push_back(
            concat({path, ":", std::to_string(line_no), ": nccl-tests reports out-of-bounds values: ",
                    std::string(body.substr(body.find_first_not_of(' ')))}));
      } else if (body.find("Collective test concluded") != std::string_view::npos) {
        in_table = false;
      }
      continue;
    }
    // A launch command naming the binary ("Running: ... ./build/broadcast_perf -b 8", "mpirun ...
    // /nccl-tests/build/all_reduce_perf ...") names the op of the test that follows it.
    if (const std::string op = op_from_binary(line); !op.empty()) {
      if (pending_op.empty()) {
        pending_op = op;
        pending_op_line = line_no;
      }
      continue;
    }
    std::vector<std::string> fields = split_ws(line);
    // NCCL_DEBUG and launcher lines interleave with the table: a data row starts with a byte count.
    // (A line of other whitespace, "\v" or "\f", has no fields: found by the nccl_tests fuzz target.)
    if (fields.empty() || !parse_number(fields[0])) continue;
    if (tests.empty()) throw InputError({path, line_no}, "data row before the column header line");
    if (!in_table) continue;  // between tests: launcher and banner text that starts with a number
    Test& test = tests.back();
    if (test.columns.timestamp) {
      // -S 1 prints the timestamp as "YYYY-MM-DD HH:MM:SS": two tokens for one column.
      for (std::size_t i = 0; i + 1 < fields.size(); ++i) {
        if (is_date(fields[i]) && is_clock(fields[i + 1])) {
          fields[i] += " " + fields[i + 1];
          fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(i) + 1);
          break;
        }
      }
    }
    if (fields.size() != test.columns.total) {
      throw InputError({path, line_no}, "row", std::string(line.substr(first)),
                       concat({std::to_string(test.columns.total), " columns as in the header at line ",
                               std::to_string(test.header_line), " (truncated or interleaved output?)"}));
    }
    if (!complete) {
      throw InputError({path, line_no}, "row", std::string(line.substr(first)),
                       "a complete line: the file ends inside this row, so its last value may be cut");
    }
    test.rows.push_back({line_no, std::move(fields)});
  }
  if (tests.empty()) throw InputError({path, line_no}, "no nccl-tests column header (# size count type ...)");

  const bool several = tests.size() > 1;
  const char* placements[2] = {"out_of_place", "in_place"};
  for (std::size_t k = 0; k < tests.size(); ++k) {
    Test& test = tests[k];
    const Columns& columns = test.columns;
    if (test.rows.empty()) {
      throw InputError({path, test.header_line},
                       "no data rows after the column header (truncated input, or the run failed?)");
    }
    std::string op = test.op;
    if (!options.op.empty()) {
      if (name_safe(options.op) != options.op) {
        throw InputError({"--op", 0}, "op", options.op,
                         "a collective name of letters, digits and '_' (all_reduce, ...)");
      }
      if (!op.empty() && op != options.op) {
        throw InputError({path, test.op_line}, "op", op,
                         concat({options.op, " as given by --op (the log names another collective)"}));
      }
      op = options.op;
    }
    if (op.empty()) {
      throw InputError({path, test.header_line}, "op", "not in the log",
                       "pass --op (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, ...): no '# "
                       "Collective test starting' line, 'Running:' line or *_perf command before this table");
    }
    const std::string prefix = concat(
        {"nccl_tests.", op, ".", stem, several ? concat({".t", std::to_string(k + 1)}) : std::string()});
    std::set<std::string> types, redops;
    for (const Row& row : test.rows) {
      types.insert(row.fields[columns.type]);
      if (columns.redop) redops.insert(row.fields[*columns.redop]);
    }
    warn_duplicate_sizes(test, path, result.warnings);
    std::map<std::string, std::size_t> index;  // experiment name -> position in result (repeats)
    const std::size_t first_of_test = result.experiments.size();
    for (const Row& row : test.rows) {
      const auto number = [&](std::size_t i, const char* key) {
        const auto value = parse_number(row.fields[i]);
        if (!value) throw InputError({path, row.line}, key, row.fields[i], "a number");
        return *value;
      };
      const double size = number(columns.size, "size");
      const double count = number(columns.count, "count");
      if (!(size > 0) || !(count > 0) || size != std::floor(size) || count != std::floor(count)) {
        throw InputError(
            {path, row.line}, !(size > 0) || size != std::floor(size) ? "size" : "count",
            !(size > 0) || size != std::floor(size) ? row.fields[columns.size] : row.fields[columns.count],
            "a positive whole number");
      }
      // nccl-tests prints size = max(send, receive bytes) and count = elements of its byte count: they
      // agree up to a whole factor of at most the rank count (gathers and scatters), never otherwise.
      if (const double word = type_bytes(row.fields[columns.type]); word > 0) {
        const double elements_bytes = count * word;
        const double ratio = std::max(size, elements_bytes) / std::min(size, elements_bytes);
        const double max_ratio = test.ranks > 0 ? test.ranks : 65536;
        if (ratio != std::floor(ratio) || ratio > max_ratio) {
          throw InputError({path, row.line}, "count", row.fields[columns.count],
                           concat({"a count of ", row.fields[columns.type], " elements (", format_exact(word),
                                   " B each) matching size ", row.fields[columns.size],
                                   " B (equal, or a whole factor of at most the ranks apart)"}));
        }
      }
      for (int p = 0; p < 2; ++p) {
        if (row.fields[columns.time[p]] == "N/A") continue;
        const double time_us = number(columns.time[p], "time");
        if (!(time_us > 0)) {
          throw InputError({path, row.line}, concat({placements[p], " time (us)"}),
                           row.fields[columns.time[p]],
                           "a positive time (no collective takes zero or negative time)");
        }
        if (row.fields[columns.algbw[p]] != "N/A") {
          const double algbw = number(columns.algbw[p], "algbw");
          const double expected = size / (time_us * 1e3);  // GB/s
          if (std::abs(algbw - expected) > kAlgbwTolerance * expected + kAlgbwRounding) {
            throw InputError({path, row.line}, concat({placements[p], " algbw (GB/s)"}),
                             row.fields[columns.algbw[p]],
                             concat({"size / time = ", format_fixed(expected, 2),
                                     " GB/s within 5% (the row's size, time and bandwidth contradict each "
                                     "other)"}));
          }
        }
        std::string name = concat({prefix, ".", row.fields[columns.size]});
        if (types.size() > 1) name += concat({".", name_safe(row.fields[columns.type])});
        if (redops.size() > 1) name += concat({".", name_safe(row.fields[*columns.redop])});
        name += concat({".", placements[p]});
        double wrong = 0;
        if (columns.wrong[p]) {
          if (const auto w = parse_number(row.fields[*columns.wrong[p]])) wrong = *w;
        }
        if (const auto it = index.find(name); it != index.end()) {
          Experiment& e = result.experiments[it->second];
          e.samples.push_back(time_us * 1e-6);
          e.params["repeats"] = static_cast<double>(e.samples.size());
          if (wrong > 0 && e.kind == "nccl_tests" && !options.keep_wrong) e.kind = "nccl_tests_wrong";
          continue;
        }
        Experiment e;
        e.kind = wrong > 0 && !options.keep_wrong ? "nccl_tests_wrong" : "nccl_tests";
        e.unit = std::string("s");  // not = "s": GCC 12 -O3 -Wrestrict false positive
        e.name = name;
        e.labels["op"] = op;
        e.labels["type"] = row.fields[columns.type];
        if (columns.redop) e.labels["redop"] = row.fields[*columns.redop];
        e.labels["placement"] = placements[p];
        e.labels["timer"] = columns.cpu_time ? "cpu" : "gpu";
        e.labels["source"] = path;
        if (columns.timestamp) e.labels["timestamp"] = row.fields[*columns.timestamp];
        e.params["size_bytes"] = size;
        e.params["count"] = count;
        if (columns.root) e.params["root"] = number(*columns.root, "root");
        e.params["algbw_Bps"] = number(columns.algbw[p], "algbw") * 1e9;  // nccl-tests prints GB/s (1e9)
        e.params["busbw_Bps"] = number(columns.busbw[p], "busbw") * 1e9;
        if (columns.wrong[p]) {
          const std::string& w = row.fields[*columns.wrong[p]];
          if (parse_number(w))
            e.params["wrong"] = wrong;
          else
            e.labels["wrong"] = w;
        }
        if (columns.error[p]) {
          const std::string& w = row.fields[*columns.error[p]];
          if (const auto value = parse_number(w)) e.params["max_error"] = *value;
        }
        if (test.ranks > 0) e.params["ranks"] = test.ranks;
        e.params["repeats"] = 1;
        e.params["line"] = row.line;
        e.samples = {time_us * 1e-6};  // nccl-tests prints microseconds
        index.emplace(e.name, result.experiments.size());
        result.experiments.push_back(std::move(e));
      }
      for (int p = 0; p < 2; ++p) {
        if (!columns.wrong[p]) continue;
        const auto w = parse_number(row.fields[*columns.wrong[p]]);
        if (w && *w > 0) {
          result.warnings.push_back(concat(
              {path, ":", std::to_string(row.line), ": ", row.fields[*columns.wrong[p]],
               " wrong elements (#wrong) ", placements[p], " at ", row.fields[columns.size], " bytes: ",
               options.keep_wrong
                   ? "imported as data (--keep-wrong)"
                   : "kept as kind nccl_tests_wrong, out of fits (--keep-wrong imports it as data)"}));
        }
      }
    }
    // Every time "N/A": nothing measured (found by the nccl_tests fuzz target, which imported nothing
    // silently).
    if (result.experiments.size() == first_of_test) {
      throw InputError({path, test.header_line},
                       "no row with a time after the column header (every time is N/A)");
    }
    if (test.avg_busbw) {
      Experiment e;
      e.kind = "nccl_tests_avg";
      e.unit = std::string("B/s");
      e.name = concat({prefix, ".avg_busbw"});
      e.labels = {{"op", op}, {"source", path}};
      e.params["line"] = test.avg_line;
      if (test.ranks > 0) e.params["ranks"] = test.ranks;
      e.samples = {*test.avg_busbw * 1e9};
      result.experiments.push_back(std::move(e));
    }
  }
  return result;
}

}  // namespace moetwin
