// A scenario: one training job to predict, parsed once from TOML (scenario_parser.hpp) or a live-run CSV
// row (live_runs.hpp) into these validated plain structs. Everything downstream reads only these.
// Units: SI (bytes, seconds, bytes/s, FLOP/s); counts are plain integers.
#pragma once

#include <cstdint>
#include <string>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

// Megatron-Core parallel sizes. world = tp * cp * dp * pp. Expert parallelism is carved from the same
// tp*cp*dp ranks of a pipeline stage as ep * etp * edp (expert data parallel), as Megatron-Core does.
struct ParallelLayout {
  int tp = 1;   // tensor parallel
  int pp = 1;   // pipeline parallel
  int vpp = 1;  // virtual pipeline chunks per stage (1 = plain 1F1B)
  int ep = 1;   // expert parallel
  int etp = 1;  // expert tensor parallel
  int dp = 1;   // data parallel
  int cp = 1;   // context parallel

  int world() const { return tp * cp * dp * pp; }
  // Expert data-parallel size: (tp * cp * dp) / (ep * etp).
  int edp() const { return (tp * cp * dp) / (ep * etp); }
};

enum class Recompute { none, selective, full };

struct TrainingConfig {
  int micro_batch = 1;    // sequences per microbatch (mb)
  int global_batch = 1;   // sequences per iteration (gbs)
  int seq_length = 4096;  // tokens per sequence
  Recompute recompute = Recompute::none;
  bool bf16 = true;
  bool distributed_optimizer = true;  // ZeRO-1 style optimizer-state sharding over dp
  bool overlap_moe_a2a = false;       // Megatron overlap_moe_expert_parallel_comm (needs vpp >= 2)
  bool overlap_grad_reduce = true;    // DP gradient reduce-scatter overlapped with backward
  bool overlap_param_gather = true;   // DP parameter all-gather overlapped with the next forward

  // Microbatches per iteration per pipeline: global_batch / (micro_batch * dp).
  int microbatches(const ParallelLayout& p) const { return global_batch / (micro_batch * p.dp); }
};

enum class RoutingKind { balanced, zipf, group_limited, histogram };

struct RoutingConfig {
  RoutingKind kind = RoutingKind::balanced;
  double zipf_exponent = 0;    // zipf: expert popularity ~ 1 / rank^s
  std::string histogram_path;  // histogram: measured expert loads (CSV or HDF5), resolved path
  std::uint64_t seed = 1;      // root seed; streams derive from (seed, layer, microbatch)
};

struct Scenario {
  std::string name;         // scenario name (file stem or campaign/row id)
  std::string source;       // where it came from: "path.toml" or "runs.csv:LINE"
  std::string description;  // free text from the scenario file ("" if none)
  ModelSpec model;          // catalog model with overrides applied (incl. layers override)
  InstanceSpec instance;    // catalog instance
  GpuSpec gpu;              // the instance's GPU
  int nodes = 1;
  ParallelLayout parallel;
  TrainingConfig training;
  DispatcherSpec dispatcher;  // catalog dispatcher
  RoutingConfig routing;
  std::string calibration_profile;  // profile name or path; "" = shipped default

  int gpus() const { return nodes * instance.gpus; }
};

const char* to_string(Recompute recompute);
const char* to_string(RoutingKind kind);

}  // namespace moetwin
