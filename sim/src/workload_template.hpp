// Internal to the workload builder (workload.cpp, stage_builder.hpp, moe_pricing.hpp,
// workload_template_cache.cpp): what a stage's emission produces, and the key of everything the emission
// reads (workload_template_cache.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "moetwin/engine/compiled_program.hpp"
#include "moetwin/engine/program.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {

// expert_dgrad / expert_wgrad: the two halves of expert_bwd, emitted apart under delay_wgrad_compute.
enum class VarKind : std::uint8_t {
  expert_fwd,
  expert_bwd,
  dispatch,
  combine,
  permute,
  unpermute,
  comm,
  expert_dgrad,
  expert_wgrad
};

struct VarReq {
  VarKind kind = VarKind::comm;
  bool fold = false;      // dispatch/combine: add the permute/unpermute kernel (run on the comm stream)
  std::int32_t moe = -1;  // index into the stage's MoE layers
  std::int32_t mb = -1;
  std::int32_t comm = -1;  // index into comm entries
};

struct CommEntry {
  bool uniform = true;
  TimeNs value = 0;
  std::vector<TimeNs> per_local;  // by local rank in the stage
  // The links the op holds alone on the stage's first rank (its group's shape stands for the stage's:
  // the load is per program), and that rank's duration.
  CommUsage usage;
  TimeNs first = 0;
};

// One stage's emitted program before its MoE costs are priced: every op, label, dependency, host time
// and host sync, the collectives' durations and flow-model loads; the all-to-alls without their SMs
// (a2a_ops) and without flow-model loads, the var slots not yet allocated, the program unsealed.
struct StageTemplate {
  Program program;
  std::vector<VarReq> vars;           // the var slots' requests, by slot
  std::vector<CommEntry> comm;        // the collective entries the ops and var slots read
  std::vector<int> moe_layers;        // the stage's MoE layers (VarReq::moe indexes them)
  std::vector<std::int32_t> a2a_ops;  // ops whose SMs are the stage's A2A kernels' (MoeRankCost::sms)
  // The flow-model load of the stage's pipeline sends/receives, by channel kind (those it has).
  std::array<std::optional<NetLoad>, kChannelKinds> p2p_loads{};
  double local_experts = 0;
  // The engine's compiled form (compiled_program.hpp) of the last program priced from this template, and
  // the SMs its all-to-all ops had. Pricing changes nothing else the compiled form holds (the A2A ops' SMs;
  // the flow-model loads and the var slot count it does not hold), so the next pricing hands it to the
  // engine, re-set to its own SMs when they differ, instead of the engine compiling its copy. Written by
  // the builds that share the template: one thread (WorkloadTemplateCache is not thread-safe).
  mutable std::shared_ptr<const CompiledProgram> compiled;
  mutable std::uint16_t compiled_sms = 0;
};

// Every input the stage builder reads while it emits, compared exactly (workload_template_cache.hpp).
struct WorkloadTemplateKey {
  ModelSpec model;
  ParallelLayout parallel;
  TrainingConfig training;
  bool fused_permute = false;      // DispatcherSpec::fused_permute: permute/unpermute ops or none
  bool nccl_transport = false;     // DispatcherSpec::transport == nccl: the counts all-gather and host sync
  int gpus_per_node = 0;           // InstanceSpec::gpus: the rank groups
  bool overlap_p2p = false;        // overlap_p2p_comm(scenario): "auto" resolves through the stack
  double host_link_bandwidth = 0;  // InstanceSpec::host_link_bandwidth under CPU offload (its copies), else 0
  // The host-scaled profile with the members the emission does not read reset (emission_profile).
  SimProfile profile;
  const ComputeProfile* compute = nullptr;  // WorkloadSeams::compute (then scaled by the profile)
  const CommCostModel* comm = nullptr;      // WorkloadSeams::comm (then scaled by the profile)
  bool operator==(const WorkloadTemplateKey&) const = default;
};

// The memory the stages' emitted programs hold, bytes: the op, label and load vectors' capacities, the var
// requests, the collective entries (with their per-rank durations) and the index vectors
// (WorkloadTemplateCache::admits).
std::size_t template_bytes(const std::vector<StageTemplate>& stages);

struct WorkloadTemplate {
  WorkloadTemplateKey key;
  std::shared_ptr<const CommCostModel> comm_owner;  // keeps key.comm alive
  std::vector<StageTemplate> stages;
};

}  // namespace moetwin
