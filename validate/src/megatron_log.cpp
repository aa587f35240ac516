#include "moetwin/validate/megatron_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin {
namespace {

// A re-printed iteration (several ranks, a second logger) repeats the same value; Megatron prints times
// to 0.1 ms, so 1% separates a copy from a different measurement of the same iteration number.
constexpr double kRelogTolerance = 0.01;

// Markers of the iteration-line formats (Megatron-LM training_log; Megatron-Bridge step timing; NeMo 2.0
// progress line).
constexpr std::string_view kLmElapsed = "elapsed time per iteration (ms):";
constexpr std::string_view kLmThroughput = "throughput per GPU (TFLOP/s/GPU):";
constexpr std::string_view kBridgeStep = "Step Time :";
constexpr std::string_view kBridgeUtil = "GPU utilization:";
constexpr std::string_view kNemoStep = "train_step_timing in s:";

// The arguments the importer reads; other logged settings are not its business (and may repeat freely).
const std::set<std::string, std::less<>>& layout_keys() {
  static const std::set<std::string, std::less<>> keys = {
      "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
      "expert_model_parallel_size", "expert_tensor_parallel_size", "context_parallel_size",
      "data_parallel_size", "world_size", "micro_batch_size", "global_batch_size", "seq_length", "num_layers",
      "recompute_granularity", "overlap_moe_expert_parallel_comm", "moe_token_dispatcher_type",
      // Model facts (ExpectedModel).
      "num_experts", "num_moe_experts", "moe_router_topk", "hidden_size", "ffn_hidden_size",
      "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size", "num_attention_heads", "vocab_size",
      "padded_vocab_size"};
  return keys;
}

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = skip_spaces(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A non-negative finite decimal number at the start of `s` (after spaces); `end` receives the position
// after it.
std::optional<double> leading_number(std::string_view s, std::size_t* end) {
  const std::string_view t = skip_spaces(s);
  double value = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), value);
  if (res.ec != std::errc() || !(value >= 0) || value > 1e12) return std::nullopt;
  *end = static_cast<std::size_t>(res.ptr - s.data());
  return value;
}

// How the characters after a value show that the value is whole (a log cut inside a number leaves a
// shorter number that still parses).
enum class After {
  bar,          // " |" follows (Megatron-LM fields always end so)
  bar_or_end,   // " |" or the end of a complete line (NeMo's fields)
  seconds,      // "s" follows (Bridge "Step Time : 2.23s")
  tflops_unit,  // "TFLOP/s/GPU" or "MODEL_TFLOP/s/GPU" follows
};

// The value after `marker` in `line`; nullopt if the marker is absent. Throws if the marker is there but
// its value is not a number or is not followed as `after` requires. `complete`: the line ends with a
// newline (the last line of a file without one may be cut anywhere).
std::optional<double> field(std::string_view line, std::string_view marker, After after, bool complete,
                            const InputLocation& where, const std::string& what) {
  const auto pos = line.find(marker);
  if (pos == std::string_view::npos) return std::nullopt;
  const std::string_view rest = line.substr(pos + marker.size());
  std::size_t end = 0;
  const auto v = leading_number(rest, &end);
  if (!v) {
    const std::string shown(skip_spaces(rest).substr(0, 20));
    throw InputError(where, what, concat({"\"", shown, "\""}),
                     "a non-negative number (garbled or truncated line)");
  }
  const std::string_view tail = rest.substr(end);
  const std::string_view tail_trimmed = trim(tail);
  bool whole = false;
  const char* expected = "";
  switch (after) {
    case After::bar:
      whole = !tail_trimmed.empty() && tail_trimmed.front() == '|';
      expected = "' |' after the value";
      break;
    case After::bar_or_end:
      whole = (!tail_trimmed.empty() && tail_trimmed.front() == '|') || (tail_trimmed.empty() && complete);
      expected = "' |' or the end of a complete line after the value";
      break;
    case After::seconds:
      whole = !tail.empty() && tail.front() == 's';
      expected = "'s' right after the value";
      break;
    case After::tflops_unit: {
      const std::string_view unit = skip_spaces(tail);
      whole = unit.substr(0, 11) == "TFLOP/s/GPU" || unit.substr(0, 17) == "MODEL_TFLOP/s/GPU";
      expected = "TFLOP/s/GPU or MODEL_TFLOP/s/GPU right after the value";
      break;
    }
  }
  if (!whole) {
    const std::string shown(trim(rest.substr(0, end)));
    throw InputError(
        where, what, concat({"\"", shown, "\""}),
        concat({expected, " (the line is cut inside or right after the number; fix or remove it)"}));
  }
  return v;
}

