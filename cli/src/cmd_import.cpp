// `moetwin import megatron-log LOG...`: Megatron-LM / Megatron-Bridge / NeMo 2.0 logs -> live-run CSV rows.
// A scenario (or layout flags) supplies what the log does not print; what it prints is checked against it.
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/validate/logged_flops.hpp"
#include "moetwin/validate/megatron_log.hpp"

namespace moetwin::cli {

namespace {

struct ImportLogOptions {
  std::vector<std::string> logs;
  LogImportOptions import;
  std::string scenario;
  std::string out;
  // Layout flags (0 / empty = not given).
  int tp = 0, pp = 0, vpp = 0, ep = 0, etp = 0, cp = 0, dp = 0, mb = 0, gbs = 0, seq = 0, layers = 0;
  std::string recompute, overlap;
  int gpus_per_node = 0;  // 0 = the instance's (8 without an instance)
};

// The facts of `m` a Megatron log prints. The dense FFN size only where the model has dense layers (an
// all-MoE model's ffn_hidden_size is unused and configs set it freely); the padded vocabulary only with a
// known tp (Megatron pads to make_vocab_size_divisible_by x tp).
ExpectedModel expected_model(const ModelSpec& m, std::optional<int> tp) {
  ExpectedModel e;
  e.experts = m.experts;
  if (m.experts > 0) {
    e.top_k = m.top_k;
    e.expert_ffn_hidden = m.expert_ffn_hidden;
    e.shared_ffn_hidden = m.shared_ffn_hidden;
  }
  e.hidden = m.hidden;
  if (m.experts == 0 || m.dense_layers > 0) e.ffn_hidden = m.ffn_hidden;
  e.heads = m.heads;
  e.vocab = m.vocab;
  if (tp && *tp > 0 && m.vocab_pad_multiple > 0) {
    const long long multiple = static_cast<long long>(m.vocab_pad_multiple) * *tp;
    e.padded_vocab = static_cast<int>((m.vocab + multiple - 1) / multiple * multiple);
  }
  return e;
}

std::optional<int> given(int v) {
  return v > 0 ? std::optional<int>(v) : std::nullopt;
}

// Fills options.import from the scenario, then the flags (a flag that contradicts the scenario is an error),
// and checks model, instance and dispatcher names against the catalog.
LogImportOptions resolve(const ImportLogOptions& o, const Catalog& catalog) {
  LogImportOptions r = o.import;
  GivenLayout& g = r.given;
  std::optional<ModelSpec> scenario_model;  // the scenario's model (its layers may differ from the catalog's)
  if (!o.scenario.empty()) {
    const Scenario s = load_scenario_file(o.scenario, catalog);
    scenario_model = s.model;
    g.source = concat({"scenario ", o.scenario});
    const auto set_text = [&](std::string& field, const std::string& value, const char* flag) {
      if (!field.empty() && field != value)
        throw InputError({o.scenario, 0}, flag, field,
                         concat({value, " as in the scenario (or drop --", flag, ")"}));
      field = value;
    };
    set_text(r.model, s.model.name, "model");
    set_text(r.instance, s.instance.name, "instance");
    set_text(r.dispatcher, s.dispatcher.name, "dispatcher");
    if (r.nodes == 0) r.nodes = s.nodes;
    g.tp = s.parallel.tp;
    g.pp = s.parallel.pp;
    g.vpp = s.parallel.vpp;
    g.ep = s.parallel.ep;
    g.etp = s.parallel.etp;
    g.cp = s.parallel.cp;
    g.dp = s.parallel.dp;
    g.mb = s.training.micro_batch;
    g.gbs = s.training.global_batch;
    g.seq = s.training.seq_length;
    g.layers = s.model.layers;
    g.recompute = to_string(s.training.recompute);
    g.overlap = s.training.overlap_moe_a2a;
  }
  const std::tuple<const char*, std::optional<int>*, int> flags[] = {{"--tp", &g.tp, o.tp},
                                                                     {"--pp", &g.pp, o.pp},
                                                                     {"--vpp", &g.vpp, o.vpp},
                                                                     {"--ep", &g.ep, o.ep},
                                                                     {"--etp", &g.etp, o.etp},
                                                                     {"--cp", &g.cp, o.cp},
                                                                     {"--dp", &g.dp, o.dp},
                                                                     {"--mb", &g.mb, o.mb},
                                                                     {"--gbs", &g.gbs, o.gbs},
                                                                     {"--seq", &g.seq, o.seq},
                                                                     {"--layers", &g.layers, o.layers}};
  bool any_flag = false;
  for (const auto& [flag, field, value] : flags) {
    if (!given(value)) continue;
    if (*field && **field != value)
      throw InputError({o.scenario, 0}, flag, std::to_string(value),
                       concat({std::to_string(**field), " as in the scenario (or drop the flag)"}));
    *field = value;
    any_flag = true;
  }
  if (!o.recompute.empty()) g.recompute = o.recompute, any_flag = true;
  if (!o.overlap.empty()) g.overlap = o.overlap == "on", any_flag = true;
  if (o.scenario.empty() && any_flag) g.source = "the layout flags";
  // Names the twin cannot resolve are refused here, not at the first prediction.
  if (!r.model.empty()) {
    r.model_facts = expected_model(scenario_model ? *scenario_model : catalog.model(r.model), g.tp);
    r.model_facts.source = scenario_model ? concat({"model ", r.model, " (scenario ", o.scenario, ")"})
                                          : concat({"model ", r.model});
  }
  r.gpus_per_node = o.gpus_per_node > 0 ? o.gpus_per_node : 8;
  if (!r.instance.empty()) {
    const InstanceSpec& inst = catalog.instance(r.instance);
    if (o.gpus_per_node == 0) r.gpus_per_node = inst.gpus;
  }
  if (!r.dispatcher.empty()) catalog.dispatcher(r.dispatcher);
  return r;
}

void print_summary(const ImportedRun& run) {
  std::cerr << run.source << ": " << run.samples.size() << " iterations, " << run.warmup_dropped
            << " dropped as warm-up" << (run.warmup_auto ? " (automatic)" : " (--skip-first)") << ", "
            << run.steady_count << " steady: median " << format_fixed(run.median_iter_s, 4) << " s, mean "
            << format_fixed(run.mean_iter_s, 4) << " s, p10 " << format_fixed(run.p10_iter_s, 4) << " s, p90 "
            << format_fixed(run.p90_iter_s, 4) << " s, " << run.stalls.size() << " stall"
            << (run.stalls.size() == 1 ? "" : "s");
  if (run.median_tflops_gpu > 0)
    std::cerr << "; median " << format_fixed(run.median_tflops_gpu, 1) << " TFLOP/s/GPU";
  std::cerr << '\n';
  for (const auto& note : run.notes) std::cerr << run.source << ": note: " << note << '\n';
  for (const auto& warning : run.warnings) std::cerr << "warning: " << warning << '\n';
  for (const auto& stall : run.stalls) {
    std::cerr << run.source << ":" << stall.line << ": stall: iteration " << stall.iteration << " took "
              << format_fixed(stall.iter_s, 3) << " s (median " << format_fixed(run.median_iter_s, 3)
              << " s)\n";
  }
}

// The check `validate` makes of a row's logged TFLOP/s against its iteration time and the model's FLOPs
// (logged_flops.hpp), made at import already, at the log's first steady iteration: a log whose TFLOP/s is
// 10x what its time implies was imported without a word (issue 55 item 5).
void warn_logged_flops(const ImportedRun& run, const Catalog& catalog) {
  std::ostringstream one;
  write_csv_line(one, live_run_columns());
  write_csv_line(one, run.row);
  LiveRunTable table;
  try {
    table = parse_live_runs(parse_csv(one.str(), run.source), catalog);
  } catch (const InputError&) {
    return;  // a row `validate` would refuse anyway says so there, with its column
  }
  const int line = run.samples.at(static_cast<std::size_t>(run.warmup_dropped)).line;
  for (const std::string& w : logged_flops_mismatches(table)) {
    const std::size_t at = w.find(": tflops_gpu: ");
    std::cerr << "warning: " << run.source << ":" << line
              << ": median logged tflops_gpu: " << (at == std::string::npos ? w : w.substr(at + 14)) << '\n';
  }
}

}  // namespace

void add_import_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* import =
      app.add_subcommand("import", "Import measurements users already have into moetwin's formats");
  import->require_subcommand(1);
  CLI::App* log = import->add_subcommand(
      "megatron-log",
      "Megatron-LM / Megatron-Bridge / NeMo 2.0 training logs -> live-run CSV rows (one per log)");
  auto opts = std::make_shared<ImportLogOptions>();
  log->add_option("LOG", opts->logs, "Training log files")->required()->check(CLI::ExistingFile);
  log->add_option(
         "--scenario", opts->scenario,
         "Scenario TOML supplying model, instance, nodes, layout and dispatcher the log does not print "
         "(what it prints is checked against it)")
      ->check(CLI::ExistingFile);
  log->add_option("--model", opts->import.model, "Catalog model name (logs do not carry it)");
  log->add_option("--instance", opts->import.instance, "Catalog instance type (logs do not carry it)");
  log->add_option("--campaign", opts->import.campaign, "Campaign name (default: the log file's stem)");
  log->add_option(
      "--dispatcher", opts->import.dispatcher,
      "nccl-alltoall | deepep-uccl | deepep-nvshmem | deepep-v2-gin (needed for the 'flex' dispatcher)");
  log->add_option("--nodes", opts->import.nodes, "Node count (default: world size / GPUs per node)");
  log->add_option("--gpus-per-node", opts->gpus_per_node, "GPUs per node (default: the instance's)")
      ->check(CLI::Range(1, 64));
  const std::pair<const char*, int*> layout[] = {
      {"--tp", &opts->tp},   {"--pp", &opts->pp},   {"--vpp", &opts->vpp},      {"--ep", &opts->ep},
      {"--etp", &opts->etp}, {"--cp", &opts->cp},   {"--dp", &opts->dp},        {"--mb", &opts->mb},
      {"--gbs", &opts->gbs}, {"--seq", &opts->seq}, {"--layers", &opts->layers}};
  for (const auto& [flag, field] : layout) {
    log->add_option(flag, *field,
                    "Layout value the log does not print (checked against the log where it does)")
        ->check(CLI::Range(1, 1 << 20));
  }
  log->add_option("--recompute", opts->recompute, "none | selective | full (when the log does not print it)")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  log->add_option("--overlap", opts->overlap, "on | off: overlap_moe_expert_parallel_comm (when not logged)")
      ->check(CLI::IsMember({"on", "off"}));
  log->add_option("--skip-first", opts->import.skip_first,
                  "Warm-up iterations to drop (each iteration counted once; default: the leading iterations "
                  "slower than 1.05x the median of the log's second half)")
      ->check(CLI::Range(0, 100000));
  log->add_option("--stall-factor", opts->import.stall_factor,
                  "Report iterations above this x median as stalls")
      ->check(CLI::Range(1.0, 1000.0));
  log->add_option("--out", opts->out, "Output CSV (default stdout); written only if every log imports");
  log->callback([opts, &global] {
    const Catalog catalog =
        Catalog::load(global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir);
    const LogImportOptions options = resolve(*opts, catalog);
    // Parse every log first: nothing is written unless all of them import. The timing summary comes first,
    // so that a log refused for its layout still shows what it measured.
    std::vector<ImportedRun> runs;
    for (const auto& path : opts->logs) {
      const std::string text = read_text_file(path, input_kind::log);
      print_summary(read_megatron_log_timing(text, path, options));
      runs.push_back(import_megatron_log(text, path, options));
    }
    std::ostringstream csv;
    write_csv_line(csv, live_run_columns());
    for (const auto& run : runs) write_csv_line(csv, run.row);
    for (const auto& run : runs) warn_logged_flops(run, catalog);
    emit_output(csv.str(), opts->out);
  });
}

}  // namespace moetwin::cli
