// Live-run records: the CSV schema of shared/data/live-runs.csv (comment lines start with '#').
// Each row becomes a Scenario plus its measurement; every row-driven command (`--runs FILE.csv`) emits
// one result row per input row, keeping the input columns.
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

struct LiveRun {
  Scenario scenario;
  std::string campaign;
  double iter_s = 0;      // measured mean steady-state iteration time, seconds
  double tflops_gpu = 0;  // logged MODEL TFLOP/s per GPU
  std::string source;     // where the figures were read
  CsvRow row;             // the input row, echoed by row-driven outputs
};

struct LiveRunTable {
  std::vector<std::string> header;  // input columns in order
  std::vector<LiveRun> runs;
};

// Required columns: campaign, model, instance, nodes, gpus, tp, pp, vpp, ep, etp, dp, mb, gbs, seq,
// layers, recompute, overlap, dispatcher, iter_s, tflops_gpu. Optional: cp (default 1), source, seed.
// Every row is validated like a scenario; errors name file, line, column and value.
LiveRunTable read_live_runs(const std::string& path, const Catalog& catalog);
LiveRunTable parse_live_runs(const CsvTable& table, const Catalog& catalog);

}  // namespace moetwin