// An iteration time read from `line` (seconds): it must be positive. A zero ("elapsed time per
// iteration (ms): 0" in a garbled line) would otherwise enter the statistics as a real iteration.
double positive_iteration_s(double seconds, const InputLocation& where, const std::string& what,
                            double shown_value) {
  if (!(seconds > 0)) {
    throw InputError(where, what, format_exact(shown_value),
                     "a positive time (no iteration takes 0; garbled or truncated line)");
  }
  return seconds;
}

// Megatron-LM prints "iteration      10/    1000 |", NeMo "iteration 97/99 |": the number, or nullopt.
std::optional<int> iteration_number(std::string_view line) {
  const auto pos = line.find("iteration ");
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = skip_spaces(line.substr(pos + 10));
  int value = 0;
  const auto res = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (res.ec != std::errc() || res.ptr == rest.data() + rest.size() || *res.ptr != '/' || value < 0)
    return std::nullopt;
  return value;
}

// Drops what launchers and loggers put before a line's content: "[...]" groups (timestamps, "[rank0]:",
// "[1,0]<stdout>:", "[NeMo I ...]"), srun -l's "12: " and the spaces between.
std::string_view strip_prefixes(std::string_view line) {
  for (;;) {
    line = skip_spaces(line);
    if (!line.empty() && line.front() == '[') {
      const auto close = line.find(']');
      if (close == std::string_view::npos) return line;
      line.remove_prefix(close + 1);
      if (line.substr(0, 8) == "<stdout>" || line.substr(0, 8) == "<stderr>") line.remove_prefix(8);
      if (!line.empty() && line.front() == ':') line.remove_prefix(1);
      continue;
    }
    std::size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    if (digits > 0 && digits + 1 < line.size() && line[digits] == ':' && line[digits + 1] == ' ') {
      line.remove_prefix(digits + 1);
      continue;
    }
    return line;
  }
}

// "  tensor_model_parallel_size ...................... 8" (Megatron-LM's dump) -> (key, value).
std::optional<std::pair<std::string, std::string>> dotted_argument(std::string_view line) {
  const auto dots = line.find(" ...");
  if (dots == std::string_view::npos) return std::nullopt;
  std::size_t key_end = dots;
  std::size_t key_begin = key_end;
  while (key_begin > 0 &&
         (std::isalnum(static_cast<unsigned char>(line[key_begin - 1])) || line[key_begin - 1] == '_')) {
    --key_begin;
  }
  if (key_begin == key_end) return std::nullopt;
  std::size_t p = dots + 1;
  while (p < line.size() && line[p] == '.') ++p;
  if (p - dots < 4 || p >= line.size() || line[p] != ' ') return std::nullopt;
  return std::make_pair(std::string(line.substr(key_begin, key_end - key_begin)),
                        std::string(trim(line.substr(p))));
}

