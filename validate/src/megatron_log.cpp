#include "moetwin/validate/megatron_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <sstream>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin {
namespace {

// Markers of the two iteration-line formats (Megatron-LM training_log; Megatron-Bridge step timing).
constexpr std::string_view kLmElapsed = "elapsed time per iteration (ms):";
constexpr std::string_view kLmThroughput = "throughput per GPU (TFLOP/s/GPU):";
constexpr std::string_view kBridgeStep = "Step Time :";
constexpr std::string_view kBridgeUtil = "GPU utilization:";
constexpr std::string_view kBridgeUnit = "MODEL_TFLOP/s/GPU";

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Parses a non-negative decimal number at the start of `s` (after spaces). Returns the characters used.
std::optional<double> leading_number(std::string_view s, std::size_t* used = nullptr) {
  const std::string_view t = skip_spaces(s);
  double value = 0;
  const auto res = std::from_chars(t.data(), t.data() + t.size(), value);
  if (res.ec != std::errc() || !(value >= 0) || value > 1e12) return std::nullopt;
  if (used) *used = static_cast<std::size_t>(res.ptr - s.data());
  return value;
}

// Value after `marker` in `line`; nullopt if the marker is absent. Throws if present but not a number.
std::optional<double> number_after(std::string_view line, std::string_view marker, const InputLocation& where,
                                   const std::string& what) {
  const auto pos = line.find(marker);
  if (pos == std::string_view::npos) return std::nullopt;
  const std::string_view rest = line.substr(pos + marker.size());
  auto v = leading_number(rest);
  if (!v) {
    const std::string shown(skip_spaces(rest).substr(0, 20));
    throw InputError(where, what, "\"" + shown + "\"", "a non-negative number (garbled or truncated line)");
  }
  return v;
}

// An iteration time read from `line` (seconds): it must be positive. A zero ("elapsed time per
// iteration (ms): 0" in a garbled line) would otherwise enter the mean as a real iteration.
double positive_iteration_s(double seconds, const InputLocation& where, const std::string& what,
                            double shown_value) {
  if (!(seconds > 0)) {
    throw InputError(where, what, format_exact(shown_value),
                     "a positive time (no iteration takes 0; garbled or truncated line)");
  }
  return seconds;
}

// Megatron-LM prints "iteration      10/    1000 |": the iteration number, or nullopt.
std::optional<int> iteration_number(std::string_view line) {
  const auto pos = line.find("iteration ");
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = skip_spaces(line.substr(pos + 10));
  int value = 0;
  const auto res = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (res.ec != std::errc() || res.ptr == rest.data() + rest.size() || *res.ptr != '/') return std::nullopt;
  return value;
}

// "  tensor_model_parallel_size ...................... 8" -> (key, value).
std::optional<std::pair<std::string, std::string>> argument_line(std::string_view line) {
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
  std::string value(skip_spaces(line.substr(p)));
  while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
  return std::make_pair(std::string(line.substr(key_begin, key_end - key_begin)), value);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

class ArgumentTable {
 public:
  ArgumentTable(std::string path) : path_(std::move(path)) {}

  void add(const std::string& key, const std::string& value, int line) {
    auto it = values_.find(key);
    if (it != values_.end() && it->second.first != value) {
      throw InputError({path_, line}, key, value,
                       "the value logged earlier at line " + std::to_string(it->second.second) + " (\"" +
                           it->second.first + "\"): contradictory arguments in one log");
    }
    values_.emplace(key, std::make_pair(value, line));
  }

  // Integer argument, absent or None -> nullopt.
  std::optional<int> integer(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end() || it->second.first == "None") return std::nullopt;
    const std::string& s = it->second.first;
    int v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (res.ec != std::errc() || res.ptr != s.data() + s.size() || v < 0) {
      throw InputError({path_, it->second.second}, key, "\"" + s + "\"", "a non-negative integer or None");
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

std::string dispatcher_from(const ArgumentTable& args, const LogImportOptions& options,
                            const std::string& path) {
  if (!options.dispatcher.empty()) return options.dispatcher;
  const auto type = args.text("moe_token_dispatcher_type");
  if (!type)
    throw InputError({path, 0}, "dispatcher", "not logged",
                     "pass --dispatcher (no moe_token_dispatcher_type argument in the log)");
  if (*type == "alltoall") return "nccl-alltoall";
  throw InputError({path, args.line_of("moe_token_dispatcher_type")}, "moe_token_dispatcher_type",
                   "\"" + *type + "\"",
                   "alltoall, or pass --dispatcher (the log cannot tell which DeepEP backend served 'flex')");
}

}  // namespace

const std::vector<std::string>& live_run_columns() {
  static const std::vector<std::string> columns = {
      "campaign", "model",     "instance", "nodes",      "gpus",   "tp",         "pp",
      "vpp",      "ep",        "etp",      "dp",         "mb",     "gbs",        "seq",
      "layers",   "recompute", "overlap",  "dispatcher", "iter_s", "tflops_gpu", "source"};
  return columns;
}

ImportedRun import_megatron_log(const std::string& text, const std::string& path,
                                const LogImportOptions& options) {
  ImportedRun run;
  run.source = path;
  ArgumentTable args(path);
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  int bridge_ordinal = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const InputLocation where{path, line_no};
    if (auto kv = argument_line(line)) {
      args.add(kv->first, kv->second, line_no);
      continue;
    }
    if (line.find(kLmElapsed) != std::string::npos) {
      IterationSample s;
      s.line = line_no;
      const auto it = iteration_number(line);
      if (!it)
        throw InputError(where, "iteration", "missing", "\"iteration N/ M |\" before the elapsed time");
      s.iteration = *it;
      const double ms = *number_after(line, kLmElapsed, where, "elapsed time per iteration (ms)");
      s.iter_s = positive_iteration_s(ms / 1000.0, where, "elapsed time per iteration (ms)", ms);
      s.tflops_gpu = number_after(line, kLmThroughput, where, "throughput per GPU (TFLOP/s/GPU)").value_or(0);
      run.samples.push_back(s);
      continue;
    }
    if (line.find(kBridgeStep) != std::string::npos) {
      IterationSample s;
      s.line = line_no;
      s.iteration = ++bridge_ordinal;
      const double step_s = *number_after(line, kBridgeStep, where, "Step Time");
      s.iter_s = positive_iteration_s(step_s, where, "Step Time", step_s);
      if (line.find(kBridgeUtil) != std::string::npos) {
        s.tflops_gpu = *number_after(line, kBridgeUtil, where, "GPU utilization");
        if (line.find(kBridgeUnit) == std::string::npos) {
          throw InputError(where, "GPU utilization", "no unit",
                           "a value followed by MODEL_TFLOP/s/GPU (truncated line)");
        }
      }
      run.samples.push_back(s);
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
  if (run.samples.empty()) {
    throw InputError({path, 0},
                     "no iteration lines (expected Megatron-LM 'elapsed time per iteration (ms)' or "
                     "Megatron-Bridge 'Step Time :' lines)");
  }
  const int skip = std::max(0, options.skip_first);
  if (static_cast<int>(run.samples.size()) <= skip) {
    throw InputError({path, run.samples.back().line}, "iterations", std::to_string(run.samples.size()),
                     "more than the " + std::to_string(skip) + " warm-up iterations dropped (--skip-first)");
  }
  std::vector<double> times, tflops;
  for (std::size_t i = static_cast<std::size_t>(skip); i < run.samples.size(); ++i) {
    times.push_back(run.samples[i].iter_s);
    if (run.samples[i].tflops_gpu > 0) tflops.push_back(run.samples[i].tflops_gpu);
  }
  run.steady_count = static_cast<int>(times.size());
  run.mean_iter_s = mean_of(times);
  run.median_iter_s = median_of(times);
  if (!tflops.empty()) {
    run.mean_tflops_gpu = mean_of(tflops);
    run.median_tflops_gpu = median_of(tflops);
  }
  for (std::size_t i = static_cast<std::size_t>(skip); i < run.samples.size(); ++i) {
    if (run.samples[i].iter_s > options.stall_factor * run.median_iter_s)
      run.stalls.push_back(run.samples[i]);
  }

  // Layout from the logged arguments, with the options overriding.
  auto need = [&](const std::string& key, const std::string& flag) -> int {
    if (auto v = args.integer(key)) return *v;
    throw InputError({path, 0}, key, "not logged",
                     "the argument in the log's argument dump, or pass " + flag);
  };
  const int tp = need("tensor_model_parallel_size", "a log with arguments");
  const int pp = need("pipeline_model_parallel_size", "a log with arguments");
  const int vpp = args.integer("virtual_pipeline_model_parallel_size").value_or(1);
  const int ep = args.integer("expert_model_parallel_size").value_or(1);
  const int etp = args.integer("expert_tensor_parallel_size").value_or(tp);
  const int cp = args.integer("context_parallel_size").value_or(1);
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
  int dp = args.integer("data_parallel_size").value_or(0);
  if (world < 0 || world > (1 << 20))
    throw InputError({path, args.line_of("world_size")}, "world_size", std::to_string(world),
                     "in [1, 1048576]");
  if (dp < 0 || dp > (1 << 20))
    throw InputError({path, args.line_of("data_parallel_size")}, "data_parallel_size", std::to_string(dp),
                     "in [1, 1048576]");
  if (static_cast<long long>(tp) * pp * cp > (1 << 20))
    throw InputError({path, 0}, "tensor x pipeline x context parallel size",
                     std::to_string(static_cast<long long>(tp) * pp * cp), "at most 1048576 GPUs");
  if (dp == 0 && world > 0) dp = world / (tp * pp * cp);
  if (dp == 0)
    throw InputError({path, 0}, "data_parallel_size", "not logged",
                     "data_parallel_size or world_size in the log");
  if (world == 0) world = tp * pp * cp * dp;
  const int nodes = options.nodes > 0 ? options.nodes : world / std::max(1, options.gpus_per_node);
  if (nodes * options.gpus_per_node != world && options.nodes == 0) {
    throw InputError({path, args.line_of("world_size")}, "world_size", std::to_string(world),
                     "a multiple of --gpus-per-node (" + std::to_string(options.gpus_per_node) + ")");
  }
  const int mb = need("micro_batch_size", "a log with arguments");
  const int gbs = need("global_batch_size", "a log with arguments");
  const int seq = need("seq_length", "a log with arguments");
  const int layers = need("num_layers", "a log with arguments");
  std::string recompute = args.text("recompute_granularity").value_or("None");
  if (recompute == "None") recompute = "none";
  if (recompute != "none" && recompute != "selective" && recompute != "full") {
    throw InputError({path, args.line_of("recompute_granularity")}, "recompute_granularity", recompute,
                     "None, selective or full");
  }
  const std::string overlap_text = args.text("overlap_moe_expert_parallel_comm").value_or("False");
  if (overlap_text != "True" && overlap_text != "False") {
    throw InputError({path, args.line_of("overlap_moe_expert_parallel_comm")},
                     "overlap_moe_expert_parallel_comm", overlap_text, "True or False");
  }
  if (options.model.empty())
    throw InputError({path, 0}, "model", "not logged", "pass --model (a catalog model name)");
  if (options.instance.empty())
    throw InputError({path, 0}, "instance", "not logged", "pass --instance (a catalog instance)");
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
             overlap_text == "True" ? "on" : "off",
             dispatcher_from(args, options, path),
             format_fixed(run.mean_iter_s, 4),
             format_fixed(run.mean_tflops_gpu, 1),
             path};
  return run;
}

}  // namespace moetwin
