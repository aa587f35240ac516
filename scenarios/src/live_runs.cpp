// Live-run records (shared/data/live-runs.csv schema) -> LiveRun: every row is a full scenario, checked by
// the same rules as a scenario file, with the CSV column as the key in messages.
#include "moetwin/scenario/live_runs.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "scenario_rules.hpp"

namespace moetwin {
namespace {

using detail::Field;

constexpr double kMinLoggedTflops = 1e-3;  // TFLOP/s per GPU: 1 GFLOP/s

// The columns that do not name the cell: the measurement and where it was read.
bool is_measurement(const std::string& column) {
  return column == "iter_s" || column == "tflops_gpu" || column == "source";
}

// Two rows of one cell (campaign, model, layout, dispatcher, ...: every column but the measurement) would
// both be scored, as if the run were measured twice: with different times one of them is wrong and no
// command can tell which (an error naming both lines); with the same time a copied row (a warning on the
// second one, which is still read).
// `across_files`: only pairs from different files (each file was checked on its own already).
void check_duplicate_rows(LiveRunTable& table, bool across_files = false) {
  std::map<std::vector<std::string>, std::size_t> first;  // cell -> index of its first run
  for (std::size_t i = 0; i < table.runs.size(); ++i) {
    LiveRun& run = table.runs[i];
    std::vector<std::string> key;
    for (std::size_t c = 0; c < table.header.size(); ++c) {
      if (!is_measurement(table.header[c])) key.push_back(run.row.fields[c]);
    }
    const auto [it, inserted] = first.emplace(std::move(key), i);
    if (inserted) continue;
    const LiveRun& earlier = table.runs[it->second];
    const auto colon = run.scenario.source.rfind(':');
    if (across_files && earlier.scenario.source.substr(0, earlier.scenario.source.rfind(':')) ==
                            run.scenario.source.substr(0, colon))
      continue;
    if (earlier.iter_s != run.iter_s) {
      throw InputError({run.scenario.source.substr(0, colon), run.row.line}, "iter_s",
                       format_exact(run.iter_s),
                       concat({"one measurement per cell: ", earlier.scenario.source,
                               " has the same campaign, layout and dispatcher with iter_s ",
                               format_exact(earlier.iter_s), " (remove or relabel one of them)"}));
    }
    run.warnings.push_back(concat({run.scenario.source, ": duplicate of ", earlier.scenario.source,
                                   " (same cell and iter_s): both rows are scored"}));
  }
}

const char* const kRequired[] = {"campaign",  "model",   "instance",   "nodes",  "gpus",
                                 "tp",        "pp",      "vpp",        "ep",     "etp",
                                 "dp",        "mb",      "gbs",        "seq",    "layers",
                                 "recompute", "overlap", "dispatcher", "iter_s", "tflops_gpu"};
const char* const kOptional[] = {"cp",          "source", "seed",
                                 "precision",   "stack",  "nccl_max_nchannels",
                                 "cuda_graphs", "fsdp",   "cpu_offload_layers"};

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> out;
  for (const auto& [k, _] : map) out.push_back(k);
  return out;
}

void check_header(const CsvTable& table) {
  for (const char* column : kRequired) table.column(column);  // throws naming the missing column
  std::set<std::string> known(std::begin(kRequired), std::end(kRequired));
  known.insert(std::begin(kOptional), std::end(kOptional));
  for (const std::string& h : table.header) {
    if (!known.count(h)) {
      std::string list;
      for (const char* c : kRequired) list += (list.empty() ? "" : ", ") + std::string(c);
      for (const char* c : kOptional) list += ", " + std::string(c);
      throw InputError({table.path, 0}, "header", h, "a live-run column: one of " + list);
    }
  }
}

LiveRun parse_row(const CsvTable& table, const CsvRow& row, const Catalog& catalog) {
  const CsvRowReader r(table, row);
  LiveRun run;
  run.row = row;
  run.campaign = r.text("campaign");
  if (run.campaign.empty()) r.fail("campaign", "a non-empty campaign name");

  Scenario& s = run.scenario;
  s.model = catalog.model(r.choice("model", names_of(catalog.models())));
  s.instance = catalog.instance(r.choice("instance", names_of(catalog.instances())));
  s.gpu = catalog.gpu(s.instance.gpu);
  s.nodes = r.int32("nodes", 1, 100000);
  const int gpus = r.int32("gpus", 1, 1 << 30);
  if (gpus != s.nodes * s.instance.gpus) {
    r.fail("gpus", "nodes * GPUs per node = " + std::to_string(s.nodes) + " * " +
                       std::to_string(s.instance.gpus) + " = " + std::to_string(s.nodes * s.instance.gpus) +
                       " (" + s.instance.name + ")");
  }
  constexpr int kMaxParallel = 1 << 20;
  ParallelLayout& p = s.parallel;
  p.tp = r.int32("tp", 1, kMaxParallel);
  p.pp = r.int32("pp", 1, kMaxParallel);
  p.vpp = r.int32("vpp", 1, kMaxParallel);
  p.ep = r.int32("ep", 1, kMaxParallel);
  p.etp = r.int32("etp", 1, kMaxParallel);
  p.dp = r.int32("dp", 1, kMaxParallel);
  p.cp = r.has("cp") ? r.int32("cp", 1, kMaxParallel) : 1;
  // dp is derived in Megatron (world / (tp * cp * pp)); repair a contradicting dp loudly, never silently.
  const long long model_parallel = static_cast<long long>(p.tp) * p.cp * p.pp;
  if (static_cast<long long>(p.dp) * model_parallel != gpus && gpus % model_parallel == 0) {
    const int derived = static_cast<int>(gpus / model_parallel);
    run.warnings.push_back(table.path + ":" + std::to_string(row.line) + ": dp: " + std::to_string(p.dp) +
                           ": contradicts gpus / (tp * cp * pp) = " + std::to_string(gpus) + " / " +
                           std::to_string(model_parallel) + "; using dp = " + std::to_string(derived));
    p.dp = derived;
  }

  TrainingConfig& t = s.training;
  t.micro_batch = r.int32("mb", 1, 1 << 20);
  t.global_batch = r.int32("gbs", 1, 1 << 30);
  t.seq_length = r.int32("seq", 1, 1 << 24);
  s.model.layers = r.int32("layers", 1, 10000);
  const std::string recompute = r.choice("recompute", {"none", "selective", "full"});
  t.recompute = recompute == "full"        ? Recompute::full
                : recompute == "selective" ? Recompute::selective
                                           : Recompute::none;
  t.overlap_moe_a2a = r.choice("overlap", {"on", "off"}) == "on";
  if (r.has("cuda_graphs") && !r.text("cuda_graphs").empty())
    t.cuda_graphs = *cuda_graphs_from_string(r.choice("cuda_graphs", cuda_graphs_names()));
  if (r.has("fsdp") && !r.text("fsdp").empty()) t.megatron_fsdp = r.int32("fsdp", 0, 1) == 1;
  if (r.has("cpu_offload_layers") && !r.text("cpu_offload_layers").empty())
    t.cpu_offload_layers = r.int32("cpu_offload_layers", 0, 10000);
  s.dispatcher = catalog.dispatcher(r.choice("dispatcher", names_of(catalog.dispatchers())));
  s.routing.kind = RoutingKind::balanced;  // the campaigns forced load balancing
  s.routing.seed =
      r.has("seed")
          ? static_cast<std::uint64_t>(r.integer("seed", 0, std::numeric_limits<std::int64_t>::max()))
          : 1;

  // Bounds only reject nonsense: 1 ns .. ~30 years per iteration, 0 .. 1e9 TFLOP/s per GPU.
  run.iter_s = r.number("iter_s", 1e-9, 1e9, "a positive number of seconds (mean iteration time)");
  run.tflops_gpu = r.number("tflops_gpu", 0, 1e9, "a number >= 0 (logged model TFLOP/s per GPU)");
  // Below 1 GFLOP/s per GPU no training run logs anything: such a value is a garbled cell, and its ratio to
  // the model's FLOPs would overflow (1e-320 printed as inf). 0 still means "not logged".
  if (run.tflops_gpu > 0 && run.tflops_gpu < kMinLoggedTflops)
    r.fail("tflops_gpu", "0 (not logged) or at least 0.001 TFLOP/s per GPU");
  run.source = r.has("source") ? r.text("source") : "";

  t.precision = Precision::bf16;
  if (r.has("precision")) {
    const std::optional<Precision> read = precision_from_string(r.text("precision"));
    if (!read) r.fail("precision", precision_expected(r.text("precision")));
    t.precision = *read;
  }
  // The row's stack: its `stack` column, else the stack whose campaigns list it, else the default.
  const StackSpec* stack = nullptr;
  if (r.has("stack") && !r.text("stack").empty()) {
    stack = &catalog.stack(r.choice("stack", names_of(catalog.stacks())));
  } else {
    stack = catalog.stack_of_campaign(run.campaign);
  }
  NcclKnobs knobs;
  if (r.has("nccl_max_nchannels") && r.text("nccl_max_nchannels") != "unset" &&
      !r.text("nccl_max_nchannels").empty()) {
    knobs.max_nchannels = r.int32("nccl_max_nchannels", 1, 64);
  }
  s.stack = make_stack_choice(stack != nullptr ? *stack : catalog.default_stack(), knobs, s.instance,
                              stack == nullptr);
  t.moe_pad_to_capacity = s.stack.spec.alltoall_pad_to_capacity;

  s.name = run.campaign + "/mb" + std::to_string(t.micro_batch) + "/" + s.dispatcher.name +
           (t.overlap_moe_a2a ? "/overlap" : "") +
           (knobs.max_nchannels > 0 ? concat({"/nch", std::to_string(knobs.max_nchannels)}) : std::string());
  s.source = table.path + ":" + std::to_string(row.line);

  detail::FieldNames names;
  names.csv = true;
  names.fallback = r.where();
  detail::check_scenario_rules(s, names);
  return run;
}

}  // namespace