// "tensor_model_parallel_size: 8" (Bridge 0.2's YAML config, indented) or
// "tensor_model_parallel_size: 8 (Mcore default: 1)" (Bridge's config print now) -> (key, value), for the
// keys the importer reads. YAML's null/true/false read as Megatron's None/True/False.
std::optional<std::pair<std::string, std::string>> config_argument(std::string_view line) {
  const std::string_view content = strip_prefixes(line);
  const auto colon = content.find(':');
  if (colon == std::string_view::npos || content.find('|') != std::string_view::npos) return std::nullopt;
  const std::string_view key = content.substr(0, colon);
  if (layout_keys().find(key) == layout_keys().end()) return std::nullopt;
  std::string_view value = content.substr(colon + 1);
  const auto note = value.find(" (");
  if (note != std::string_view::npos) value = value.substr(0, note);
  const auto comment = value.find(" #");
  if (comment != std::string_view::npos) value = value.substr(0, comment);
  std::string v(trim(value));
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  if (v == "null" || v == "~") v = "None";
  if (v == "true") v = "True";
  if (v == "false") v = "False";
  if (v.empty()) return std::nullopt;  // a YAML mapping header, not a value
  return std::make_pair(std::string(key), v);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Linear interpolation between order statistics (numpy's default), q in [0, 1]; `v` non-empty.
double percentile_of(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

class ArgumentTable {
 public:
  explicit ArgumentTable(std::string path) : path_(std::move(path)) {}

  void add(const std::string& key, const std::string& value, int line) {
    if (layout_keys().find(key) == layout_keys().end()) return;
    auto it = values_.find(key);
    if (it != values_.end() && it->second.first != value) {
      throw InputError({path_, line}, key, value,
                       concat({"the value logged earlier at line ", std::to_string(it->second.second), " (\"",
                               it->second.first, "\"): contradictory arguments in one log"}));
    }
    values_.emplace(key, std::make_pair(value, line));
  }

  bool has(const std::string& key) const { return values_.count(key) > 0; }

  // Integer argument: absent -> nullopt, None -> `none`.
  std::optional<int> integer(const std::string& key, std::optional<int> none = std::nullopt) const {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    if (it->second.first == "None") return none;
    const std::string& s = it->second.first;
    int v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size() || v < 0) {
      throw InputError({path_, it->second.second}, key, concat({"\"", s, "\""}),
                       "a non-negative integer or None");
    }
    return v;
  }

  std::optional<std::string> text(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second.first;
  }

  int line_of(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? 0 : it->second.second;
  }

 private:
  std::string path_;
  std::map<std::string, std::pair<std::string, int>> values_;
};

struct ParsedLog {
  explicit ParsedLog(const std::string& path) : args(path) { run.source = path; }
  ArgumentTable args;
  ImportedRun run;
};

// A steady iteration at least half as long as the longest warm-up iteration is a second warm-up: a
// restarted run, or two logs in one file (a Megatron-Bridge log concatenated twice scored its second
// warm-up as steady, issue 55). Unnumbered 'Step Time' lines cannot show the restart otherwise. A warning
// at its line; the statistics keep it (split the log to leave it out).
void warn_second_warmup(ImportedRun& run, const std::string& path) {
  const auto dropped = static_cast<std::size_t>(run.warmup_dropped);
  if (dropped == 0) return;
  const IterationSample* warm = &run.samples.front();
  for (std::size_t i = 0; i < dropped; ++i)
    if (run.samples[i].iter_s > warm->iter_s) warm = &run.samples[i];
  for (std::size_t i = dropped; i < run.samples.size(); ++i) {
    const IterationSample& s = run.samples[i];
    if (s.iter_s < 0.5 * warm->iter_s) continue;
    run.warnings.push_back(
        concat({path, ":", std::to_string(s.line), ": iteration ", std::to_string(s.iteration), " took ",
                format_exact(s.iter_s), " s, like the warm-up iteration at line ", std::to_string(warm->line),
                " (", format_exact(warm->iter_s),
                " s): a second warm-up (a restarted run or two logs in one file?) counted as steady: split "
                "the log"}));
    return;
  }
}

// Two iteration lines glued into one (a lost newline): the second's iteration would be lost (issue 55).
void refuse_glued_lines(const std::string& line, std::string_view marker, const InputLocation& where) {
  if (const std::size_t first = line.find(marker); line.find(marker, first + 1) != std::string::npos) {
    throw InputError(where, "iteration line", concat({"two '", marker, "' fields"}),
                     "one iteration per line (two lines glued into one, the newline lost: split it)");
  }
}

ParsedLog parse_log(const std::string& text, const std::string& path, const LogImportOptions& options) {
  ParsedLog parsed(path);
  ImportedRun& run = parsed.run;
  std::vector<IterationSample> numbered, steps;
  std::map<int, std::size_t> counted_at;   // iteration number -> index into `numbered`
  int duplicates = 0, arguments_line = 0;  // arguments_line: of the first Megatron-LM argument dump
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  while (std::getline(in, line)) {
    ++line_no;
    const bool complete = ends_with_newline || in.peek() != std::char_traits<char>::eof();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const InputLocation where{path, line_no};
    // Megatron-LM prints its arguments once per run: a second dump means a second run in this log.
    if (line.find(" arguments ---") != std::string::npos &&
        line.find("end of arguments") == std::string::npos) {
      if (arguments_line > 0) {
        throw InputError(where, "arguments", "a second argument dump",
                         concat({"one run per log (the first starts at line ", std::to_string(arguments_line),
                                 "; a restarted or appended run: split the log and import each part)"}));
      }
      arguments_line = line_no;
      continue;
    }
    if (auto kv = dotted_argument(line)) {
      parsed.args.add(kv->first, kv->second, line_no);
      continue;
    }
    if (auto kv = config_argument(line)) {
      parsed.args.add(kv->first, kv->second, line_no);
      continue;
    }
    const bool lm = line.find(kLmElapsed) != std::string::npos;
    const bool nemo = line.find(kNemoStep) != std::string::npos;
    if (lm || nemo) {
      refuse_glued_lines(line, lm ? kLmElapsed : kNemoStep, where);
      IterationSample s;
      s.line = line_no;
      const auto it = iteration_number(line);
      if (!it) {
        throw InputError(
            where, "iteration", "missing",
            concat({"\"iteration N/M |\" before the ", lm ? "elapsed time" : "train_step_timing"}));
      }
      s.iteration = *it;
      if (lm) {
        const double ms =
            *field(line, kLmElapsed, After::bar, complete, where, "elapsed time per iteration (ms)");
        s.iter_s = positive_iteration_s(ms / 1000.0, where, "elapsed time per iteration (ms)", ms);
        s.tflops_gpu =
            field(line, kLmThroughput, After::bar, complete, where, "throughput per GPU (TFLOP/s/GPU)")
                .value_or(0);
      } else {
        const double step_s =
            *field(line, kNemoStep, After::bar_or_end, complete, where, "train_step_timing in s");
        s.iter_s = positive_iteration_s(step_s, where, "train_step_timing in s", step_s);
      }
      if (const auto seen = counted_at.find(s.iteration); seen != counted_at.end()) {
        // Several ranks or loggers print the same line; a different time is another run's iteration (or a
        // re-logged one) and no median can say which is right.
        const IterationSample& first = numbered[seen->second];
        if (std::abs(s.iter_s - first.iter_s) > kRelogTolerance * first.iter_s) {
          throw InputError(where, concat({"iteration ", std::to_string(s.iteration)}),
                           concat({format_exact(s.iter_s), " s"}),
                           concat({"the time logged for it at line ", std::to_string(first.line), " (",
                                   format_exact(first.iter_s),
                                   " s) within 1%: an iteration logged twice at different times (two runs "
                                   "or a resumed run in one log: split it)"}));
        }
        ++duplicates;
        continue;
      }
      counted_at.emplace(s.iteration, numbered.size());
      numbered.push_back(s);
      continue;
    }
    if (line.find(kBridgeStep) != std::string::npos) {
      IterationSample s;
      s.line = line_no;
      s.iteration = static_cast<int>(steps.size()) + 1;
      const double step_s = *field(line, kBridgeStep, After::seconds, complete, where, "Step Time");
      s.iter_s = positive_iteration_s(step_s, where, "Step Time", step_s);
      s.tflops_gpu =
          field(line, kBridgeUtil, After::tflops_unit, complete, where, "GPU utilization").value_or(0);
      steps.push_back(s);
      // Bridge prints a Step Time line beside the numbered one: it lends the TFLOP/s the numbered line lacks.
      if (!numbered.empty() && numbered.back().tflops_gpu == 0) numbered.back().tflops_gpu = s.tflops_gpu;
      continue;
    }
    // A Megatron-LM iteration line cut before its elapsed-time field (a truncated log tail).
    if (iteration_number(line) && line.find('|') != std::string::npos &&
        line.find("consumed") != std::string::npos) {
      throw InputError(
          where, "iteration line", "truncated",
          "an 'elapsed time per iteration (ms)' field (the line is cut; remove it or fix the log)");
    }
  }
  if (!numbered.empty()) {
    run.samples = std::move(numbered);
    if (!steps.empty()) {
      run.notes.push_back(
          concat({std::to_string(steps.size()),
                  " 'Step Time' lines not counted: the numbered iteration lines time the same "
                  "iterations"}));
    }
  } else {
    run.samples = std::move(steps);
  }
  if (duplicates > 0) {
    run.notes.push_back(
        concat({std::to_string(duplicates),
                " iteration lines repeat an iteration number already counted (several ranks or "
                "loggers): each iteration counted once, at its first line"}));
  }
  if (run.samples.empty()) {
    throw InputError({path, 0},
                     "no iteration lines (expected Megatron-LM 'elapsed time per iteration (ms)', "
                     "Megatron-Bridge 'Step Time :' or NeMo 'train_step_timing in s:' lines)");
  }

  // Warm-up: the first compiles, allocates and captures graphs; it is not what the twin predicts.
  const int n = static_cast<int>(run.samples.size());
  if (options.skip_first >= 0) {
    run.warmup_auto = false;
    run.warmup_dropped = options.skip_first;
    if (n <= options.skip_first) {
      throw InputError({path, run.samples.back().line}, "iterations", std::to_string(n),
                       concat({"more than the ", std::to_string(options.skip_first),
                               " warm-up iterations dropped (--skip-first)"}));
    }
  } else if (n < kMinIterationsForWarmup) {
    run.notes.push_back(concat({"only ", std::to_string(n), " iteration", n == 1 ? "" : "s",
                                " (from iteration ", std::to_string(run.samples.front().iteration),
                                "): too few to tell warm-up from steady state, none dropped"}));
  } else {
    std::vector<double> second_half;
    for (int i = n / 2; i < n; ++i) second_half.push_back(run.samples[static_cast<std::size_t>(i)].iter_s);
    const double reference = median_of(second_half);
    while (run.warmup_dropped < n / 2 &&
           run.samples[static_cast<std::size_t>(run.warmup_dropped)].iter_s > kWarmupFactor * reference)
      ++run.warmup_dropped;
  }
  warn_second_warmup(run, path);
  std::vector<double> times, tflops;
  for (std::size_t i = static_cast<std::size_t>(run.warmup_dropped); i < run.samples.size(); ++i) {
    times.push_back(run.samples[i].iter_s);
    if (run.samples[i].tflops_gpu > 0) tflops.push_back(run.samples[i].tflops_gpu);
  }
  run.steady_count = static_cast<int>(times.size());
  run.mean_iter_s = mean_of(times);
  run.median_iter_s = median_of(times);
  run.p10_iter_s = percentile_of(times, 0.1);
  run.p90_iter_s = percentile_of(times, 0.9);
  if (!tflops.empty()) {
    run.mean_tflops_gpu = mean_of(tflops);
    run.median_tflops_gpu = median_of(tflops);
  }
  for (std::size_t i = static_cast<std::size_t>(run.warmup_dropped); i < run.samples.size(); ++i) {
    if (run.samples[i].iter_s > options.stall_factor * run.median_iter_s)
      run.stalls.push_back(run.samples[i]);
  }
  return parsed;
}

// One layout value: the log's and the given one must agree; either serves alone; else `fallback`; else an
// error saying how to supply it.
class LayoutMerge {
 public:
  LayoutMerge(const ArgumentTable& args, const GivenLayout& given, const std::string& path)
      : args_(args), given_(given), path_(path) {}

  int value(const std::string& key, const std::optional<int>& logged, const std::optional<int>& given,
            const char* flag, std::optional<int> fallback) const {
    if (logged && given && *logged != *given) {
      throw InputError({path_, args_.line_of(key)}, key, std::to_string(*logged),
                       concat({std::to_string(*given), " (", flag, " from ", given_.source,
                               "): the log and the given layout disagree"}));
    }
    if (logged) return *logged;
    if (given) return *given;
    if (fallback) return *fallback;
    throw InputError({path_, 0}, key, "not logged",
                     concat({"pass --scenario FILE.toml or --", flag, " (the log prints no ", key, ")"}));
  }

  std::string text(const std::string& key, const std::optional<std::string>& logged,
                   const std::optional<std::string>& given, const char* flag,
                   const std::string& fallback) const {
    if (logged && given && *logged != *given) {
      throw InputError(
          {path_, args_.line_of(key)}, key, *logged,
          concat({*given, " (", flag, " from ", given_.source, "): the log and the given layout disagree"}));
    }
    return logged ? *logged : given ? *given : fallback;
  }

 private:
  const ArgumentTable& args_;
  const GivenLayout& given_;
  const std::string& path_;
};

// Every model fact the log prints must be the expected model's: a log of another model would file a row
// the refit reads as this model's.
void check_model_facts(const ArgumentTable& args, const ExpectedModel& m, const std::string& path) {
  const auto check = [&](const std::string& key, std::optional<int> logged,
                         const std::optional<int>& expected, const char* what) {
    if (!logged || !expected || *logged == *expected) return;
    throw InputError({path, args.line_of(key)}, key, std::to_string(*logged),
                     concat({std::to_string(*expected), " (", what, " of ", m.source,
                             "): the log is of another model; pass the matching --scenario or --model"}));
  };
  // Megatron-LM logs num_experts (None for a dense model); Megatron-Bridge's config num_moe_experts.
  const std::string experts_key = args.has("num_experts") ? "num_experts" : "num_moe_experts";
  const std::optional<int> experts = args.has(experts_key) ? args.integer(experts_key, 0) : std::nullopt;
  check(experts_key, experts, m.experts, "routed experts");
  const bool moe = experts.value_or(m.experts.value_or(0)) > 0;
  // A dense model's log prints the router's default top-k and FFN sizes it never uses.
  if (moe) {
    check("moe_router_topk", args.integer("moe_router_topk"), m.top_k, "experts per token");
    check("moe_ffn_hidden_size", args.integer("moe_ffn_hidden_size"), m.expert_ffn_hidden, "expert FFN size");
    check("moe_shared_expert_intermediate_size", args.integer("moe_shared_expert_intermediate_size", 0),
          m.shared_ffn_hidden, "shared-expert FFN size");
  }
  check("hidden_size", args.integer("hidden_size"), m.hidden, "hidden size");
  check("ffn_hidden_size", args.integer("ffn_hidden_size"), m.ffn_hidden, "dense FFN size");
  check("num_attention_heads", args.integer("num_attention_heads"), m.heads, "attention heads");
  check("vocab_size", args.integer("vocab_size"), m.vocab, "vocabulary");
  check("padded_vocab_size", args.integer("padded_vocab_size"), m.padded_vocab, "padded vocabulary");
}

std::string dispatcher_from(const ArgumentTable& args, const LogImportOptions& options,
                            const std::string& path) {
  const auto type = args.text("moe_token_dispatcher_type");
  if (!type) {
    if (!options.dispatcher.empty()) return options.dispatcher;
    throw InputError({path, 0}, "dispatcher", "not logged",
                     "pass --scenario FILE.toml or --dispatcher (no moe_token_dispatcher_type in the log)");
  }
  const int line = args.line_of("moe_token_dispatcher_type");
  if (*type == "alltoall") {
    if (!options.dispatcher.empty() && options.dispatcher != "nccl-alltoall") {
      throw InputError({path, line}, "moe_token_dispatcher_type", "alltoall",
                       concat({"a DeepEP dispatcher, as the given ", options.dispatcher,
                               " (the log and the given dispatcher disagree)"}));
    }
    return "nccl-alltoall";
  }
  if (*type == "flex") {
    if (options.dispatcher.empty()) {
      throw InputError(
          {path, line}, "moe_token_dispatcher_type", "\"flex\"",
          "alltoall, or pass --dispatcher (the log cannot tell which DeepEP backend served 'flex')");
    }
    if (options.dispatcher == "nccl-alltoall") {
      throw InputError({path, line}, "moe_token_dispatcher_type", "flex",
                       "alltoall, as the given nccl-alltoall (the log and the given dispatcher disagree)");
    }
    return options.dispatcher;
  }
  throw InputError({path, line}, "moe_token_dispatcher_type", concat({"\"", *type, "\""}),
                   "alltoall or flex (the dispatchers the twin models)");
}

}  // namespace

const std::vector<std::string>& live_run_columns() {
  static const std::vector<std::string> columns = {
      "campaign", "model",     "instance", "nodes",      "gpus",   "tp",         "pp",
      "vpp",      "ep",        "etp",      "dp",         "mb",     "gbs",        "seq",
      "layers",   "recompute", "overlap",  "dispatcher", "iter_s", "tflops_gpu", "source"};
  return columns;
}

ImportedRun read_megatron_log_timing(const std::string& text, const std::string& path,
                                     const LogImportOptions& options) {
  return parse_log(text, path, options).run;
}

ImportedRun import_megatron_log(const std::string& text, const std::string& path,
                                const LogImportOptions& options) {
  ParsedLog parsed = parse_log(text, path, options);
  ImportedRun& run = parsed.run;
  const ArgumentTable& args = parsed.args;
  const GivenLayout& g = options.given;
  const LayoutMerge merge(args, g, path);

  const int tp = merge.value("tensor_model_parallel_size", args.integer("tensor_model_parallel_size"), g.tp,
                             "tp", std::nullopt);
  const int pp = merge.value("pipeline_model_parallel_size", args.integer("pipeline_model_parallel_size"),
                             g.pp, "pp", std::nullopt);
  const int vpp = merge.value("virtual_pipeline_model_parallel_size",
                              args.integer("virtual_pipeline_model_parallel_size", 1), g.vpp, "vpp", 1);
  const int ep =
      merge.value("expert_model_parallel_size", args.integer("expert_model_parallel_size", 1), g.ep, "ep", 1);
  const int etp = merge.value("expert_tensor_parallel_size", args.integer("expert_tensor_parallel_size", tp),
                              g.etp, "etp", tp);
  const int cp =
      merge.value("context_parallel_size", args.integer("context_parallel_size", 1), g.cp, "cp", 1);
  // Sizes must be positive and small enough that their products stay far inside int (a garbled log can
  // say anything).
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, int>>{{"tensor_model_parallel_size", tp},
                                                {"pipeline_model_parallel_size", pp},
                                                {"virtual_pipeline_model_parallel_size", vpp},
                                                {"expert_model_parallel_size", ep},
                                                {"expert_tensor_parallel_size", etp},
                                                {"context_parallel_size", cp}}) {
    if (value < 1 || value > 4096)
      throw InputError({path, args.line_of(key)}, key, std::to_string(value), "an integer in [1, 4096]");
  }
  int world = args.integer("world_size").value_or(0);
  std::optional<int> logged_dp = args.integer("data_parallel_size");
  if (world < 0 || world > (1 << 20))
    throw InputError({path, args.line_of("world_size")}, "world_size", std::to_string(world),
                     "in [1, 1048576]");
  if (logged_dp && (*logged_dp < 1 || *logged_dp > (1 << 20)))
    throw InputError({path, args.line_of("data_parallel_size")}, "data_parallel_size",
                     std::to_string(*logged_dp), "in [1, 1048576]");
  const long long model_parallel = static_cast<long long>(tp) * pp * cp;
  if (model_parallel > (1 << 20))
    throw InputError({path, 0}, "tensor x pipeline x context parallel size", std::to_string(model_parallel),
                     "at most 1048576 GPUs");
  if (logged_dp && world > 0 && static_cast<long long>(*logged_dp) * model_parallel != world) {
    throw InputError(
        {path, args.line_of("world_size")}, "world_size", std::to_string(world),
        concat({"tp x pp x cp x dp = ", std::to_string(model_parallel * *logged_dp), " (data_parallel_size ",
                std::to_string(*logged_dp), " at line ", std::to_string(args.line_of("data_parallel_size")),
                "): the logged sizes contradict each other"}));
  }
  if (!logged_dp && world > 0) {
    if (world % model_parallel != 0)
      throw InputError({path, args.line_of("world_size")}, "world_size", std::to_string(world),
                       concat({"a multiple of tp x pp x cp = ", std::to_string(model_parallel)}));
    logged_dp = static_cast<int>(world / model_parallel);
  }
  const int dp = merge.value("data_parallel_size", logged_dp, g.dp, "dp", std::nullopt);
  if (dp < 1 || dp > (1 << 20) || model_parallel * dp > (1 << 20))
    throw InputError({path, 0}, "data_parallel_size", std::to_string(dp),
                     "a world size of at most 1048576 GPUs");
  if (world == 0) world = static_cast<int>(model_parallel * dp);
  const int nodes = options.nodes > 0 ? options.nodes : world / std::max(1, options.gpus_per_node);
  if (nodes * options.gpus_per_node != world && options.nodes == 0) {
    throw InputError({path, args.line_of("world_size")}, "world_size", std::to_string(world),
                     concat({"a multiple of the GPUs per node (", std::to_string(options.gpus_per_node),
                             "), or pass --nodes"}));
  }
  const int mb = merge.value("micro_batch_size", args.integer("micro_batch_size"), g.mb, "mb", std::nullopt);
  const int gbs =
      merge.value("global_batch_size", args.integer("global_batch_size"), g.gbs, "gbs", std::nullopt);
  const int seq = merge.value("seq_length", args.integer("seq_length"), g.seq, "seq", std::nullopt);
  const int layers = merge.value("num_layers", args.integer("num_layers"), g.layers, "layers", std::nullopt);

  std::optional<std::string> logged_recompute = args.text("recompute_granularity");
  if (logged_recompute && *logged_recompute == "None") logged_recompute = "none";
  const std::string recompute =
      merge.text("recompute_granularity", logged_recompute, g.recompute, "recompute", "none");
  if (recompute != "none" && recompute != "selective" && recompute != "full") {
    throw InputError({path, args.line_of("recompute_granularity")}, "recompute_granularity", recompute,
                     "None, selective or full");
  }
  std::optional<std::string> logged_overlap = args.text("overlap_moe_expert_parallel_comm");
  if (logged_overlap && *logged_overlap != "True" && *logged_overlap != "False") {
    throw InputError({path, args.line_of("overlap_moe_expert_parallel_comm")},
                     "overlap_moe_expert_parallel_comm", *logged_overlap, "True or False");
  }
  std::optional<std::string> given_overlap;
  if (g.overlap) given_overlap = *g.overlap ? "True" : "False";
  const std::string overlap =
      merge.text("overlap_moe_expert_parallel_comm", logged_overlap, given_overlap, "overlap", "False");
  check_model_facts(args, options.model_facts, path);
  const std::string dispatcher = dispatcher_from(args, options, path);
  if (options.model.empty())
    throw InputError({path, 0}, "model", "not logged",
                     "pass --scenario FILE.toml or --model (a catalog model name)");
  if (options.instance.empty())
    throw InputError({path, 0}, "instance", "not logged",
                     "pass --scenario FILE.toml or --instance (a catalog instance)");
  const std::string campaign =
      options.campaign.empty() ? std::filesystem::path(path).stem().string() : options.campaign;

  run.header = live_run_columns();
  run.row = {campaign,
             options.model,
             options.instance,
             std::to_string(nodes),
             std::to_string(world),
             std::to_string(tp),
             std::to_string(pp),
             std::to_string(vpp),
             std::to_string(ep),
             std::to_string(etp),
             std::to_string(dp),
             std::to_string(mb),
             std::to_string(gbs),
             std::to_string(seq),
             std::to_string(layers),
             recompute,
             overlap == "True" ? "on" : "off",
             dispatcher,
             format_fixed(run.median_iter_s, 4),
             format_fixed(run.median_tflops_gpu, 1),
             path};
  return std::move(run);
}

}  // namespace moetwin
