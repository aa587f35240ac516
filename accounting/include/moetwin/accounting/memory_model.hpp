// Per-GPU memory of a Megatron-Core MoE training job: weights, gradients, optimizer states,
// activations held for backward (by recompute mode and pipeline schedule), logits/loss buffers,
// dispatcher buffers and a fixed reserve. Every pipeline stage is evaluated; the most loaded one sets
// the verdict. All sizes in bytes. Formulas and sources are documented in memory_model.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// Fixed reserve per GPU for the CUDA context, NCCL communicators and caching-allocator fragmentation
// (derivation in memory_model.cpp), bytes.
extern const double kMemoryReserveBytes;

// Activations one decoder layer holds for backward, for one microbatch, on one GPU, bytes.
struct LayerActivations {
  double attention = 0;  // input norm .. output projection input
  double mlp = 0;        // pre-MLP norm .. expert outputs
  double total() const { return attention + mlp; }
};
// `moe` selects the MLP kind. With Recompute::full only the layer input is kept (all in `attention`).
LayerActivations layer_activation_bytes(const ModelSpec& model, bool moe, const ParallelLayout& parallel,
                                        int micro_batch, int seq_length, Recompute recompute);

// The order of Megatron's pipeline schedules on one stage: forward and backward passes of
// (microbatch, virtual chunk), and the in-flight peak. vpp == 1 is 1F1B (warm-up pp - stage - 1);
// vpp > 1 is the interleaved schedule (warm-up (pp - stage - 1) * 2 + (vpp - 1) * pp, all when
// microbatches == pp), both capped by the total (megatron/core/pipeline_parallel/schedules.py).
struct InFlight {
  std::vector<int> per_chunk;  // chunk-microbatches held per virtual chunk at the peak
  int total() const;
};
// CPU offload of activations (training.cpu_offload_layers; sim/include/moetwin/sim/cpu_offload.hpp):
// Transformer Engine's layer_window_map. For offload group c (decoder layer c, 0 .. offloaded - 1) the layer
// at whose forward end the compute stream waits for group c's copy to the host (its GPU buffers freed then),
// and at whose backward start group c's reload is issued. offloaded in [1, layers):
// w[c] = (layers / offloaded) (c + 1) - 1, plus c + 1 for the first layers % offloaded groups and that
// remainder for the rest (TE pytorch/cpu_offload.py AsyncDoubleBufferGroupOffloadHandler, as recalled:
// UNVERIFIED). Empty for offloaded <= 0.
std::vector<int> offload_window_map(int layers, int offloaded);
// The most activation bytes one microbatch holds on the GPU under offload of the first `offloaded` of the
// layers whose saved bytes are `layer_bytes` (all decoder layers, in order): in forward, at the end of
// layer k every layer <= k is held but the groups c whose copy was waited for at an earlier layer
// (w[c] < k); in backward, the L - N layers kept plus the one group being reloaded. With offloaded 0: the
// sum.
double offload_peak_bytes(const std::vector<double>& layer_bytes, int offloaded);

// `chunk_bytes[v]` weighs virtual chunk v; the peak is the maximum over the schedule of the summed
// weights of the forwards whose backward has not run yet.
InFlight peak_in_flight(int pp, int vpp, int stage, int microbatches, const std::vector<double>& chunk_bytes);

// DeepEP normal-mode buffers (NVLink + RDMA) for an EP group of `ep_ranks`, hidden size `hidden`,
// `sms` SMs, bytes: DeepEP's get_nvl/rdma_buffer_size_hint as Megatron-Core sizes them.
double deepep_buffer_bytes(int hidden, int ep_ranks, int sms);

struct StageMemory {
  int stage = 0;
  std::int64_t dense_params = 0;   // non-expert parameters on one GPU of the stage
  std::int64_t expert_params = 0;  // routed-expert parameters on one GPU of the stage
  int decoder_layers = 0;
  int mtp_layers = 0;
  bool embedding = false;
  bool loss = false;
  InFlight in_flight;      // chunk-microbatches held at the activation peak
  double weights = 0;      // bf16 parameters, 2 B/param
  double gradients = 0;    // fp32 main-grad buffers, 4 B/param
  double optimizer = 0;    // fp32 master + Adam m, v: 12 B/param, sharded by the distributed optimizer
  double activations = 0;  // layer activations of the in-flight chunk-microbatches (+ recompute working set)
  double logits = 0;       // output-layer logits and loss buffers (loss stage only)
  double dispatcher = 0;   // token-dispatcher buffers
  // FP8 recipes: Transformer Engine's FP8 weight copy and its transpose (1 + 1 B/param, kept across the
  // microbatches of an iteration) and the amax histories (3 tensors per GEMM x history x 4 B); 0 in bf16.
  // Activations stay counted at bf16 (TE saves FP8 inputs for wgrad too, but Megatron's recompute and the
  // MoE buffers keep bf16 copies): a conservative bound.
  double fp8 = 0;
  double reserve = 0;  // kMemoryReserveBytes
  double total() const {
    return weights + gradients + optimizer + activations + logits + dispatcher + fp8 + reserve;
  }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  // one per pipeline stage
  int worst_stage = 0;              // stage with the largest total (first on ties)
  double hbm_bytes = 0;             // GPU HBM capacity (catalog)
  bool fits = false;                // worst().total() <= hbm_bytes
  const StageMemory& worst() const { return stages.at(static_cast<std::size_t>(worst_stage)); }
};

MemoryEstimate estimate_memory(const Scenario& scenario, const PipelineLayout& layout);

// The HBM verdict of an estimate as one line for warnings: "" when it fits, else
// "does not fit in HBM: 79.9 GiB needed per GPU on stage 1 (the most loaded), 74.5 GiB available
// (H100-SXM); `moetwin inspect` gives the breakdown". What predict, recommend and sweep say about a
// layout that would not run (out of memory) however fast it is predicted.
std::string hbm_fit_warning(const Scenario& scenario, const MemoryEstimate& memory);

}  // namespace moetwin
