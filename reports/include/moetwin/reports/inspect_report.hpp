// `moetwin inspect`: parameters, pipeline layout, model FLOPs and per-GPU memory of a scenario or of
// every live-run row, as result tables (reused by any command that wants the same columns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

struct Inspection {
  ParameterCounts params;
  std::int64_t params_total = 0;
  std::int64_t params_active = 0;
  IterationFlops flops;
  PipelineLayout layout;
  MemoryEstimate memory;
};
// `where` locates the scenario in messages (the layout rules may reject it).
Inspection inspect_scenario(const Scenario& scenario, const InputLocation& where);

// Columns inspect adds to every row: params_total, params_active, flops_per_token, model_flops_per_iter,
// pipeline_layout, worst_stage, memory_per_gpu_gib and its parts, hbm_gib, fits.
std::vector<std::string> inspect_columns();
std::vector<Cell> inspect_cells(const Inspection& inspection);

// One-scenario table: the scenario's settings as columns, then inspect_columns().
ResultTable inspect_scenario_table(const Scenario& scenario, const Inspection& inspection);
// Live runs: every input column kept, then inspect_columns(), then logged_flops_per_iter
// (tflops_gpu x iter_s x gpus x 1e12) and flops_vs_logged_pct (model / logged - 1, in %).
ResultTable inspect_runs_table(const LiveRunTable& runs, const std::vector<Inspection>& inspections);
// Per pipeline stage: chunks (E / D / MTP / Loss markers), parameters and the memory breakdown in GiB.
ResultTable stage_table(const Inspection& inspection);
// Human summary of one scenario.
std::string render_inspect_text(const Scenario& scenario, const Inspection& inspection);

}  // namespace moetwin