LiveRunTable parse_live_runs(const CsvTable& table, const Catalog& catalog) {
  check_header(table);
  LiveRunTable out;
  out.header = table.header;
  out.runs.reserve(table.rows.size());
  for (const CsvRow& row : table.rows) out.runs.push_back(parse_row(table, row, catalog));
  check_duplicate_rows(out);
  return out;
}

LiveRunTable read_live_runs(const std::string& path, const Catalog& catalog) {
  return parse_live_runs(read_csv_file(path), catalog);
}

LiveRunTable read_live_runs(const std::vector<std::string>& paths, const Catalog& catalog) {
  if (paths.size() == 1) return read_live_runs(paths.front(), catalog);
  LiveRunTable out;
  std::vector<LiveRunTable> tables;
  for (const std::string& path : paths) {
    tables.push_back(read_live_runs(path, catalog));
    for (const std::string& h : tables.back().header) {
      if (std::find(out.header.begin(), out.header.end(), h) == out.header.end()) out.header.push_back(h);
    }
  }
  // Every row re-laid on the union of the headers; a column a file lacks is empty in its rows.
  for (LiveRunTable& t : tables) {
    for (LiveRun& run : t.runs) {
      std::vector<std::string> fields(out.header.size());
      for (std::size_t i = 0; i < t.header.size(); ++i) {
        const auto at = std::find(out.header.begin(), out.header.end(), t.header[i]) - out.header.begin();
        fields[static_cast<std::size_t>(at)] = run.row.fields[i];
      }
      run.row.fields = std::move(fields);
      out.runs.push_back(std::move(run));
    }
  }
  check_duplicate_rows(out, true);
  return out;
}

}  // namespace moetwin
