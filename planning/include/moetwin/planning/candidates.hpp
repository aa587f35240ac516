// The layouts `moetwin plan` considers for one model on one instance type: enumeration of the search
// space, the scenario each candidate stands for, and the cheap checks (scenario rules, pipeline split,
// memory fit) that reject most of them before any prediction. The search space and its pruning rules are
// documented at enumerate_candidates().
#pragma once

#include <string>
#include <vector>

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/planning/scenario_choices.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// What the user asked to plan (the flags of `moetwin plan`).
struct PlanRequest {
  std::string model;
  std::string instance;
  double tokens = 0;         // tokens to train on, in [kMinPlanTokens, kMaxPlanTokens]
  double deadline_days = 0;  // 0 = no deadline (the CLI refuses an explicit --deadline <= 0)
  int min_nodes = 1;         // node counts: powers of two in [min_nodes, max_nodes], and max_nodes itself
  int max_nodes = 64;
  double price_usd_per_hour = -1;  // per node; < 0 = the catalog's price
  int global_batch = 512;          // sequences per iteration, the same for every option (a training choice)
  int seq_length = 4096;
  // Layouts (tp, pp, ep, dp, mb) per node count the search starts from, in screening-proxy order taken
  // round-robin over pp; each is predicted with every dispatcher, vpp 1 and 2, overlap off and on.
  int seed_layouts = 6;
  // The search then predicts every neighbour (one of tp, pp, ep, mb one step away) of any layout within
  // this fraction of the node count's fastest, until none is left: options within it are not dropped.
  double explore_window = 0.05;
  int max_layouts_per_node_count = 160;  // bounds the run time; a plan that reaches it says so
  int threads = 0;                       // predictions in parallel; 0 = the machine's cores (at most 16)
  // The dispatcher whose buffers the memory pre-check (and the recompute choice) assumes; every other
  // dispatcher is checked again before its prediction.
  std::string fit_dispatcher = "nccl-alltoall";
  // Share of HBM kept free beyond the memory model's estimate (accounting/hbm_headroom.hpp): the recompute
  // choice prefers the lightest within it, and options beyond it rank after every option within it.
  double hbm_headroom = kDefaultHbmHeadroom;
  // The software stack every option runs (its NCCL chunking, padding, stack-scoped terms); make_plan
  // fills an empty one with the catalog's default, as a scenario without a [stack] table gets.
  StackChoice stack;
  // --precision, --routing and --recompute (scenario_choices.hpp) for every option: precision and routing
  // as given (default bf16, balanced: the live runs'); recompute, when given, is fixed instead of the
  // lightest that fits (fit_candidate).
  ScenarioChoices choices;
};

// The token range `plan` accepts: a million (one small iteration) to a quadrillion (70x DeepSeek-V3's
// 14.8 T pre-training tokens); beyond it the day counts mean nothing.
constexpr double kMinPlanTokens = 1e6;
constexpr double kMaxPlanTokens = 1e15;

// One point of the search space (dispatcher chosen later).
struct Candidate {
  int nodes = 1;
  ParallelLayout parallel;
  int micro_batch = 1;
  Recompute recompute = Recompute::none;
  bool overlap_moe_a2a = false;
  // "n32 tp8 pp8 vpp1 ep32 dp4 mb4 recompute=full overlap=off"
  std::string label() const;
};

// Node counts: the powers of two in [min_nodes, max_nodes], then min_nodes and max_nodes themselves when
// they are not powers of two (--max-nodes 48 searches 1, 2, 4, 8, 16, 32 and 48). Ascending.
std::vector<int> node_counts(int min_nodes, int max_nodes);

// The search space for `nodes` nodes, before any check (recompute is left at none; fit_candidate picks
// it). Pruning rules (why each is safe or what it gives up):
//  - cp = 1, etp = 1 (the live runs and the Megatron-Bridge MoE recipes at these sizes);
//  - tp in {1, 2, 4, 8}, at most the GPUs of a node (TP across nodes is never competitive on EFA);
//  - pp in {1, 2, 4, 8, 16} dividing the world and at most layers / 2 (no stage of a single layer);
//  - vpp in {1, 2} (vpp 2 only with pp > 1);
//  - ep: powers of two dividing both the routed experts and tp x dp (the stage's ranks), and >= 2 for
//    an MoE model (ep 1 replicates every expert on every GPU, which never fits an MoE this size and is
//    never faster than ep 2 in memory);
//  - micro-batch in {1, 2, 4};
//  - overlap_moe_a2a on only where Megatron allows it (ep >= 2, vpp >= 2).
std::vector<Candidate> enumerate_candidates(const ModelSpec& model, const InstanceSpec& instance,
                                            const PlanRequest& request, int nodes);

// The scenario of a candidate with `dispatcher` (balanced routing, seed 1, bf16, distributed optimizer,
// DP overlap on: the live runs' settings, unless request.choices says otherwise). Not validated: see
// check_candidate.
Scenario scenario_for(const Candidate& candidate, const ModelSpec& model, const InstanceSpec& instance,
                      const GpuSpec& gpu, const DispatcherSpec& dispatcher, const PlanRequest& request);

// Outcome of the cheap checks of one (candidate, dispatcher).
struct CandidateCheck {
  enum class Verdict { ok, invalid, does_not_fit };
  Verdict verdict = Verdict::ok;
  std::string reason;      // "" when ok; "invalid: <message>" or "does not fit: X GiB > Y GiB ..."
  double worst_bytes = 0;  // memory of the most loaded stage (when the layout could be split)
  double hbm_bytes = 0;
};

// Scenario rules (validate_scenario), the pipeline split (make_pipeline_layout) and the memory fit
// (estimate_memory) of `scenario`, in that order; the first failure is the verdict.
CandidateCheck check_scenario(const Scenario& scenario);

// Picks the lightest recompute (none, selective, full) under which the candidate fits with `dispatcher`
// within request.hbm_headroom (else the lightest that fits at all) and returns the check of that choice,
// setting candidate.recompute; with request.choices.recompute set, only that one. When none fits, the check
// of full
// recompute (the smallest footprint) is returned; an invalid layout returns the first invalid verdict.
// overlap_moe_a2a excludes full recompute (Megatron), so such candidates stop at selective.
CandidateCheck fit_candidate(Candidate& candidate, const ModelSpec& model, const InstanceSpec& instance,
                             const GpuSpec& gpu, const DispatcherSpec& dispatcher,
                             const PlanRequest& request);

}  // namespace moetwin
