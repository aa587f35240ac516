// `moetwin predict SCENARIO.toml | --runs FILE.csv`: replay one iteration and report iteration time,
// tokens/s, model TFLOP/s per GPU and where the time goes. Wiring only: the work is in sim/prediction,
// the renderings in reports/prediction_report.hpp.
#include <algorithm>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/gzip.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/common/progress.hpp"
#include "moetwin/engine/trace.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/reports/prediction_report.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/stack_inheritance.hpp"
#include "moetwin/sim/trace_ranks.hpp"
#include "moetwin/validate/compute_fit.hpp"
#include "moetwin/validate/dense_runs.hpp"

namespace moetwin::cli {

namespace {

struct PredictCliOptions : RowInput {
  std::string trace;
  std::string trace_ranks = "stages";
  std::string moe_cost = "dispatcher";
  std::string profile;
  std::string network;
  std::string calibration;
  std::string compute_fit;  // --compute-fit FILE: GEMM-class time per GPU and precision (compute_fit.hpp)
  bool require_fit = false;
  bool explain = false;  // --explain: the band's composition, the nearest fitted rows, a stack's inheritance
  bool strict = false;   // --strict (with --runs): logged TFLOP/s vs the model's FLOPs beyond 5% is an error
  bool what_if_no_tp_comm_overlap = false;  // --what-if-no-tp-comm-overlap (with --runs)
  int threads = 0;
  double hbm_headroom = kDefaultHbmHeadroom;
};

// `predict --runs FILE.csv`: every row of live-run or what-if files predicted, as a table.
std::string predict_run_rows(const PredictCliOptions& o, const Catalog& catalog, const FittedProfile& profile,
                             const PredictOptions& options, const OutputContext& context) {
  const PredictCliOptions* opts = &o;
  std::string content;
  if (!opts->trace.empty())
    throw InputError({"", 0}, "--trace", opts->trace, "a single scenario (not --runs)");
  // Live-run files and NVIDIA's dense-row files alike; a row outside the model is refused and counted.
  RunRows rows = read_run_rows(opts->runs, catalog);
  if (opts->what_if_no_tp_comm_overlap) drop_tp_comm_overlap(rows.table);
  const LiveRunTable& table = rows.table;
  for (const std::string& line : refused_row_lines(rows)) std::cerr << "note: " << line << '\n';
  print_row_warnings(table);
  check_row_flops(table, opts->strict);
  ResultTable result;
  result.columns = table.header;
  for (const std::string& c : predict_columns()) result.columns.push_back(c);
  for (const std::string& c : band_columns()) result.columns.push_back(c);
  result.columns.push_back("iter_err_pct");
  result.columns.push_back("compute_source");
  result.columns.push_back("collective_source");
  std::vector<std::string> run_warnings;  // "scenario: warning", row order
  std::unique_ptr<SweepProgress> bar;     // per row, on a terminal only
  if (stderr_is_terminal()) {
    ProgressOptions po;
    po.out = &std::cerr;
    po.tty = true;
    po.label = "predict";
    po.unit = "rows";
    po.journal_line = false;
    bar = std::make_unique<SweepProgress>(po, table.runs.size(), 0, table.runs.size());
  }
  std::vector<double> predicted;  // by row, for the per-instance medians
  const ComputeFit compute_fit =
      opts->compute_fit.empty() ? ComputeFit{} : load_compute_fit(opts->compute_fit);
  for (const LiveRun& run : table.runs) {
    PredictOptions row_options = options;
    if (profile.fitted) inherit_stack_terms(row_options.profile, run.scenario.stack.spec, profile.coverage);
    ComputeProfile scaled;  // outlives predict()
    if (!opts->compute_fit.empty()) {
      const ResolvedScale r =
          compute_fit.resolve(catalog, run.scenario.gpu.name, run.scenario.training.precision);
      scaled = compute_profile_for(run.scenario, !options.calibration              ? std::string()
                                                 : options.calibration_dir.empty() ? default_calibration_dir()
                                                                                   : options.calibration_dir);
      if (r.value != 1) scale_gemm_class_time(scaled, r.value);
      scaled.source += concat({"; GEMM-class time x ", format_fixed(r.value, 3), " (", r.source, ")"});
      row_options.seams.compute = &scaled;
    }
    Prediction p;
    try {
      p = predict(run.scenario, row_options);
    } catch (const InputError& e) {
      // A what-if row (no measured time) the replay refuses is counted, not fatal: the layouts file
      // asks which rows the twin can answer (validate/dense_runs.hpp).
      if (run.iter_s > 0) throw;
      std::cerr << "note: " << run.scenario.source << ": refused (" << run.campaign << "): " << e.what()
                << '\n';
      predicted.push_back(0);
      if (bar) bar->advance();
      continue;
    }
    predicted.push_back(p.iteration_s);
    if (bar) bar->advance();
    const Novelty novelty = novelty_of(run.scenario, profile);
    for (std::string& w : novelty.warnings()) p.warnings.push_back(std::move(w));
    for (const std::string& w : p.warnings) run_warnings.push_back(run.scenario.name + ": " + w);
    std::vector<Cell> row;
    for (const std::string& f : run.row.fields) row.emplace_back(f);
    for (Cell& c : predict_cells(p)) row.push_back(std::move(c));
    // The band every command prints: over the A2A terms an unmeasured dispatcher might have and the stack
    // an unfitted stack inherits from (a2a_term_spread; no replay for a measured dispatcher on a fitted
    // stack), under the row's own options (--calibration, --moe-cost, --compute-fit).
    for (Cell& c :
         band_cells(a2a_term_spread(run.scenario, profile, p.iteration_s, row_options).band, novelty))
      row.push_back(std::move(c));
    // A what-if row (iter_s 0) has no measured time: no error.
    row.push_back(run.iter_s > 0 ? Cell::fixed((p.iteration_s / run.iter_s - 1) * 100, 2) : Cell(""));
    row.emplace_back(p.compute_source);
    row.emplace_back(p.collective_source);
    result.add_row(std::move(row));
  }
  if (bar) bar->finish();
  if (rows.what_if) {
    const auto done = std::count_if(predicted.begin(), predicted.end(), [](double x) { return x > 0; });
    std::cerr << "note: " << done << " of " << rows.rows_read << " rows predicted (what-if rows: no "
              << "measured time, no error column), " << rows.rows_read - done << " refused\n";
  }
  for (const auto& [instance, e] : rows.dense ? median_error_by_instance(table, predicted)
                                              : std::map<std::string, std::pair<int, double>>{}) {
    std::cerr << "note: " << instance << ": median |error| " << format_fixed(100 * e.second, 1) << "% over "
              << e.first << " rows\n";
  }
  if (opts->format == "csv") {
    content = csv_context_header(context, {{"profile", profile_label(profile)}}) + render_csv(result);
    std::cerr << warning_lines(run_warnings);
  } else if (opts->format == "json") {
    content = render_prediction_json(context, {{"rows", &result}}, run_warnings);
  } else {
    std::cerr << warning_lines(run_warnings);  // the text table has no place for them either
    ResultTable brief;
    brief.columns = {"campaign",
                     "mb",
                     "vpp",
                     "overlap",
                     "dispatcher",
                     "iter_s",
                     "predicted_iter_s",
                     "iter_err_pct",
                     "tflops_gpu",
                     "predicted_tflops_gpu"};
    // What-if rows (nvidia-moe-layouts.csv: no measured time) have no iter_s, error or tflops_gpu column:
    // the brief keeps the columns the result has (it exited 3 on them before).
    std::erase_if(brief.columns, [&](const std::string& c) {
      return std::find(result.columns.begin(), result.columns.end(), c) == result.columns.end();
    });
    for (const auto& r : result.rows) {
      std::vector<Cell> b;
      for (const std::string& c : brief.columns) b.push_back(r[result.column(c)]);
      brief.add_row(std::move(b));
    }
    content = render_text(brief);
  }
  return content;
}

// `predict SCENARIO.toml`: one scenario, with its memory, band, novelty, stack inheritance and trace.
std::string predict_one_scenario(const PredictCliOptions& o, const Catalog& catalog,
                                 const FittedProfile& profile, const PredictOptions& options,
                                 const OutputContext& context) {
  const PredictCliOptions* opts = &o;
  std::string content;
  const Scenario s = load_scenario_file(opts->scenario, catalog);
  // A bad --trace-ranks is reported before the replay (the critical rank only picks among valid ones).
  if (!opts->trace.empty()) (void)select_trace_ranks(opts->trace_ranks, s.parallel, 0);
  PredictOptions po = options;
  po.trace = !opts->trace.empty();
  // A stack without rows takes its nearest fitted stack's terms (stack_inheritance.hpp).
  if (profile.fitted) inherit_stack_terms(po.profile, s.stack.spec, profile.coverage);
  // A layout that does not fit in HBM would not run however fast it is predicted: warned (first) or,
  // with --require-fit, refused.
  const MemoryEstimate memory =
      estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {opts->scenario, 0}));
  const std::string fit = hbm_fit_warning(s, memory);
  if (!fit.empty() && opts->require_fit) {
    throw InputError({opts->scenario, 0}, "the layout " + fit + " (--require-fit)");
  }
  Prediction p = predict(s, po);
  if (!fit.empty()) p.warnings.insert(p.warnings.begin(), fit);
  if (const std::string tight = hbm_headroom_warning(s, memory, opts->hbm_headroom); !tight.empty())
    p.warnings.insert(p.warnings.begin(), tight);
  if (const std::string fp8 = fp8_recipe_note(s.training.precision); !fp8.empty())
    p.warnings.push_back(concat({"precision ", to_string(s.training.precision), ": ", fp8}));
  const Novelty novelty = novelty_of(s, profile);
  for (std::string& w : novelty.warnings()) p.warnings.push_back(std::move(w));
  ResultTable row;
  row.columns = {"scenario"};
  for (const std::string& c : predict_columns()) row.columns.push_back(c);
  for (const std::string& c : band_columns()) row.columns.push_back(c);
  row.columns.push_back("compute_source");
  row.columns.push_back("collective_source");
  row.columns.push_back("memory_gib");
  row.columns.push_back("hbm_gib");
  row.columns.push_back("within_hbm_headroom");
  std::vector<Cell> cells{s.name};
  for (Cell& c : predict_cells(p)) cells.push_back(std::move(c));
  // The band's replays run with the options of this prediction (--calibration, --moe-cost, --threads).
  const TermSpread spread = a2a_term_spread(s, profile, p.iteration_s, po);
  for (Cell& c : band_cells(spread.band, novelty)) cells.push_back(std::move(c));
  cells.emplace_back(p.compute_source);
  cells.emplace_back(p.collective_source);
  cells.push_back(Cell::fixed(memory.worst().total() / kGiB, 2));
  cells.push_back(Cell::fixed(memory.hbm_bytes / kGiB, 2));
  cells.push_back(Cell::boolean(within_hbm_headroom(memory, opts->hbm_headroom)));
  row.add_row(std::move(cells));
  if (opts->format == "csv") {
    content = csv_context_header(context, {{"profile", profile_label(profile)}}) + render_csv(row);
    std::cerr << warning_lines(p.warnings);
  } else if (opts->format == "json") {
    const ResultTable breakdown = breakdown_table(p);
    content =
        render_prediction_json(context, {{"rows", &row}, {"breakdown", &breakdown}}, p.warnings, &novelty);
  } else {
    content = render_prediction_text(
        s, p, profile,
        concat({memory_use_text(memory.worst().total(), memory.hbm_bytes), " per GPU on stage ",
                std::to_string(memory.worst_stage), " (the most loaded; ",
                within_hbm_headroom(memory, opts->hbm_headroom) ? "within" : "BEYOND", " the ",
                format_fixed(opts->hbm_headroom * 100, 0),
                "% HBM headroom; `moetwin inspect` breaks it down)"}),
        &spread);
    // A stack without rows: what each changed component does to the prediction (one replay per component
    // between the inherited stack and this one: both ends are the spread's).
    const StackInheritance inherited = stack_inheritance(s, profile, options, &spread);
    if (inherited.inherited) {
      content += concat({"\nstack ", s.stack.spec.name, " (no live runs in the fit):\n"});
      for (const std::string& line : inherited.lines()) content += "  " + line + "\n";
    }
    if (opts->explain) {
      content += "\n80% band composition:\n";
      for (const std::string& line : band_composition(profile, novelty)) content += "  " + line + "\n";
      if (const std::string spans = term_spread_text(s, spread); !spans.empty())
        content += concat({"  the band ", spans, "\n"});
    }
  }
  if (!opts->trace.empty()) {
    std::vector<std::string> names;
    for (int r = 0; r < p.gpus; ++r) names.push_back(rank_name(s.parallel, r));
    const std::string json =
        chrome_trace_json(p.built.workload, p.engine,
                          select_trace_ranks(opts->trace_ranks, s.parallel, p.critical_rank), names);
    write_file_atomically(opts->trace, is_gzip_path(opts->trace) ? gzip_bytes(json) : json);
  }
  return content;
}

}  // namespace

