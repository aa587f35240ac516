// `moetwin validate --runs FILE.csv [--fit] [--cv leave-one-campaign-out]`: predicted vs measured
// iteration time of every live-run row, error statistics per campaign and overall, dispatcher ranking
// agreement per cell; with --fit the free parameters are fitted and, with --cv, every row's out-of-sample
// prediction comes from the fit without its campaign. Wiring only: the fit workflow is in
// validate/fit_workflow.hpp, the report in validate/validation_report.hpp.
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/progress.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/validate/compute_fit.hpp"
#include "moetwin/validate/dense_runs.hpp"
#include "moetwin/validate/fit_workflow.hpp"
#include "moetwin/validate/row_predictions.hpp"
#include "moetwin/validate/validation_report.hpp"

namespace moetwin::cli {

namespace {

struct ValidateOptions : RowInput {
  std::string profile;
  std::string network;
  bool fit = false;
  std::vector<std::string> params;
  // --exclude NAME: rows (by scenario name, e.g. "uccl-p5en-4n-20260430/mb1/deepep-uccl") left out of
  // the predictions, the fit and the statistics: runs outside the model, each named in the report.
  std::vector<std::string> exclude;
  std::string cv = "none";
  int cv_refine = 0;
  // --huber: the fit objective's Huber knee in |log ratio| (0: squared). 0.1 (10%): errors inside it are
  // fitted as squared; a row further out (qwen3-235b 2026-06-24's DeepEP rows, 20-28% slower than the same
  // layouts' neighbours imply) pulls only linearly. Out of sample on the published runs: 0.1 gives median
  // 7.1% / p90 20.9%, 0.05 gives 7.7% / 21.8%, squared 7.4% / 23.1% (README, "How right is it").
  double huber = 0.1;
  int outer = 4;
  int threads = 2;
  std::string write_profile;
  // --never-fitted FILE: rows no fit sees (NVIDIA's dense rows), predicted by the fitted profile; their
  // errors join the held-out evidence the novelty bands are measured on (validate/novelty_bands.hpp).
  std::vector<std::string> never_fitted;
  bool strict = false;  // --strict: logged TFLOP/s vs the model's FLOPs beyond 5% is an error
  // --fit-compute: the GEMM-class time per GPU and precision (validate/compute_fit.hpp) instead of the
  // profile's free parameters; its own file (--write-compute-fit), never the fitted profile.
  bool fit_compute = false;
  std::string write_compute_fit;
  bool what_if_no_tp_comm_overlap = false;  // --what-if-no-tp-comm-overlap (with --fit-compute)
};

// On a terminal one bar per stage of the fit (fit, wider fit, cross-validation), advanced per replay of
// the row set, its step the round or fold; without a terminal the fit's lines on stderr, as before bars.
FitObserver progress_on_stderr(std::shared_ptr<std::unique_ptr<SweepProgress>> bar) {
  FitObserver o;
  o.message = [](const std::string& line) { std::cerr << line << '\n'; };
  o.stage_begin = [bar](const std::string& label, std::size_t replays, const std::string& step) {
    bar->reset();
    if (!stderr_is_terminal()) return;
    ProgressOptions po;
    po.out = &std::cerr;
    po.tty = true;
    po.label = label;
    po.unit = "replays";
    po.journal_line = false;
    *bar = std::make_unique<SweepProgress>(po, replays, 0, replays);
    (*bar)->set_stage(step);
  };
  o.step = [bar](const std::string& step) {
    if (*bar) (*bar)->set_stage(step);
  };
  o.replayed = [bar] {
    if (*bar) (*bar)->advance();
  };
  o.fit_line = [bar](const std::string& line) {
    if (*bar)
      (*bar)->note("fit: " + line);
    else
      std::cerr << "fit: " << line << '\n';
  };
  o.stage_end = [bar] {
    if (*bar) (*bar)->finish();
    bar->reset();
  };
  return o;
}

// validate's output in the asked format. The CSV's comment header names the profile the rows were
// predicted with (the fitted one after --fit), so `moetwin report` can say which; readers skip '#' lines.
std::string render_validate_output(const ValidationReport& report, const FittedProfile& profile,
                                   const std::string& format, const std::vector<std::string>& runs,
                                   const std::string& catalog_dir) {
  if (format == "csv") {
    return csv_context_header(OutputContext{"validate", catalog_dir, runs},
                              {{"profile", profile_label(profile)}}) +
           render_csv(report.rows);
  }
  if (format == "json") return render_validation_json(report, OutputContext{"validate", catalog_dir, runs});
  return render_validation_text(report);
}

// Writes `profile` to `path`, read back first by the loader --profile uses: a profile that predict would
// refuse (a non-finite parameter) is never written (issue 55 item 4).
void write_fitted_profile(const std::string& path, const FittedProfile& profile) {
  const std::string text = fitted_profile_toml(profile);
  try {
    (void)parse_fitted_profile(text, path);
  } catch (const InputError& e) {
    throw InputError({path, 0},
                     std::string("the fitted profile does not load back, nothing written: ") + e.what());
  }
  write_file_atomically(path, text);
}
// `validate --fit-compute`: the GEMM-class time per GPU and precision on the rows (validate/compute_fit.hpp).
void run_compute_fit(const ValidateOptions& opts, const Catalog& catalog) {
  const ValidateOptions* o = &opts;
  if (!o->fit_compute)
    throw InputError({"", 0}, o->cv == "leave-one-system-out" ? "--cv" : "--write-compute-fit",
                     o->cv == "leave-one-system-out" ? o->cv : o->write_compute_fit, "--fit-compute");
  if (o->fit || o->cv == "leave-one-campaign-out")
    throw InputError({"", 0}, "--fit-compute", "",
                     "no --fit and no --cv leave-one-campaign-out (one fit at a time)");
  RunRows rows = read_run_rows(o->runs, catalog);
  if (o->what_if_no_tp_comm_overlap) drop_tp_comm_overlap(rows.table);
  for (const std::string& line : refused_row_lines(rows)) std::cerr << "note: " << line << '\n';
  print_row_warnings(rows.table);
  check_row_flops(rows.table, o->strict);
  if (rows.what_if)
    throw InputError({runs_label(o->runs), 0}, "iter_s", "(no column)",
                     "measured iteration times: a file without them holds what-if rows (predict --runs)");
  if (rows.table.runs.empty())
    throw InputError({runs_label(o->runs), 0}, "rows", "0", "at least one row the twin replays");
  const FittedProfile profile = resolve_profile_choice(o->profile, o->network);
  const ComputeFitResult fit =
      fit_compute(catalog, rows.table.runs, profile, o->cv == "leave-one-system-out", o->threads,
                  [](const std::string& line) { std::cerr << "fit: " << line << '\n'; });
  if (!o->write_compute_fit.empty())
    write_file_atomically(
        o->write_compute_fit,
        compute_fit_toml(
            fit, concat({runs_label(o->runs), " on top of the fitted profile ",
                         profile.path.empty() ? std::string("none (built-in defaults)")
                                              : std::filesystem::relative(profile.path).generic_string()})));
  emit_output(compute_fit_report(catalog, rows.table.runs, fit), o->out);
}

// --never-fitted rows (NVIDIA's dense rows' refusals noted, as with --fit-compute).
LiveRunTable read_never_fitted(const std::vector<std::string>& files, const Catalog& catalog) {
  RunRows rows = read_run_rows(files, catalog);
  for (const std::string& line : refused_row_lines(rows)) std::cerr << "note: " << line << '\n';
  print_row_warnings(rows.table);
  if (rows.what_if || rows.table.runs.empty())
    throw InputError({runs_label(files), 0}, "rows", rows.what_if ? "(no iter_s column)" : "0",
                     "at least one row with a measured iteration time the twin replays");
  return std::move(rows.table);
}
}  // namespace

void add_validate_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Predicted vs measured live runs: errors per row and campaign, dispatcher ranking; --fit, --cv");
  auto o = std::make_shared<ValidateOptions>();
  cmd->add_option("--runs", o->runs, "Live-run CSV (shared/data/live-runs.csv schema); repeatable")
      ->required();
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  add_profile_option(cmd, o->profile);
  add_network_option(cmd, o->network);
  cmd->add_flag("--fit", o->fit, "Fit the free parameters on every row (start: --profile)");
  cmd->add_option(
         "--params", o->params,
         "Free parameters to fit (default: the ones the rows can pin down, README \"How right is it\")")
      ->delimiter(',');
  cmd->add_option("--cv", o->cv,
                  "Cross-validation with --fit: none | leave-one-campaign-out; with --fit-compute: none | "
                  "leave-one-system-out")
      ->check(CLI::IsMember({"none", "leave-one-campaign-out", "leave-one-system-out"}));
  cmd->add_flag("--fit-compute", o->fit_compute,
                "Fit the GEMM-class time per GPU and precision on the rows (NVIDIA's dense rows; "
                "validate/compute_fit.hpp) and report it; --write-compute-fit FILE keeps it");
  cmd->add_option("--write-compute-fit", o->write_compute_fit,
                  "With --fit-compute: write the compute fit (TOML) here; `predict --compute-fit` reads it");
  cmd->add_option("--cv-refine", o->cv_refine, "Replay rounds per fold from its first estimate (default 0)")
      ->check(CLI::Range(0, 10));
  CLI::Option* huber_option =
      cmd->add_option("--huber", o->huber,
                      "With --fit: Huber objective, squared up to this |log(predicted/measured)| and linear "
                      "beyond (default 0.1; 0: squared log ratio)")
          ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--outer", o->outer, "Linearise-minimise-replay rounds of the fit (default 4)")
      ->check(CLI::Range(1, 20));
  cmd->add_option(
      "--exclude", o->exclude,
      "Leave out the row(s) with this scenario name (campaign/mb<mb>/<dispatcher>[/overlap][/nch<n>]): "
      "runs outside the model; repeatable");
  cmd->add_option("--threads", o->threads, "Rows replayed in parallel (results identical for any count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--write-profile", o->write_profile, "With --fit: write the fitted profile (TOML) here");
  cmd->add_option("--never-fitted", o->never_fitted,
                  "With --fit --cv leave-one-campaign-out: rows no fit sees (e.g. NVIDIA's dense rows), "
                  "predicted by the fit; their errors join the novelty bands' evidence, their coverage is "
                  "reported; repeatable");
  add_strict_option(cmd, o->strict);
  add_what_if_no_tp_comm_overlap_option(cmd, o->what_if_no_tp_comm_overlap);
  cmd->callback([o, &global, huber_option] {
    if (o->what_if_no_tp_comm_overlap && !o->fit_compute)
      throw InputError({"", 0}, "--what-if-no-tp-comm-overlap", "", "--fit-compute (the dense-row fit)");
    if (!o->fit && huber_option->count() > 0)
      throw InputError({"", 0}, "--huber", format_exact(o->huber), "--fit (it is the fit's objective)");
    if (!o->fit && !o->fit_compute && o->cv != "none")
      throw InputError({"", 0}, "--cv", o->cv, "--fit (cross-validation refits)");
    if (!o->fit && !o->write_profile.empty())
      throw InputError({"", 0}, "--write-profile", o->write_profile, "--fit");
    if (!o->never_fitted.empty() && (!o->fit || o->cv != "leave-one-campaign-out"))
      throw InputError({"", 0}, "--never-fitted", o->never_fitted.front(),
                       "--fit --cv leave-one-campaign-out (the bands it feeds are measured by the folds)");
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    if (o->fit_compute || !o->write_compute_fit.empty() || o->cv == "leave-one-system-out") {
      run_compute_fit(*o, catalog);
      return;
    }
    LiveRunTable table = read_live_runs(o->runs, catalog);
    print_row_warnings(table);
    check_row_flops(table, o->strict);
    for (const std::string& name : o->exclude) {
      const auto before = table.runs.size();
      std::erase_if(table.runs, [&](const LiveRun& r) { return r.scenario.name == name; });
      if (table.runs.size() == before) {
        throw InputError({"", 0}, "--exclude", name,
                         "the scenario name of a row of --runs (campaign/mb<mb>/...)");
      }
      std::cerr << "excluded: " << name << " (" << before - table.runs.size() << " row)\n";
    }
    const std::vector<LiveRun>& runs = table.runs;
    if (runs.empty()) throw InputError({runs_label(o->runs), 0}, "rows", "0", "at least one live-run row");
    if (o->cv == "leave-one-campaign-out") {
      std::set<std::string> campaigns;
      for (const LiveRun& r : runs) campaigns.insert(r.campaign);
      if (campaigns.size() < 2) {
        throw InputError({runs_label(o->runs), 0}, "--cv", o->cv,
                         "rows of at least two campaigns (leaving the only one out leaves nothing to fit): " +
                             std::to_string(campaigns.size()) + " campaign");
      }
    }
    FittedProfile profile = resolve_profile_choice(o->profile, o->network);
    const LiveRunTable never =
        o->never_fitted.empty() ? LiveRunTable{} : read_never_fitted(o->never_fitted, catalog);
    std::vector<NeverFittedRow> never_fitted;
    std::vector<double> oos;  // out-of-sample predictions (with --cv)
    FoldPredictions folds;    // each fold's predictions of every row (with --cv)
    std::string objective;
    if (o->fit) {
      FitWorkflowOptions fo;
      fo.parameters = o->params;
      fo.outer_iterations = o->outer;
      fo.cv_refine = o->cv_refine;
      fo.huber = o->huber;
      fo.cv = o->cv;
      fo.fitted_at = today_utc();
      fo.fitted_on = runs_label(o->runs);
      for (const std::string& name : o->exclude) fo.fitted_on += " without " + name;
      if (!o->write_profile.empty()) fo.path = o->write_profile;
      if (!never.runs.empty()) {
        fo.never_fitted = [&](const FittedProfile& p) {
          std::vector<double> t;
          for (const RowPrediction& r : predict_rows(never.runs, all_rows(never.runs.size()), p, o->threads))
            t.push_back(r.ok ? r.iteration_s : 0);
          return never_fitted_rows(never.runs, t, p);
        };
      }
      const RowPredictor predict = [&](const std::vector<std::size_t>& which, const FittedProfile& p) {
        return predict_rows(runs, which, p, o->threads);
      };
      FitWorkflowResult fit = fit_profile(
          runs, profile, fo, predict, progress_on_stderr(std::make_shared<std::unique_ptr<SweepProgress>>()));
      profile = std::move(fit.profile);
      oos = std::move(fit.out_of_sample);
      folds = std::move(fit.folds);
      objective = std::move(fit.objective);
      never_fitted = std::move(fit.never_fitted);
      if (!o->write_profile.empty()) write_fitted_profile(o->write_profile, profile);
    }
    // The rows at the (fitted) profile, with their breakdowns.
    const std::vector<RowPrediction> preds = predict_rows(runs, all_rows(runs.size()), profile, o->threads);
    const ValidationReport report = make_validation_report(table.header, runs, preds, oos, folds, profile,
                                                           runs_label(o->runs), objective, never_fitted);
    emit_output(render_validate_output(report, profile, o->format, o->runs, catalog_dir), o->out);
  });
}

}  // namespace moetwin::cli
