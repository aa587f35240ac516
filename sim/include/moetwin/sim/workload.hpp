// The workload builder: from a Scenario, the per-rank op programs of one training iteration.
//
// Per stage, the Megatron-Core pipeline schedule (schedule.hpp) expanded into ops (pipeline_program.hpp):
//  - layer forward: [TP all-gather] QKV or MLA projections, core attention, output projection
//    [TP reduce-scatter] (sequence parallel); dense MLP [AG, SwiGLU GEMMs, RS]; MoE: router, permute,
//    dispatch A2A, expert grouped GEMMs on the rank's received token copies, shared expert [AG, GEMMs,
//    RS], combine A2A, unpermute;
//  - backward mirrors it (dgrad + wgrad = 2x the GEMM FLOPs, core attention x attention_backward_factor;
//    AG <-> RS); recompute: selective re-runs core attention before its backward, full re-runs the whole
//    layer forward (incl. its TP collectives and A2As) before the layer's backward;
//  - embedding on the first chunk, output layer + loss (and MTP layers) on the last;
//  - P2P of activations / gradients: mb x seq x hidden x 2 bytes / (tp x cp) (sequence parallel);
//  - DP (distributed optimizer): gradient reduce-scatter per chunk when its last backward is done
//    (overlap_grad_reduce) or after the pipeline; parameter all-gather per chunk before its first forward
//    (overlap_param_gather) or after the optimizer step; the optimizer step over the local shard;
//  - overlap_moe_a2a (Megatron overlap_moe_expert_parallel_comm, vpp >= 2): in the interleaved 1F1B
//    steady state the forward of one microbatch and the backward of another run as one step, layer by
//    layer in the order of Megatron's TransformerLayerSchedulePlan.run (F.attn, B.combine, F.dispatch,
//    B.mlp, F.mlp, B.dispatch, F.combine, B.attn) with the A2As (incl. their permute/unpermute) on their
//    own stream: one microbatch's A2A overlaps the other's compute, and the A2A kernels' SMs slow it.
//
// Kernel times: roofline (compute_model.hpp). Collectives: CommCostModel. MoE tokens and A2As:
// MoeCostModel. Both are seams with defaults (comm_cost.hpp); the engine never calls them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "moetwin/engine/engine.hpp"
#include "moetwin/engine/program.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/models/dispatcher_cost.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/tp_comm_overlap.hpp"
#include "moetwin/sim/workload_template_cache.hpp"

