// Internal to the workload builder: the MoE pricing of one emitted stage. For every (MoE layer on the
// stage, microbatch, local rank) the MoE cost model's answer (token copies, dispatch / combine A2A and
// permute times, the A2A kernels' SMs), asked once per cost class and EP group, and the var-slot durations
// read from it (expert grouped GEMMs, A2As, permutes). The stage's programs are emitted before
// (stage_builder.hpp) and assembled after (build_workload, workload.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/workload.hpp"
#include "workload_template.hpp"

namespace moetwin::moe_pricing {

// One stage's MoE costs: table[(MoE layer index x microbatches + microbatch) x stage ranks + local rank]
// points into the answers kept here (ranks and cells that share an answer share its entries, 8 bytes a
// cell instead of a copy). Not copyable: the table points into its own storage.
struct StageMoeCosts {
  std::size_t microbatches = 0;
  std::size_t stage_size = 0;
  std::vector<const MoeRankCost*> table;
  std::uint16_t sms = 0;  // the stage's A2A kernels' SMs: the most any cell's costs hold
  // Storage: answers by (EP group, cost class), and the unclassed cells' answers.
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<MoeRankCost>> class_costs;
  std::vector<std::vector<MoeRankCost>> answers;

  StageMoeCosts() = default;
  StageMoeCosts(const StageMoeCosts&) = delete;
  StageMoeCosts& operator=(const StageMoeCosts&) = delete;
  StageMoeCosts(StageMoeCosts&&) = default;
  const MoeRankCost& at(std::size_t moe, std::size_t mb, std::size_t local) const {
    return *table[(moe * microbatches + mb) * stage_size + local];
  }
};

// The MoE costs of `stage`'s MoE layers (`moe_layers`) over `microbatches` microbatches. Cells without a
// cost class (skewed routing: every cell its own random plan) are priced on `threads` threads, each into its
// own slot, so the table does not depend on the thread count.
StageMoeCosts price_stage(const MoeCostModel& moe, const RankGroups& groups,
                          const std::vector<int>& moe_layers, int stage, int microbatches, int threads);

// Local ranks of a stage (0 .. S-1) grouped by what their var-slot durations are made of: the per-rank
// values of the non-uniform collective entries and the MoE costs of every (MoE layer, microbatch) that
// the durations read (copies, A2A and permute times). Ranks of one class have equal durations slot by
// slot, so the builder computes and stores one row per class. Classes are numbered by lowest local rank.
std::vector<std::int32_t> duration_classes(const std::vector<CommEntry>& comm,
                                           const std::vector<const MoeRankCost*>& table, int S);

// What the expert grouped GEMMs' times read besides a rank's token copies.
struct ExpertGemms {
  const ComputeProfile* compute = nullptr;
  double hidden = 0;         // model hidden size
  double ffn = 0;            // expert FFN hidden size
  double etp = 1;            // expert tensor parallel size
  double local_experts = 0;  // routed experts per rank
  bool fp8 = false;          // an FP8 recipe: TE GroupedLinear in FP8 with cast-transposes
  bool nvfp4 = false;        // NVFP4: TE GroupedLinear at the FP4 rate with NVFP4's quantization
  QuantRecipe recipe = QuantRecipe::fp8_delayed;  // the quantized recipe (when fp8)
};
ExpertGemms expert_gemms(const Scenario& scenario, const ComputeProfile& compute, double local_experts);

// The duration of MoE var slot `r` (every kind but VarKind::comm) on a rank whose MoE costs are `mc`, ns.
TimeNs moe_duration(const VarReq& r, const MoeRankCost& mc, const ExpertGemms& gemms);

}  // namespace moetwin::moe_pricing
