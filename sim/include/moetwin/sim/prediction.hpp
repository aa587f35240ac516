// One predicted iteration: build the workload, replay it, summarise. What `moetwin predict` prints.
//  - iteration time, tokens/s, model TFLOP/s per GPU (model FLOPs from model_accounting.hpp's
//    model_flops(), the function `inspect` uses, so both report the figure Megatron logs);
//  - per rank the breakdown (compute, exposed TP/EP/PP/DP communication, host wait, bubble, idle),
//    summarised as min / median / max over ranks, and the critical rank (the one whose last op ends the
//    iteration; lowest id on ties) with its stage and breakdown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moetwin/engine/engine.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/prediction_setup.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {

struct PredictOptions {
  SimProfile profile;
  // The MoE cost when seams.moe is null: the scenario's dispatcher (its routing plans and dispatcher model
  // with profile.model_params: what every command predicts with) or the balanced NCCL default
  // (BalancedMoeCost: even routing, no dispatcher model; `predict --moe-cost balanced`).
  enum class MoeCost { dispatcher, balanced };
  MoeCost moe_cost = MoeCost::dispatcher;
  WorkloadSeams seams;
  // When seams.compute (seams.comm) is null: look up the GPU's calibration profile in calibration_dir
  // ("" = default_calibration_dir()) for its GEMM curves (compute_profile_for) and NVLink collective
  // terms (collectives_for); false = catalog efficiencies and the collective model's defaults.
  bool calibration = true;
  std::string calibration_dir;
  // When set (and seams.compute and seams.comm are null): the calibration lookup, compute profile and
  // collective model come from this cache, shared by the predictions of one command
  // (prediction_setup.hpp); the prediction is the same as without it.
  std::shared_ptr<const PredictionSetupCache> setup_cache;
  // With setup_cache: the emitted stage programs are taken from (and kept in) this cache when an earlier
  // prediction emitted the same (workload_template_cache.hpp; the same prediction either way). Not
  // thread-safe: one per worker, for predictions that differ in the dispatcher or its terms.
  std::shared_ptr<WorkloadTemplateCache> programs;
  bool trace = false;  // keep every op's span (EngineResult::trace) for write_chrome_trace
  // Threads the workload builder prices skewed routing plans on (build_workload); the prediction is the
  // same for any count. 1 suits callers that already predict several scenarios in parallel.
  int threads = 1;
};

// min / median (lower median) / max over ranks, seconds.
struct RankSpread {
  double min_s = 0;
  double median_s = 0;
  double max_s = 0;
};

struct Prediction {
  std::string scenario;
  int gpus = 0;
  int microbatches = 0;
  double tokens = 0;  // global batch x sequence length
  double iteration_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;  // per iteration (Megatron-Core accounting, recompute not counted)
  double model_tflops_per_gpu = 0;
  RankSpread compute, host_wait, bubble, idle;
  RankSpread exposed[kCommClasses];  // by CommClass
  int critical_rank = 0;
  int critical_stage = 0;
  NetworkMode network = NetworkMode::closed_form;  // how comm ops used the network (SimProfile::network)
  std::uint64_t events = 0;
  std::size_t ops = 0;
  // What the kernel times come from: "calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)"
  // or "catalog efficiencies (no calibration profile for B300)" (ComputeProfile::source).
  std::string compute_source;
  // Where the collective model's NVLink terms come from (CollectiveCalibration::source): "calibrated
  // NVLink (calibrate/profiles/h200-measured.toml, NCCL on 2 GPUs)" or "NVLink defaults (...)".
  std::string collective_source;
  // Validity warnings of the MoE cost seam (DispatcherMoeCost: DispatcherModel::check at the scenario's EP
  // size, e.g. "deepep-v2-gin: p5.48xlarge has no EFA-GDA ..."); empty for the balanced MoE cost.
  std::vector<std::string> warnings;
  BuiltWorkload built;  // the replayed programs (labels, groups, layout)
  EngineResult engine;  // per-rank stats and, with PredictOptions::trace, the spans
};

// Throws InputError for scenarios the replay cannot represent, and (with the dispatcher MoE cost) when the
// scenario's dispatcher cannot run at its EP size.
Prediction predict(const Scenario& scenario, const PredictOptions& options = {});

// Rank names for reports: "pp1.tp3.dp0" (dense coordinates).
std::string rank_name(const ParallelLayout& layout, int rank);

}  // namespace moetwin