namespace moetwin {

// Named, documented parameters of the replay. The four marked "fitted" are the twin's free parameters:
// `moetwin validate --fit` fits them against live runs and writes them to a profile
// (calibrate/profiles/fitted/live-fit.toml, read by fitted_profile.hpp); the rest are fixed by their sources.
struct SimProfile {
  // Host time per kernel launch in the forward pass (Python + PyTorch eager dispatch), s. The design brief
  // measures ~5-20 us per op; 10 us is its middle.
  double launch_s = 10e-6;
  // Host time per kernel in the backward pass (C++ autograd engine, no Python frames), s: about half.
  double backward_launch_s = 5e-6;
  // Host time per expert GEMM issued from C++, s. Megatron's TEGroupedMLP runs fc1 and fc2 as one
  // Transformer Engine GroupedLinear op each, which loops over the local experts in C++
  // (general_grouped_gemm): one cuBLASLt matmul per expert without Python or autograd frames. 5.5 us is the
  // host-side cuBLASLt setup + launch measured on H200 (calibrate/profiles/h200-measured.toml: the hidden
  // part of the 11 us GEMM floor; back-to-back launch 4.6 us). Backward: dgrad + wgrad per expert.
  double grouped_gemm_launch_s = 5.5e-6;
  // Host time of one CUDA-graph replay (cudaGraphLaunch of a captured region; cuda_graphs.hpp), s. CUDA 12's
  // constant-time launch of straight-line graphs puts it at a few us whatever the node count (NVIDIA
  // technical blog "Constant Time Launch for Straight-Line CUDA Graphs", CUDA 12.6; recalled, not in the
  // shared corpus: UNVERIFIED). 2.5 us, bounds [1, 50] us (the upper bound covers older CUDA's launch cost
  // that grows with the graph's node count). Only scenarios with cuda_graphs != none read it.
  double graph_launch_s = 2.5e-6;
  // SMs Transformer Engine's userbuffers pipeline and bulk kernels hold while they overlap a TP
  // all-gather / reduce-scatter with its GEMM (training.tp_comm_overlap; tp_comm_overlap.hpp): the GEMM is
  // launched without them (set_sm_margin). TE initialize_ub's default config: num_sm = 16, cga_size 2 for
  // the pipeline and bulk methods (the ring exchange uses copy engines); Megatron-Bridge's userbuffers
  // presets use 2-32 per GEMM. Recalled, not in the shared corpus: UNVERIFIED. Count, bounds [1, 32]
  // (kTpOverlapSmsMin/Max). Only scenarios with tp_comm_overlap read it.
  int tp_overlap_sms = kTpOverlapSmsDefault;
  // Fitted: host time per transformer layer forward beyond its kernel launches (Megatron module calls,
  // layer norms, rotary and bias-dropout-add bookkeeping, autograd graph construction), s; issued before
  // the layer's first op. Backward and recompute: backward_launch_s / launch_s of it (C++ autograd).
  // Unfitted: 0 (the kernel launches carry all host time).
  double layer_host_s = 0;
  // Fitted: host time of a MoE layer's forward after the router's token-count sync (dispatcher
  // preprocessing: splits, permutation maps, per-expert bookkeeping; Megatron MoELayer / token
  // dispatcher Python), s; issued before the first op after the sync, where nothing is queued to hide
  // it. Backward: scaled like layer_host_s. Unfitted: 0.
  double moe_host_s = 0;
  // SMs an NCCL kernel holds while it overlaps compute (P2P, DP, NCCL all-to-all on its own stream): one
  // CTA per channel, NCCL's default 16 channels on 8-GPU H100/B200 nodes.
  int nccl_sms = 16;
  bool p2p_device_sync = true;  // Megatron batch_p2p_sync: torch.cuda.synchronize() after P2P
  // The host waits for the router before each dispatch: the alltoall dispatcher copies the token counts
  // to the host (.tolist()) to size the A2A; DeepEP's normal mode busy-waits for the received counts.
  bool dispatch_host_sync = true;
  // Megatron's dropless alltoall dispatcher all-gathers the [experts] int64 token counts over the EP group
  // before the host copies them (token_dispatcher.py preprocess): one small collective per MoE forward.
  bool counts_allgather = true;
  // The host CPU the host-time terms above (launch_s, backward_launch_s, grouped_gemm_launch_s,
  // graph_launch_s, layer_host_s, moe_host_s) hold for: its single-thread score (Geekbench 6 single-core, the
  // catalog's cpu_geekbench6_single). On another instance they scale by this / its CPU's score (host_scaled).
  // Default: p6-b300.48xlarge's Xeon 8559C (2257), the CPU of the live runs the shipped host terms were
  // fitted on.
  double host_reference_cpu_score = 2257;
  // The instance the DeepEP dispatchers' per-remote-node and per-remote-token in-training terms (A2aFit)
  // hold for; on another instance they scale with the cost of one RDMA write on the dispatcher's posting
  // path there over here (dispatcher_cost.hpp). p6-b300.48xlarge: the instance of the 51 live runs.
  std::string proxy_reference_instance = "p6-b300.48xlarge";
  double grad_bytes = 4;   // bytes per gradient element reduced over DP (fp32 grad reduce)
  double param_bytes = 2;  // bytes per parameter all-gathered (bf16)
  // Adam step bytes per local parameter: read fp32 param, grad, m, v (16), write param, m, v (12) and the
  // bf16 copy (2).
  double optimizer_bytes_per_param = 30;
  // How the replay's comm ops use the network (engine.hpp): `closed_form` = each op for its closed-form time
  // regardless of other traffic; `flow` = transfers that share their GPUs' NVLink ports and EFA rails
  // max-min fair with every other transfer on them. A fitted profile holds the mode it was fitted under
  // (its terms absorb what the other mode would model), and predictions use it (`--network` overrides).
  NetworkMode network = NetworkMode::closed_form;
  // FlashAttention backward / forward FLOPs: 5 GEMMs (incl. recomputing P) vs 2 in forward -> 2.5.
  double attention_backward_factor = 2.5;
  // Fitted: every GPU kernel takes this times its roofline time (compute_model.hpp). Physical meaning:
  // the catalog's per-class efficiencies over the efficiency the training kernels reach (small and
  // ragged shapes, BF16 GEMM epilogues, cache misses between kernels). 1 = the catalog is right.
  double compute_time_scale = 1;
  // Fitted: NCCL TP / PP / DP collective and send/recv times are this times the topology closed form
  // (NCCL protocol and channel overheads, EFA congestion, aws-ofi-nccl proxy costs the closed form lacks).
  double collective_time_scale = 1;
  // A dispatcher's in-training A2A terms, fitted on live runs (dispatcher_cost.hpp says what each is).
  using A2aFit = moetwin::A2aFit;
  // Per dispatcher with live runs (keyed by catalog name).
  std::map<std::string, A2aFit> a2a_by_dispatcher;
  // Fitted values of dispatcher-model parameters (dispatcher_params.hpp), "<dispatcher>.<parameter>",
  // e.g. "nccl-alltoall.net_chunk_s"; the model's defaults for the rest.
  std::map<std::string, double> model_params;
  // Fitted per software stack (keyed by catalog stack name): its in-training A2A transfer time over what the
  // dispatcher terms give, for every dispatcher on that stack: a slower (or faster) in-training all-to-all
  // whose cause the stack's rows cannot name. Stacks without an entry: 1 (the mechanisms' defaults).
  std::map<std::string, double> stack_a2a_scale;
  // For dispatchers the fit had no runs of: per term, the median over measured dispatchers of the same
  // kernel design (set_generic_a2a_from_dispatchers, fitted_profile.hpp).
  A2aFit generic_a2a;
  // `dispatcher`'s own A2A terms, or the generic ones when the fit had no runs of it.
  A2aFit a2a_for(const std::string& dispatcher) const {
    const auto it = a2a_by_dispatcher.find(dispatcher);
    return it != a2a_by_dispatcher.end() ? it->second : generic_a2a;
  }
  // Exact, every field (the workload template key, workload_template_cache.hpp).
  bool operator==(const SimProfile&) const = default;
};

// Megatron rank groups (order tp-cp-ep-dp-pp) from topology's Placement, flattened for the builder.
// dp is the dense gradient group: Placement's dp group, or dp x cp ranks when cp > 1 (Megatron's
// data_parallel_group_with_context_parallel); cp the CP rings (empty at cp 1; context_parallel.hpp).
struct RankGroups {
  int world = 0;
  int gpus_per_node = 8;
  // GPUs inside which the EP all-to-all stays on NVLink (models' a2a_nvlink_reach_gpus: the NVLink
  // domain for NCCL, the node for DeepEP); gpus_per_node when not given.
  int a2a_reach_gpus = 8;
  int stage_size = 0;  // ranks per pipeline stage
  std::vector<std::vector<int>> tp, dp, ep, etp, edp, pipelines, cp;
  std::vector<int> ep_group_of;  // rank -> index into ep
};
RankGroups megatron_rank_groups(const ParallelLayout& layout, int gpus_per_node, int a2a_reach_gpus = 0);

struct WorkloadSeams {
  std::shared_ptr<const CommCostModel> comm;  // null: TopologyComm (topology's closed form) on the cluster
  std::shared_ptr<const MoeCostModel> moe;    // null: BalancedMoeCost
  const ComputeProfile* compute = nullptr;    // null: ComputeProfile::from_gpu(scenario.gpu)
  // Emitted stage programs shared with earlier builds of the same structure (workload_template_cache.hpp);
  // used only when `compute` and `comm` are given. Null: every build emits its own. Same workload either way.
  WorkloadTemplateCache* programs = nullptr;
};

struct BuiltWorkload {
  Workload workload;
  PipelineLayout layout;
  RankGroups groups;
  ComputeProfile compute;
  int microbatches = 0;
  std::string comm_model;
  std::string moe_model;
  // Where the dispatcher's in-training terms come from and how they were carried to this instance
  // (A2aTransfer::describe).
  std::string a2a_source;
};

// Throws InputError for scenarios the replay cannot represent (e.g. vpp > 1 with microbatches not a
// multiple of pp), naming the scenario source.
// Host time per op on `instance` over the profile's reference CPU: reference score / the instance CPU's
// single-thread score (1 when either is unknown).
double host_time_factor(const SimProfile& profile, const InstanceSpec& instance);
// `profile` with its host-time terms scaled by host_time_factor.
SimProfile host_scaled(const SimProfile& profile, const InstanceSpec& instance);

// `threads`: the MoE costs of cells without a cost class (skewed routing: one routing plan each) are
// priced on that many threads (MoeCostModel::layer_costs must then be thread-safe); the workload is the
// same for any count.
BuiltWorkload build_workload(const Scenario& scenario, const SimProfile& profile = {},
                             const WorkloadSeams& seams = {}, int threads = 1);

}  // namespace moetwin
