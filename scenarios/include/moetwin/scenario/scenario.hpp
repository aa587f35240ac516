// A scenario: one training job to predict, parsed once from TOML (scenario_parser.hpp) or a live-run CSV
// row (live_runs.hpp) into these validated plain structs. Everything downstream reads only these.
// Units: SI (bytes, seconds, bytes/s, FLOP/s); counts are plain integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  // Megatron-Core's custom pipeline layout (--pipeline-model-parallel-layout, e.g. "Et|(tt|)*30mL"):
  // which layers each of the pp * vpp chunks builds (pipeline_layout_string.hpp). Empty: the split rules
  // of make_pipeline_layout.
  std::string pipeline_layout;

  int world() const { return tp * cp * dp * pp; }
  bool operator==(const ParallelLayout&) const = default;
  // Expert data-parallel size: (tp * cp * dp) / (ep * etp).
  int edp() const { return (tp * cp * dp) / (ep * etp); }
};

enum class Recompute { none, selective, full };

// Training precision, as Transformer Engine / Megatron name the recipes:
//  bf16           no FP8 (--bf16);
//  fp8-hybrid     delayed scaling, E4M3 forward / E5M2 gradients, per-tensor scales from an amax history
//                 (--fp8-format hybrid --fp8-recipe delayed);
//  fp8-current    per-tensor current scaling (--fp8-recipe tensorwise): an amax reduction before each cast;
//  fp8-blockwise  1x128 / 128x128 block scales (--fp8-recipe blockwise, DeepSeek-V3 style; Hopper and
//                 Blackwell);
//  mxfp8          MX block scaling, one E8M0 scale per 32 elements (--fp8-recipe mxfp8; Blackwell only);
//  nvfp4          Transformer Engine's NVFP4BlockScaling recipe (--fp4-recipe nvfp4; Blackwell only): every
//                 TE linear GEMM (fprop, dgrad, wgrad) in E2M1 with an E4M3 scale per 16 elements and a
//                 per-tensor FP32 scale; random Hadamard transforms on the wgrad inputs, stochastic rounding
//                 of gradients; attention core and LM head stay BF16 (shared/design/nvidia-mechanisms.md 5).
enum class Precision { bf16, fp8_hybrid, fp8_current, fp8_blockwise, mxfp8, nvfp4 };
// What a reader of a precision expects, for its error message: the modelled recipes. `value` is the value
// read.
std::string precision_expected(const std::string& value);
// A quantized recipe (FP8 or NVFP4): TE linears quantize their GEMM inputs; dispatch may run in FP8.
inline bool is_fp8(Precision p) {
  return p != Precision::bf16;
}
// NVFP4: the linears' GEMMs at the GPU's FP4 rate with NVFP4's quantization kernels (compute_model.hpp).
inline bool is_nvfp4(Precision p) {
  return p == Precision::nvfp4;
}

// CUDA graphs in the run (Megatron cuda_graph_impl; shared/design/nvl72-and-infiniband.md section D): a
// captured region replays as one graph launch instead of one host launch per kernel.
//  none            every kernel launched eagerly (PyTorch + Python issue cost per launch).
//  te-scoped       Transformer Engine graphs (cuda_graph_impl transformer_engine) scoped to each layer's
//                  attention block and MoE router (NVIDIA's scope [attn, moe_router, moe_preprocess]),
//                  forward and backward; the rest of the layer (MLP/experts, dispatch, its host syncs) stays
//                  eager.
//  full-iteration  the whole forward-backward of every microbatch captured (cuda_graph_impl
//                  full_iteration); only the optimizer step outside. A graph holds no host sync, so NVIDIA's
//                  recipes pad experts to capacity (scenario rule).
//  te-router       Transformer Engine graphs scoped to the MoE router alone (NVIDIA's scope [moe_router,
//                  moe_preprocess]): each MoE layer's router forward and backward captured; attention, the
//                  MLP/experts and dispatch eager. MoE models only.
enum class CudaGraphs { none, te_scoped, full_iteration, te_router };
const std::vector<std::string>& cuda_graphs_names();
const char* to_string(CudaGraphs graphs);
std::optional<CudaGraphs> cuda_graphs_from_string(const std::string& text);

