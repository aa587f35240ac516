// Megatron log ingestion: turns Megatron-LM / Megatron-Bridge training logs into live-run rows (the CSV
// schema of shared/data/live-runs.csv), so users validate the twin against their own runs.
//
// Recognised iteration lines (anywhere in a line; timestamps and rank prefixes are ignored):
//   Megatron-LM:     "iteration   10/  100 | ... | elapsed time per iteration (ms): 12538.2 |
//                     throughput per GPU (TFLOP/s/GPU): 85.1 | ..."
//   Megatron-Bridge: "Step Time : 12.54s GPU utilization: 85.1MODEL_TFLOP/s/GPU"
// Logged arguments (Megatron prints "  name ........ value" between "arguments" banners) give the layout:
// tensor/pipeline/virtual/expert/expert-tensor/context parallel sizes, data_parallel_size or world_size,
// micro/global batch, seq_length, num_layers, recompute_granularity, overlap_moe_expert_parallel_comm,
// moe_token_dispatcher_type (+ moe_flex_dispatcher_backend). What the log cannot tell (model catalog name,
// instance type, campaign) comes from LogImportOptions, which also override logged values.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace moetwin {

struct LogImportOptions {
  int skip_first = 3;         // warm-up iterations dropped from the statistics (first ones compile/allocate)
  double stall_factor = 1.5;  // an iteration above stall_factor x median is reported as a stall
  // Values the log may not carry (or that override it). Empty / 0 = take from the log.
  std::string model;       // catalog model name
  std::string instance;    // catalog instance name
  std::string campaign;    // default: the log file's stem
  std::string dispatcher;  // nccl-alltoall | deepep-uccl | deepep-nvshmem | deepep-v2-gin
  int nodes = 0;
  int gpus_per_node = 8;  // to derive nodes from world size
};

struct IterationSample {
  int line = 0;           // 1-based line in the log
  int iteration = 0;      // Megatron's iteration number, or the ordinal for Bridge step lines
  double iter_s = 0;      // seconds
  double tflops_gpu = 0;  // logged model TFLOP/s/GPU (0 when not logged)
};

struct ImportedRun {
  std::string source;                    // log path
  std::vector<IterationSample> samples;  // every iteration line, in order
  std::vector<IterationSample> stalls;   // steady-state samples above stall_factor x median
  int steady_count = 0;                  // samples after dropping skip_first
  double mean_iter_s = 0, median_iter_s = 0;
  double mean_tflops_gpu = 0, median_tflops_gpu = 0;
  // The live-run CSV columns, in schema order, ready to write.
  std::vector<std::string> header;
  std::vector<std::string> row;
};

// Parses one log's text. `path` names the log in messages. Throws InputError (path:line: what) for a
// garbled or truncated iteration line, a contradictory argument, no iteration lines, fewer steady-state
// iterations than one, or a layout field that neither the log nor the options provide.
ImportedRun import_megatron_log(const std::string& text, const std::string& path,
                                const LogImportOptions& options);

// The live-run CSV header written by the importer (the columns of shared/data/live-runs.csv).
const std::vector<std::string>& live_run_columns();

}  // namespace moetwin
