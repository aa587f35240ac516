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
  double iter_s = 0;      // measured mean steady-state iteration time, seconds; 0: a what-if row (none)
  double tflops_gpu = 0;  // logged MODEL TFLOP/s per GPU
  std::string source;     // where the figures were read
  CsvRow row;             // the input row, echoed by row-driven outputs
  // Corrections applied to an inconsistent but recoverable row ("file:line: column: what was done and why"),
  // printed on stderr by every row-driven command. Empty for a clean row.
  std::vector<std::string> warnings;
};

struct LiveRunTable {
  std::vector<std::string> header;  // input columns in order
  std::vector<LiveRun> runs;
};

// Required columns: campaign, model, instance, nodes, gpus, tp, pp, vpp, ep, etp, dp, mb, gbs, seq,
// layers, recompute, overlap, dispatcher, iter_s, tflops_gpu. Optional: cp (default 1), source, seed.
// Every row is validated like a scenario; errors name file, line, column and value.
// One repair, always reported in LiveRun::warnings: a `dp` that contradicts the world size while `gpus`
// agrees with nodes x GPUs per node is replaced by gpus / (tp * cp * pp) — dp is derived in Megatron, and the
// published kimik2-b300-16n-20260604 rows log dp=2 where 16 nodes at TP8/PP4 give 4 (their logged MODEL
// TFLOP/s x iter_s x 128 GPUs matches Kimi-K2's FLOPs for gbs 256, so 128 GPUs is right).
// Optional also: precision (bf16 | fp8-hybrid | fp8-current | fp8-blockwise | mxfp8 | nvfp4; default bf16),
// stack (a catalog stack; default: the stack whose `campaigns` list the row's campaign, else the catalog
// default) and nccl_max_nchannels (1..64 or "unset"), cuda_graphs (none | te-scoped | full-iteration; default
// none), fsdp (0 | 1: training.megatron_fsdp; default 0), cpu_offload_layers (0 .. layers - 1:
// training.cpu_offload_layers; default 0).
LiveRunTable read_live_runs(const std::string& path, const Catalog& catalog);
// Several files (`--runs A --runs B`): rows in file order, each keeping its file's stack; the header is the
// union of the files' headers in order of appearance, a column a file lacks left empty in its rows.
LiveRunTable read_live_runs(const std::vector<std::string>& paths, const Catalog& catalog);
LiveRunTable parse_live_runs(const CsvTable& table, const Catalog& catalog);

}  // namespace moetwin
