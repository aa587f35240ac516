// MoeCostModel from the routing plans and token-dispatcher models: per (MoE layer,
// microbatch, EP group) the routing plan (routing_plan.hpp) of the scenario's [routing] gives every EP
// rank's received token copies (grouped-GEMM rows) and the A2A traffic; the scenario's dispatcher model
// (dispatcher_model.hpp) turns that traffic into per-rank dispatch / combine times, the separate
// permute / unpermute kernels (NCCL all-to-all only; DeepEP fuses them) and the SMs the A2A kernels hold.
//
// Conventions (consistent with BalancedMoeCost in comm_cost.hpp):
//  - each EP rank routes mb x seq / (tp x cp) tokens per microbatch (sequence parallel; with etp = 1 the
//    EP rank is a TP rank holding its sequence shard); tokens = received copies x etp;
//  - payload is bf16 in both directions (token_bytes(hidden, fp8 = false)): the live runs are bf16 runs
//    and no DeepEP FP8 dispatch was enabled there;
//  - EP rank k of a group lives on node k / ranks_per_node, ranks_per_node = ep / (nodes the EP group
//    spans, from topology's Placement): EP32 over 4 nodes gives 8 per node; a group filling its NVLink
//    groups unequally (EP64 over racks of 72) is priced by its slowest domain (routing_spec_for). The plan's
//    "node" is the dispatcher's NVLink reach (a2a_nvlink_reach_gpus): the NVLink domain for NCCL's all-to-all
//    (EP64 in one NVL72 rack: one "node" of 64, every leg NVLink), the host node for DeepEP's node dedup;
//  - distinct EP groups (other data-parallel replicas of the expert side) route different data: group g
//    uses the plan of (layer, g x microbatches + microbatch), so expert popularity (per layer) is shared
//    and the per-microbatch samples differ. Plans are deterministic in Scenario.routing.seed.
// Thread-safe: the planner's statistics cache and the count-class cache below are guarded by locks, and
// the workload builder calls layer_costs from several threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/routing_plan.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// The RoutingSpec of a scenario's MoE layers (kind, exponent, seed, experts, top_k, EP size, ranks per
// node from the placement, tokens per rank, router groups, histogram file). Throws InputError for a
// spec the planner rejects.
RoutingSpec routing_spec_for(const Scenario& scenario);

class DispatcherMoeCost : public MoeCostModel {
 public:
  // Throws InputError when the dispatcher cannot run at the scenario's EP size (DispatcherModel::check).
  explicit DispatcherMoeCost(const Scenario& scenario);
  // With fitted values of the dispatcher model's own parameters, keyed "<dispatcher>.<parameter>"
  // (SimProfile::model_params); keys of other dispatchers are ignored.
  // host_time_factor: the instance CPU's host work over the fit's reference CPU (DispatchHardware's).
  DispatcherMoeCost(const Scenario& scenario, const std::map<std::string, double>& model_params,
                    double host_time_factor = 1);
  std::string name() const override { return "routing+" + model_->name(); }
  void layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                   std::vector<MoeRankCost>& out) const override;
  // The routing plan's count class (RoutingPlanner::count_class): balanced plans only.
  std::int64_t cost_class(int layer, int microbatch, int ep_group) const override {
    return planner_.count_class(layer, ep_group * microbatches_ + microbatch);
  }
  // Warnings of the dispatcher's validity check (e.g. low-latency kernel caps, proxy fallback).
  std::vector<std::string> warnings() const override { return warnings_; }
  // The layers' routing statistics (RoutingPlanner::prepare_stats), on `threads` threads.
  void prepare_layers(const std::vector<int>& layers, int threads) const override {
    planner_.prepare_stats(layers, threads);
  }

 private:
  RoutingPlanner planner_;
  std::unique_ptr<DispatcherModel> model_;
  DispatchHardware hw_;
  double bytes_per_token_ = 0;           // combine (and bf16 dispatch) payload per token copy
  double dispatch_bytes_per_token_ = 0;  // dispatch payload: FP8 + scales with DeepEP's FP8 dispatch
  int etp_ = 1;
  int microbatches_ = 1;
  int gpus_per_node_ = 8;  // the dispatcher's NVLink reach (a2a_nvlink_reach_gpus)
  std::vector<std::string> warnings_;
  // Costs by the routing plan's count class (RoutingPlanner::count_class): plans of one class are equal
  // in every count, and the costs read nothing else, so balanced routing plans and prices each class
  // once (at most one per expert) instead of once per (layer, microbatch, EP group).
  mutable std::mutex class_costs_mutex_;
  mutable std::map<std::int64_t, std::vector<MoeRankCost>> class_costs_;
};

}  // namespace moetwin
