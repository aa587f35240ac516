// NVIDIA's published dense pre-training rows (validate/data/nvidia-dense-runs.csv, a copy of
// shared/data/nvidia-dense-runs.csv) as live runs, and every `--runs` file read through one door.
//
// The file has the live-run columns (scenario/live_runs.hpp) plus `cp`, `precision`, `fsdp` (1 =
// Megatron-FSDP) and `container` (the NeMo container of the row); `recompute` may be `unknown` (NVIDIA's
// tables do not say) and `dispatcher` is `none` (dense models: no expert all-to-all). A row whose recipe lies
// outside what the twin models is refused with its reason and counted, never replayed with a mechanism it
// lacks:
//   - fsdp = 1: Megatron-FSDP (per-layer parameter all-gathers, gradient reduce-scatters) is not modelled;
//   - cp > 1: context parallelism is not modelled (no ring-attention KV exchange, and each rank's attention
//     is priced as (seq/cp)^2 where ring attention computes seq^2 / (2 cp) per rank);
//   - layers + 2 = pp x vpp (405B at PP16 VPP8: 128 chunks for 126 layers): Megatron's embedding- and
//     loss-accounted split leaves the end chunks without a decoder layer, which the twin's pipeline layout
//     (scenarios/pipeline_layout.hpp) does not build.
// A job on an instance whose NVLink domain spans several nodes (NVL72 trays) is replayed on its real nodes:
// ranks fill domains of nvlink_domain_gpus in rank order (topology/placement.hpp), groups inside a domain use
// its NVSwitch fabric and the rest InfiniBand; the row's warnings say how the job lies (one domain, or
// "fill 4 NVLink domains of 72 (72 + 72 + 72 + 40)": the racks' placement is not in NVIDIA's tables).
// Settings: NVIDIA's tables publish no recompute, CUDA graphs, TP-comm overlap or P2P mode. Each row takes
// them from Megatron-Bridge's perf recipe at its release (validate/data/megatron-bridge-llama-recipes.csv,
// joined by recipe_settings.hpp; the recipe's file, line, tag and commit in the row's warnings). Where the
// recipe file has no single row for the row's release, model, GPU, precision and layout, the row keeps the
// assumptions of before (UNVERIFIED in its warnings): recompute none, no CUDA graphs, overlap_p2p_comm on,
// tp_comm_overlap on where tp > 1. The container is not a catalog stack, so the catalog's default stack
// serves its NCCL mechanisms.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"

namespace moetwin {

// One row outside the model, with why.
struct RefusedRow {
  std::string where;     // "file:line"
  std::string campaign;  // the row's campaign cell
  std::string instance;  // its instance cell
  std::string reason;    // short key: "fsdp", "cp", ...
  std::string detail;    // the sentence a user reads
};

struct RunRows {
  LiveRunTable table;               // the rows the twin replays (header: the union of the files' headers)
  std::vector<RefusedRow> refused;  // in file order
  int rows_read = 0;                // every data row of every file
  bool dense = false;               // at least one file was a dense-row file
  // At least one file had no iter_s column (NVIDIA's MoE layouts: what-if rows, LiveRun::iter_s 0). Its
  // rows are parsed one by one: a row the scenario rules refuse is counted in `refused` (reason: the
  // scenario key the rule names) rather than ending the read.
  bool what_if = false;
};

// True when the table has the dense-row columns (fsdp and container).
bool is_dense_run_table(const CsvTable& table);

// The dense-row file: refusals checked first (in the order above), then every other row parsed and checked
// as a live run. Input errors (unknown model, instance, malformed cell) are InputErrors as for live runs.
// `recipes` (nullable): Megatron-Bridge's recipe settings (recipe_settings.hpp) joined to each row; a matched
// row replays its recipe's tp_comm_overlap, P2P mode, CUDA graphs, recompute and CPU-offloaded layers (a
// partial block recompute recipe is refused: "recompute"), an unmatched one the assumptions below, UNVERIFIED.
struct RecipeTable;
RunRows parse_dense_runs(const CsvTable& table, const Catalog& catalog, const RecipeTable* recipes);

// Every `--runs` file: dense-row files through parse_dense_runs (with megatron-bridge-llama-recipes.csv of
// the same folder joined, when there is one), live-run files through read_live_runs; rows in file order, the
// header the union of the files' headers (a column a file lacks is empty in its rows).
RunRows read_run_rows(const std::vector<std::string>& paths, const Catalog& catalog);

// What-if (`predict` / `validate --what-if-no-tp-comm-overlap`): turns training.tp_comm_overlap off in every
// row that has it (the dense rows of tp > 1 replay with it: parse_dense_runs) and says so in the row's
// warnings: the sensitivity of the dense rows to that assumption (NVIDIA's tables do not publish it).
// Returns the rows turned off.
int drop_tp_comm_overlap(LiveRunTable& table);

// "N rows read, M replayed, K refused (nvfp4 4, fsdp 11, ...)" and one line per refused row.
std::vector<std::string> refused_row_lines(const RunRows& rows);

// Median |predicted / measured - 1| per instance of the replayed rows, over the rows with a prediction
// (predicted[i] belongs to rows.table.runs[i]; <= 0: not predicted). Instance name -> (rows, median).
std::map<std::string, std::pair<int, double>> median_error_by_instance(const LiveRunTable& table,
                                                                       const std::vector<double>& predicted);

}  // namespace moetwin
