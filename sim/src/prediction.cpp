#include "moetwin/sim/prediction.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/calibrated_collectives.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/models/dispatcher_cost.hpp"
#include "moetwin/sim/dispatcher_fit.hpp"
#include "moetwin/sim/workload_estimate.hpp"

namespace moetwin {

namespace {

RankSpread spread(std::vector<TimeNs> v) {
  RankSpread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min_s = static_cast<double>(v.front()) * 1e-9;
  s.median_s = static_cast<double>(v[(v.size() - 1) / 2]) * 1e-9;
  s.max_s = static_cast<double>(v.back()) * 1e-9;
  return s;
}

}  // namespace

std::string rank_name(const ParallelLayout& p, int rank) {
  const int stage_size = p.tp * p.cp * p.dp;
  const int stage = rank / stage_size;
  const int local = rank % stage_size;
  std::string s = "pp" + std::to_string(stage) + ".tp" + std::to_string(local % p.tp);
  if (p.cp > 1) s += ".cp" + std::to_string((local / p.tp) % p.cp);
  s += ".dp" + std::to_string(local / (p.tp * p.cp));
  return s;
}

Prediction predict(const Scenario& scenario, const PredictOptions& options) {
  // Before the cost models: on 800,000 GPUs their setup alone takes 20 s (workload_estimate.hpp).
  check_workload_size(scenario, estimate_workload(scenario), workload_limit_bytes());
  Prediction out;
  out.scenario = scenario.name;
  const std::string dir = !options.calibration              ? std::string()
                          : options.calibration_dir.empty() ? default_calibration_dir()
                                                            : options.calibration_dir;
  WorkloadSeams seams = options.seams;
  if (seams.moe == nullptr && options.moe_cost == PredictOptions::MoeCost::dispatcher)
    seams.moe = dispatcher_moe_seam(scenario, options.profile);
  // One profile lookup (directory scan, cached parse) serves both seams; with a set-up cache, one lookup
  // serves every prediction of the same GPU, instance and node count.
  std::shared_ptr<const PredictionSetup> shared;
  if (options.setup_cache && seams.compute == nullptr && seams.comm == nullptr) {
    shared = options.setup_cache->get(scenario, dir);
    seams.compute = &shared->compute;
    seams.comm = shared->comm;
    seams.programs = options.programs.get();  // the set-up's profile and model live as long as the cache
    out.collective_source = shared->collective_source;
  }
  std::optional<ScenarioCalibration> calibration;
  if (seams.compute == nullptr || seams.comm == nullptr) calibration = calibration_for(scenario, dir);
  std::optional<ComputeProfile> looked_up;
  if (seams.compute == nullptr) {
    looked_up = compute_profile_from(scenario, *calibration);
    seams.compute = &*looked_up;
  }
  if (seams.comm == nullptr) {
    CollectiveCalibration collectives = collectives_from(scenario, *calibration);
    seams.comm = std::move(collectives.comm);
    out.collective_source = std::move(collectives.source);
  } else if (!shared) {
    out.collective_source = seams.comm->name();
  }
  out.built = build_workload(scenario, options.profile, seams, options.threads);
  out.compute_source = out.built.compute.source;
  if (seams.moe != nullptr) out.warnings = seams.moe->warnings();
  if (scenario.parallel.cp > 1) {
    out.warnings.push_back(
        "cp " + std::to_string(scenario.parallel.cp) +
        ": ring attention (cp_comm_type p2p, sim/context_parallel.hpp) priced in closed form inside the "
        "attention core: the KV transfers its tiles do not hide count as attention time, not exposed "
        "communication, and share no link with the PP and DP traffic in the flow model");
  }
  if (scenario.training.cpu_offload_layers > 0) {
    const InstanceSpec& in = scenario.instance;
    out.warnings.push_back(
        "cpu_offload_layers " + std::to_string(scenario.training.cpu_offload_layers) +
        ": activations copied over " + in.host_link + " at " + format_fixed(in.host_link_bandwidth / 1e9, 0) +
        " GB/s per GPU and direction (sim/cpu_offload.hpp, catalog instances.toml); the copies' exposed time "
        "is the breakdown's pp class (pp = 1); the link's sharing with NICs or the other GPU of a Grace is "
        "not "
        "modelled");
  }
  EngineOptions eo;
  eo.trace = options.trace;
  eo.network = options.profile.network;
  out.engine = run_engine(out.built.workload, eo);
  out.gpus = out.built.workload.ranks();
  out.microbatches = out.built.microbatches;
  out.tokens = static_cast<double>(scenario.training.global_batch) * scenario.training.seq_length;
  out.iteration_s = static_cast<double>(out.engine.iteration) * 1e-9;
  out.events = out.engine.events;
  out.network = eo.network;
  out.ops = out.built.workload.total_ops();
  if (out.iteration_s > 0) {
    out.tokens_per_s = out.tokens / out.iteration_s;
    out.model_flops = model_flops(scenario).per_iteration;
    out.model_tflops_per_gpu = out.model_flops / (out.iteration_s * out.gpus) / 1e12;
  }
  const auto& ranks = out.engine.ranks;
  std::vector<TimeNs> compute, host, bubble, idle, exposed[kCommClasses];
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankStats& s = ranks[r];
    compute.push_back(s.compute);
    host.push_back(s.host_wait);
    bubble.push_back(s.bubble);
    idle.push_back(s.idle);
    for (int k = 0; k < kCommClasses; ++k) exposed[k].push_back(s.exposed[k]);
    if (s.finish > ranks[static_cast<std::size_t>(out.critical_rank)].finish)
      out.critical_rank = static_cast<int>(r);
  }
  out.compute = spread(compute);
  out.host_wait = spread(host);
  out.bubble = spread(bubble);
  out.idle = spread(idle);
  for (int k = 0; k < kCommClasses; ++k) out.exposed[k] = spread(exposed[k]);
  out.critical_stage = out.critical_rank / std::max(1, out.built.groups.stage_size);
  return out;
}

}  // namespace moetwin
