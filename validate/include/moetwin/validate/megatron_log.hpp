// Megatron log ingestion: turns Megatron-LM, Megatron-Bridge and NeMo 2.0 training logs into live-run rows
// (the CSV schema of shared/data/live-runs.csv), so users validate the twin against their own runs.
//
// Recognised iteration lines (anywhere in a line; timestamps and launcher/rank prefixes are ignored):
//   Megatron-LM:     "iteration   10/  100 | ... | elapsed time per iteration (ms): 12538.2 |
//                     throughput per GPU (TFLOP/s/GPU): 85.1 | ..."
//   Megatron-Bridge: "Step Time : 12.54s GPU utilization: 85.1MODEL_TFLOP/s/GPU" (or "...TFLOP/s/GPU")
//   NeMo 2.0:        "Training epoch 0, iteration 97/99 | ... | train_step_timing in s: 12.22 | ..."
// Each iteration is counted once: a numbered iteration printed again (several ranks, a second logger) is
// kept at its first line, and when a log has numbered lines its "Step Time" lines (Bridge prints both)
// only lend their TFLOP/s to the numbered iteration before them. A value cut by the end of its line or of
// the file is an error naming the line, never a shorter number.
//
// The layout comes from the log where it prints one: Megatron-LM's argument dump ("  name ..... value"),
// Megatron-Bridge's config ("name: value" lines: YAML in 0.2, "name: value (Mcore default: ...)" now).
// Keys read: tensor/pipeline/virtual/expert/expert-tensor/context parallel sizes, data_parallel_size or
// world_size, micro/global batch, seq_length, num_layers, recompute_granularity,
// overlap_moe_expert_parallel_comm, moe_token_dispatcher_type. What the log does not print comes from
// LogImportOptions (a scenario or flags); what it prints is checked against them (a mismatch is an error
// naming both values). Model facts (experts, top-k, hidden, FFN sizes, heads, vocabulary) are checked
// against LogImportOptions::model_facts the same way.
//
// One log, one run: a second argument dump, or an iteration number logged again with a different time
// (a restarted or appended run; a re-logged iteration at another time), is an error naming both lines;
// the same iteration printed again with the same time (several ranks or loggers) is counted once.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace moetwin {

// Layout and training values the user supplies (from a scenario file or flags). Unset = not supplied.
struct GivenLayout {
  std::string source = "the options";  // names the supplier in mismatch errors, e.g. "scenario a.toml"
  std::optional<int> tp, pp, vpp, ep, etp, cp, dp, mb, gbs, seq, layers;
  std::optional<std::string> recompute;  // none | selective | full
  std::optional<bool> overlap;           // overlap_moe_expert_parallel_comm
};

// The model facts the user's scenario (or --model) states, checked against what the log prints: a log of
// another model (a Kimi-K2 log, 384 experts, filed as a DeepSeek-V3 row) would corrupt a refit. Unset = not
// checked. Megatron-LM's argument names (Bridge: num_moe_experts for num_experts) are in the .cpp.
struct ExpectedModel {
  std::string source;  // e.g. "model deepseek-v3 (scenario a.toml)": names the supplier in mismatch errors
  std::optional<int> experts;            // num_experts (None = 0, a dense model)
  std::optional<int> top_k;              // moe_router_topk (MoE models only; dense logs print a default)
  std::optional<int> hidden;             // hidden_size
  std::optional<int> ffn_hidden;         // ffn_hidden_size (dense layers' FFN)
  std::optional<int> expert_ffn_hidden;  // moe_ffn_hidden_size
  std::optional<int> shared_ffn_hidden;  // moe_shared_expert_intermediate_size (None = 0)
  std::optional<int> heads;              // num_attention_heads
  std::optional<int> vocab;              // vocab_size (raw)
  std::optional<int> padded_vocab;       // padded_vocab_size (vocab padded to pad multiple x tp)
};

struct LogImportOptions {
  // Warm-up iterations dropped from the statistics (each iteration counted once, whatever prints it).
  // -1 = automatic: the leading iterations slower than kWarmupFactor x the median of the log's second half,
  // at most half of them, and none when the log has fewer than kMinIterationsForWarmup iterations.
  int skip_first = -1;
  double stall_factor = 1.5;  // a steady iteration above stall_factor x median is reported as a stall
  std::string model;          // catalog model name (logs do not carry it)
  std::string instance;       // catalog instance name
  std::string campaign;       // default: the log file's stem
  std::string dispatcher;     // nccl-alltoall | deepep-uccl | deepep-nvshmem | deepep-v2-gin
  int nodes = 0;              // 0 = world size / gpus_per_node
  int gpus_per_node = 8;      // to derive nodes from world size
  GivenLayout given;
  ExpectedModel model_facts;
};

inline constexpr double kWarmupFactor = 1.05;
inline constexpr int kMinIterationsForWarmup = 4;

struct IterationSample {
  int line = 0;           // 1-based line in the log
  int iteration = 0;      // the log's iteration number, or the ordinal for Bridge step lines
  double iter_s = 0;      // seconds
  double tflops_gpu = 0;  // logged TFLOP/s/GPU (0 when not logged)
};

struct ImportedRun {
  std::string source;                    // log path
  std::vector<IterationSample> samples;  // every iteration, counted once, in log order
  std::vector<IterationSample> stalls;   // steady samples above stall_factor x median
  int warmup_dropped = 0;                // leading samples dropped as warm-up
  bool warmup_auto = true;               // dropped by the automatic rule (false: --skip-first)
  int steady_count = 0;                  // samples after the warm-up
  // Statistics of the steady samples (seconds); p10/p90 interpolate linearly between order statistics.
  double median_iter_s = 0, mean_iter_s = 0, p10_iter_s = 0, p90_iter_s = 0;
  double median_tflops_gpu = 0, mean_tflops_gpu = 0;  // 0 when the log prints no TFLOP/s
  std::vector<std::string> notes;                     // what a user should know about the import
  std::vector<std::string> warnings;                  // "path:line: what": likely wrong, imported anyway
  // The live-run CSV columns, in schema order, ready to write (iter_s and tflops_gpu are the medians).
  std::vector<std::string> header;
  std::vector<std::string> row;
};

// Parses one log's text. `path` names the log in messages. Throws InputError (path:line: what) for a
// garbled or truncated iteration line, a contradictory argument, a logged value that differs from the
// given one, no iteration lines, no steady iteration left, or a layout field that neither the log nor the
// options provide.
ImportedRun import_megatron_log(const std::string& text, const std::string& path,
                                const LogImportOptions& options);

// The iterations and their statistics only (no layout needed): what import_megatron_log reports before
// it builds the row. `header` and `row` stay empty.
ImportedRun read_megatron_log_timing(const std::string& text, const std::string& path,
                                     const LogImportOptions& options);

// The live-run CSV header written by the importer (the columns of shared/data/live-runs.csv).
const std::vector<std::string>& live_run_columns();

}  // namespace moetwin