void add_predict_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "predict", "Replay one training iteration: time, tokens/s, TFLOP/s/GPU, per-rank breakdown, trace");
  auto opts = std::make_shared<PredictCliOptions>();
  add_row_input_options(cmd, *opts);
  cmd->add_option("--trace", opts->trace,
                  "Write a Chrome/Perfetto trace (JSON; gzipped when the name ends in .gz) of the ranks "
                  "--trace-ranks picks");
  cmd->add_option("--moe-cost", opts->moe_cost,
                  "MoE cost model: dispatcher (routing plans + dispatcher models) | balanced (NCCL default)")
      ->check(CLI::IsMember({"dispatcher", "balanced"}));
  cmd->add_option("--trace-ranks", opts->trace_ranks,
                  "Ranks in the trace: stages (default: one per pipeline stage, the critical rank's "
                  "pipeline) | stages+tp (and the critical rank's TP peers) | all | N (N ranks, one per "
                  "stage in turn) | LIST (e.g. 0,64,128-131)");
  add_profile_option(cmd, opts->profile);
  add_network_option(cmd, opts->network);
  cmd->add_flag("--require-fit", opts->require_fit,
                "Exit 2 when the layout does not fit in HBM (default: predict it and warn)");
  add_strict_option(cmd, opts->strict);
  cmd->add_flag("--explain", opts->explain,
                "Print the 80% band's composition (in-sample spread, a new campaign's width, then each new "
                "dimension's growth x distance) and the nearest fitted rows (text output)");
  add_hbm_headroom_option(cmd, opts->hbm_headroom);
  cmd->add_option("--threads", opts->threads,
                  "Threads that price skewed routing plans (default: the cores, at most 16); the "
                  "prediction is the same for any count")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--calibration", opts->calibration,
                  "Folder of per-GPU calibration profiles (default " + default_calibration_dir() +
                      "), `none` turns the per-GPU lookup off (catalog efficiencies; a scenario's own "
                      "[calibration] profile path still applies)");
  cmd->add_option("--compute-fit", opts->compute_fit,
                  "A compute fit written by `validate --fit-compute --write-compute-fit` (GEMM-class time "
                  "per GPU and precision; not applied by default)");
  add_what_if_no_tp_comm_overlap_option(cmd, opts->what_if_no_tp_comm_overlap);
  cmd->callback([opts, &global] {
    const FittedProfile profile = resolve_profile_choice(opts->profile, opts->network);
    PredictOptions options;
    options.profile = profile.sim;
    options.threads = thread_count(opts->threads);
    if (opts->moe_cost == "balanced") options.moe_cost = PredictOptions::MoeCost::balanced;
    if (opts->calibration == "none")
      options.calibration = false;
    else
      options.calibration_dir = opts->calibration;
    if (opts->scenario.empty() == opts->runs.empty()) {
      throw InputError({"", 0}, "predict", "", "a scenario file or --runs FILE.csv");
    }
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    OutputContext context{"predict", catalog_dir,
                          opts->scenario.empty() ? opts->runs : std::vector<std::string>{opts->scenario}};
    std::string content;
    if (opts->what_if_no_tp_comm_overlap && opts->runs.empty())
      throw InputError({"", 0}, "--what-if-no-tp-comm-overlap", "",
                       "--runs FILE.csv (a scenario file says training.tp_comm_overlap itself)");
    if (!opts->runs.empty())
      content = predict_run_rows(*opts, catalog, profile, options, context);
    else
      content = predict_one_scenario(*opts, catalog, profile, options, context);
    emit_output(content, opts->out);
  });
}

}  // namespace moetwin::cli