struct TrainingConfig {
  int micro_batch = 1;    // sequences per microbatch (mb)
  int global_batch = 1;   // sequences per iteration (gbs)
  int seq_length = 4096;  // tokens per sequence
  Recompute recompute = Recompute::none;
  bool bf16 = true;
  Precision precision = Precision::bf16;
  // Megatron's alltoall dispatcher with --moe-pad-expert-input-to-capacity at capacity factor 1:
  // equal-split A2A, no token-count all-gather and no host sync (shared/design/a2a-mechanisms.md 1).
  bool moe_pad_to_capacity = false;
  // DeepEP's FP8 dispatch in an FP8 run (E4M3 payload + fp32 scale per 128 channels; combine stays bf16).
  bool fp8_dispatch = false;
  bool distributed_optimizer = true;  // ZeRO-1 style optimizer-state sharding over dp
  bool overlap_moe_a2a = false;       // Megatron overlap_moe_expert_parallel_comm (needs vpp >= 2)
  // Megatron delay_wgrad_compute (needs overlap_moe_a2a): in the combined 1F1B step the routed experts'
  // weight-gradient GEMMs run after the dispatch-backward all-to-all is issued instead of before it, so that
  // all-to-all starts after the dgrad alone (shared/design/a2a-mechanisms.md 1; nvidia-mechanisms.md 2).
  bool delay_wgrad_compute = false;
  bool overlap_grad_reduce = true;   // DP gradient reduce-scatter overlapped with backward
  bool overlap_param_gather = true;  // DP parameter all-gather overlapped with the next forward
  CudaGraphs cuda_graphs = CudaGraphs::none;
  // Megatron --tp-comm-overlap (Transformer Engine userbuffers): the sequence-parallel TP all-gathers and
  // reduce-scatters of each layer's QKV, proj, fc1 and fc2 GEMMs are pipelined with them
  // (sim/include/moetwin/sim/tp_comm_overlap.hpp). Needs tp > 1. Default off: NCCL collectives on the
  // compute stream, before and after their GEMMs.
  bool tp_comm_overlap = false;
  // Megatron overlap_p2p_comm (batch_p2p_comm False): the interleaved schedule posts its P2P sends and
  // receives asynchronously (sim/include/moetwin/sim/schedule.hpp, P2pMode). nullopt = "auto": the
  // stack's setting (StackSpec::overlap_p2p_comm). Ignored with vpp == 1, as Megatron does.
  std::optional<bool> overlap_p2p_comm;
  // Megatron-FSDP (--use-megatron-fsdp, data_parallel_sharding_strategy optim_grads_params, Megatron-Bridge's
  // `megatron_fsdp`): parameters, gradients and optimizer states sharded over dp x cp; each layer's
  // parameters all-gathered before its forward and its backward (one layer prefetched, two buffers), its
  // gradients reduce-scattered after its backward, every microbatch (sim/include/moetwin/sim/fsdp.hpp).
  // Replaces the distributed optimizer's once-per-iteration reduce-scatter and all-gather.
  bool megatron_fsdp = false;
  // CPU offload of activations (Megatron-Core --cpu-offloading-num-layers with activation offload;
  // Transformer Engine's cpu_offload.py; Megatron-Bridge's `cpu_offload_layers`): the saved-for-backward
  // tensors of the first N decoder layers are copied to pinned host memory over the instance's host link
  // after their forward and copied back before their backward, on their own stream
  // (sim/include/moetwin/sim/cpu_offload.hpp). 0 = off; 0 <= N < layers; needs pp 1, no recompute, no CUDA
  // graphs (Megatron-Core's and Megatron-Bridge's asserts).
  int cpu_offload_layers = 0;

  // Microbatches per iteration per pipeline: global_batch / (micro_batch * dp).
  int microbatches(const ParallelLayout& p) const { return global_batch / (micro_batch * p.dp); }
  bool operator==(const TrainingConfig&) const = default;
};

enum class RoutingKind { balanced, zipf, group_limited, histogram };

struct RoutingConfig {
  RoutingKind kind = RoutingKind::balanced;
  double zipf_exponent = 0;    // zipf: expert popularity ~ 1 / rank^s
  std::string histogram_path;  // histogram: measured expert loads (CSV or HDF5), resolved path
  std::uint64_t seed = 1;      // root seed; streams derive from (seed, layer, microbatch)
};

// The software stack a scenario runs on: the catalog entry and the NCCL settings of this run (the stack's
// launcher defaults with the scenario's or row's own knobs on top).
struct StackChoice {
  StackSpec spec;
  NcclKnobs nccl;            // resolved: the stack's nccl_env overridden by the run's knobs
  bool from_default = true;  // no [stack] table / stack column: the catalog's default stack
  double p2p_net_chunk_bytes = kNcclDefaultP2pNetChunkBytes;  // resolved for the scenario's instance
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
  StackChoice stack;
  std::string calibration_profile;  // profile name or path; "" = shipped default

  int gpus() const { return nodes * instance.gpus; }
};

// Whether the run's interleaved schedule overlaps its P2P (overlap_p2p_comm): the scenario's setting, else
// its stack's; false with vpp == 1 (Megatron turns it off without interleaving).
bool overlap_p2p_comm(const Scenario& s);

const char* to_string(Recompute recompute);
const char* to_string(Precision precision);
// "bf16", "fp8-hybrid", ... -> Precision; nullopt for another text.
std::optional<Precision> precision_from_string(const std::string& text);
const std::vector<std::string>& precision_names();
// The stack choice for `spec` with `knobs` over its launcher's, resolved for `instance`.
StackChoice make_stack_choice(const StackSpec& spec, const NcclKnobs& knobs, const InstanceSpec& instance,
                              bool from_default);
const char* to_string(RoutingKind kind);

}  // namespace moetwin
