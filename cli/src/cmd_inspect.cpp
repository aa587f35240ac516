// `moetwin inspect SCENARIO.toml | --runs FILE.csv`: parameters, layers per stage, model FLOPs and
// per-GPU memory with a fits verdict. Wiring only; the work is in reports/inspect_report.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/reports/inspect_report.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload_estimate.hpp"

namespace moetwin::cli {

void add_inspect_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Parameters, layers per stage, model FLOPs per iteration and memory per GPU (fits or not)");
  struct Options : RowInput {};
  auto opts = std::make_shared<Options>();
  add_row_input_options(cmd, *opts);
  cmd->callback([opts, &global] {
    if (opts->scenario.empty() == opts->runs.empty()) {
      throw InputError({"inspect", 0}, "expected one input: SCENARIO.toml or --runs FILE.csv");
    }
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    OutputContext context{"inspect", catalog_dir,
                          opts->scenario.empty() ? opts->runs : std::vector<std::string>{opts->scenario}};
    std::string content;
    if (!opts->runs.empty()) {
      const LiveRunTable table = read_live_runs(opts->runs, catalog);
      print_row_warnings(table);
      std::vector<Inspection> inspections;
      inspections.reserve(table.runs.size());
      for (const LiveRun& run : table.runs) {
        inspections.push_back(inspect_scenario(run.scenario, {run.scenario.source, 0}));
      }
      const ResultTable result = inspect_runs_table(table, inspections);
      if (opts->format == "csv") {
        content = render_csv(result);
      } else if (opts->format == "json") {
        content = render_json(context, result);
      } else {
        ResultTable brief;
        brief.columns = {"line",
                         "campaign",
                         "mb",
                         "overlap",
                         "dispatcher",
                         "flops_per_token",
                         "flops_vs_logged_pct",
                         "memory_per_gpu_gib",
                         "worst_stage",
                         "fits"};
        for (std::size_t i = 0; i < result.rows.size(); ++i) {
          std::vector<Cell> row{Cell::integer(table.runs[i].row.line)};
          for (std::size_t c = 1; c < brief.columns.size(); ++c)
            row.push_back(result.rows[i][result.column(brief.columns[c])]);
          brief.add_row(std::move(row));
        }
        content = render_text(brief);
      }
    } else {
      const Scenario s = load_scenario_file(opts->scenario, catalog);
      const Inspection in = inspect_scenario(s, {opts->scenario, 0});
      const ResultTable row = inspect_scenario_table(s, in);
      if (opts->format == "csv") {
        content = render_csv(row);
      } else if (opts->format == "json") {
        const ResultTable stages = stage_table(in);
        content = render_json(context, {{"rows", &row}, {"stages", &stages}});
      } else {
        content = render_inspect_text(s, in);
      }
      // The replay's size (workload_estimate.hpp): a scenario predict would refuse says so here already.
      const WorkloadEstimate estimate = estimate_workload(s);
      const double limit = workload_limit_bytes();
      const std::string line =
          concat({"workload estimate: ", describe(estimate), " (limit ",
                  format_significant(limit / 1073741824.0, 3), " GiB, MOETWIN_MAX_WORKLOAD_GIB: ",
                  estimate.bytes <= limit ? "within it)"
                                          : "over it: predict refuses it; use fewer microbatches or nodes)"});
      if (opts->format == "text")
        content += line + "\n";
      else
        std::cerr << line << '\n';  // CSV and JSON keep their schema
    }
    emit_output(content, opts->out);
  });
}

}  // namespace moetwin::cli
