// Layer ops as a documented table: every op the workload builder (workload.cpp) emits, one record each
// with the host launches it is charged, its FLOP and byte formulas as text, the element size, and the
// source of those figures. The builder takes each op's label, class and launch count from its record
// (no bare integers in the emitters); the FLOP and byte computations stay next to the emitter, and
// layer_ops_test checks the builder's ops against the formulas written here. `moetwin catalog ops`
// lists the table.
//
// Launches are host launches per call: each costs SimProfile::launch_s in a forward (Python + PyTorch
// eager dispatch) and backward_launch_s in a backward (C++ autograd). A count stands for the Megatron-Core
// / Transformer Engine kernels named in its source; counts marked "estimate" are a reading of those
// modules' forward and backward, not a trace count. Per-layer host time beyond the launches
// (layer_host_s, moe_host_s) is fitted and charged separately. In FP8 recipes every linear op adds one
// C++-issued cast-transpose launch (grouped_gemm_launch_s) and runs its GEMMs on FP8 operands.
#pragma once

#include <cstdint>
#include <span>

#include "moetwin/engine/program.hpp"
#include "moetwin/models/compute_model.hpp"

namespace moetwin {

// What an op is, for the compute model (the four compute classes of compute_model.hpp) or the
// communication it stands for.
enum class LayerOpClass : std::uint8_t {
  gemm,          // one or a few GEMMs with their small epilogue kernels (TE Linear / LayerNormLinear)
  grouped_gemm,  // the local experts' GEMMs (TE GroupedLinear)
  attention,     // fused attention (FlashAttention / cuDNN)
  elementwise,   // memory-bound kernels (HBM roofline)
  permute,       // MoE token gather / scatter, timed by the MoE cost model
  all_to_all,    // the EP dispatch / combine, timed by the MoE cost model on the EP stream or compute stream
  collective,    // an NCCL collective of a TP, EP, DP or expert-DP group (CommCostModel)
  p2p,           // a pipeline send / receive (CommCostModel)
  host_copy,     // a copy between the GPU and host memory over the host link (CPU offload, cpu_offload.hpp)
};
const char* to_string(LayerOpClass cls);
// The compute model's class of a gemm, grouped_gemm, attention or elementwise op; std::logic_error for a
// communication class.
OpClass compute_class(LayerOpClass cls);

struct LayerOp {
  const char* name = "";  // the op's label in programs, traces and reports
  // The pass it belongs to; forward ops also run as OpPhase::recompute (full recompute re-runs the
  // layer's forward, selective recompute core attention).
  OpPhase phase = OpPhase::forward;
  LayerOpClass cls = LayerOpClass::elementwise;
  int launches = 1;  // host launches per call
  // C++-issued cuBLASLt calls per local expert (SimProfile::grouped_gemm_launch_s each); 0 elsewhere.
  int gemm_calls_per_expert = 0;
  const char* flops = "0";  // FLOPs per call per rank, symbols of layer_op_symbols()
  const char* bytes = "";   // HBM bytes per call (compute) or bytes per rank (communication)
  int dtype_bytes = 2;      // bytes per element the formulas count (bf16 activations and weights: 2)
  const char* source = "";  // where the launch count and the formulas come from
};

// One symbol of the formulas and its meaning.
struct LayerOpSymbol {
  const char* symbol;
  const char* meaning;
};

namespace layer_ops {

// --- attention (GQA / MHA) ---
inline constexpr LayerOp kTpAgAttn{
    .name = "tp.ag.attn",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source =
        "sequence-parallel all-gather of the layer input before the column-parallel QKV (one NCCL call)"};
inline constexpr LayerOp kAttnQkv{
    .name = "attn.qkv",
    .cls = LayerOpClass::gemm,
    .launches = 5,
    .flops = "2 T h (q + 2 kv) / t",
    .bytes = "2 (h (q + 2 kv) / t + T (h + (q + 2 kv) / t))",
    .source = "estimate: TE LayerNormLinear (RMSNorm, fused QKV GEMM), the q/k/v split and RoPE on q and k"};
inline constexpr LayerOp kAttnCore{
    .name = "attn.core",
    .cls = LayerOpClass::attention,
    .launches = 2,
    .flops = "b s^2 (q + v) / t",
    .bytes = "2 T (2 q + 2 v) / t",
    .source =
        "causal: half of 2 s^2 (q + v) per sequence; estimate: TE DotProductAttention's fused kernel "
        "and one layout copy; time from the GPU's measured attention kernels by FLOPs per call and head "
        "width where its profile has them, else as a GEMM of its shape"};
inline constexpr LayerOp kAttnOutProj{.name = "attn.out_proj",
                                      .cls = LayerOpClass::gemm,
                                      .launches = 1,
                                      .flops = "2 T v h / t",
                                      .bytes = "2 (v h / t + T (v / t + h))",
                                      .source = "TE Linear (row-parallel): one GEMM"};
inline constexpr LayerOp kTpRsAttn{
    .name = "tp.rs.attn",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of the row-parallel output (one NCCL call)"};

// --- attention (MLA) ---
inline constexpr LayerOp kAttnMlaDown{
    .name = "attn.mla_down",
    .cls = LayerOpClass::gemm,
    .launches = 4,
    .flops = "2 (T / t) h d",
    .bytes = "2 (h d + (T / t) (h + d))",
    .source =
        "down projections, TP-duplicated on the rank's sequence shard (T / t tokens); estimate: input "
        "RMSNorm, q and kv down GEMMs, split of the kv latent and its rope part"};
inline constexpr LayerOp kTpAgMlaLatent{
    .name = "tp.ag.mla_latent",
    .cls = LayerOpClass::collective,
    .bytes = "2 T d",
    .source = "sequence-parallel all-gather of the compressed q / kv for the head-split up projections"};
inline constexpr LayerOp kAttnMlaUp{
    .name = "attn.mla_up",
    .cls = LayerOpClass::gemm,
    .launches = 6,
    .flops = "2 T u / t",
    .bytes = "2 (u / t + T (d + (q + v + kn) / t))",
    .source = "estimate: q and kv latent RMSNorms, q and kv up GEMMs, RoPE on the q and k rope parts"};

// --- dense MLP ---
inline constexpr LayerOp kTpAgMlp{
    .name = "tp.ag.mlp",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel all-gather before the column-parallel fc1 (one NCCL call)"};
inline constexpr LayerOp kMlpDense{
    .name = "mlp.dense",
    .cls = LayerOpClass::gemm,
    .launches = 4,
    .flops = "6 T h f / t",
    .bytes = "2 (3 h f / t + T (2 h + 3 f / t))",
    .source =
        "SwiGLU: fc1 (gate and up, 2 f) and fc2 (f); estimate: TE LayerNormMLP's RMSNorm, fc1 GEMM, "
        "SwiGLU, fc2 GEMM"};
inline constexpr LayerOp kTpRsMlp{
    .name = "tp.rs.mlp",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of fc2's output (one NCCL call)"};

// --- MoE block ---
inline constexpr LayerOp kMoeRouter{
    .name = "moe.router",
    .cls = LayerOpClass::gemm,
    .launches = 8,
    .flops = "2 (T / t) h E",
    .bytes = "2 (h E + (T / t) (h + 4 E))",
    .source =
        "gating GEMM on the rank's sequence shard; estimate: pre-MLP RMSNorm, gating GEMM, score "
        "function, top-k, probability normalisation, routing-map scatter, aux loss, tokens per expert"};
inline constexpr LayerOp kEpCountsAllgather{
    .name = "ep.counts_allgather",
    .cls = LayerOpClass::collective,
    .bytes = "8 E ep etp",
    .dtype_bytes = 8,
    .source =
        "dropless alltoall dispatcher: gather_from_sequence_parallel_region of the [E] int64 token "
        "counts over the EP group before their D2H copy (one NCCL call)"};
inline constexpr LayerOp kMoePermute{
    .name = "moe.permute",
    .cls = LayerOpClass::permute,
    .launches = 6,
    .bytes = "4 c h",
    .source =
        "unfused permute (read and write every routed copy, MoE cost model); estimate: routing-map "
        "mask and index build (3), token gather, probability gather, split sizes"};
inline constexpr LayerOp kEpDispatch{
    .name = "ep.dispatch",
    .cls = LayerOpClass::all_to_all,
    .launches = 2,
    .bytes = "2 c h",
    .source =
        "the dispatcher's two calls: NCCL all-to-all of tokens and of probabilities (alltoall), or "
        "DeepEP's get_dispatch_layout and dispatch; time from the dispatcher model"};
inline constexpr LayerOp kMoeExperts{
    .name = "moe.experts",
    .cls = LayerOpClass::grouped_gemm,
    .launches = 4,
    .gemm_calls_per_expert = 2,
    .flops = "6 Te h fe / etp",
    .bytes = "2 (3 ne h fe / etp + Te (2 h + 3 fe / etp))",
    .source =
        "TEGroupedMLP's Python ops: fc1 GroupedLinear, activation, fc2 GroupedLinear, probability "
        "scaling (launch_s each whatever the number of local experts); GroupedLinear loops over the "
        "local experts in C++: fc1 and fc2 per expert"};
inline constexpr LayerOp kTpAgSharedExpert{
    .name = "tp.ag.shared_expert",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel all-gather before the shared expert's fc1 (one NCCL call)"};
inline constexpr LayerOp kMoeSharedExpert{
    .name = "moe.shared_expert",
    .cls = LayerOpClass::gemm,
    .launches = 3,
    .flops = "6 T h fs / t",
    .bytes = "2 (3 h fs / t + T (2 h + 3 fs / t))",
    .source = "estimate: fc1 GEMM, SwiGLU, fc2 GEMM (the norm is the router's)"};
inline constexpr LayerOp kTpRsSharedExpert{
    .name = "tp.rs.shared_expert",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of the shared expert's output (one NCCL call)"};
inline constexpr LayerOp kEpCombine{
    .name = "ep.combine",
    .cls = LayerOpClass::all_to_all,
    .launches = 2,
    .bytes = "2 c h",
    .source =
        "estimate: the combine all-to-all (or DeepEP combine) and the output reshape; time from the "
        "dispatcher model"};
inline constexpr LayerOp kMoeUnpermute{
    .name = "moe.unpermute",
    .cls = LayerOpClass::permute,
    .launches = 4,
    .bytes = "4 c h",
    .source =
        "unfused unpermute (MoE cost model); estimate: probability multiply, zero-filled output, "
        "scatter-add to token order, reshape"};

// --- backward: attention ---
inline constexpr LayerOp kTpAgAttnBwd{
    .name = "tp.ag.attn_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel all-gather of the output gradient (the forward reduce-scatter's mirror)"};
inline constexpr LayerOp kAttnOutProjBwd{.name = "attn.out_proj_bwd",
                                         .phase = OpPhase::backward,
                                         .cls = LayerOpClass::gemm,
                                         .launches = 2,
                                         .flops = "4 T v h / t",
                                         .bytes = "4 (v h / t + T (v / t + h))",
                                         .source = "dgrad and wgrad GEMMs (2x the forward FLOPs and bytes)"};
inline constexpr LayerOp kAttnCoreBwd{
    .name = "attn.core_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::attention,
    .launches = 3,
    .flops = "a b s^2 (q + v) / t",
    .bytes = "4 T (2 q + 2 v) / t",
    .source =
        "FlashAttention backward: preprocess (rowsum of dO x O), the main kernel, dq conversion; "
        "a = attention_backward_factor (5 GEMMs vs 2); time as attn.core's, from the backward curves"};
inline constexpr LayerOp kAttnQkvBwd{
    .name = "attn.qkv_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 6,
    .flops = "4 T h (q + 2 kv) / t",
    .bytes = "4 (h (q + 2 kv) / t + T (h + (q + 2 kv) / t))",
    .source =
        "estimate: RoPE backward on q and k, the q/k/v gradient concat, dgrad and wgrad GEMMs, RMSNorm "
        "backward"};
inline constexpr LayerOp kTpRsAttnBwd{
    .name = "tp.rs.attn_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of the input gradient (the forward all-gather's mirror)"};
inline constexpr LayerOp kAttnMlaUpBwd{
    .name = "attn.mla_up_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 8,
    .flops = "4 T u / t",
    .bytes = "4 (u / t + T (d + (q + v) / t))",
    .source =
        "estimate: dgrad and wgrad of the q and kv up GEMMs (4), both latent RMSNorms' and both "
        "RoPEs' backward (4)"};
inline constexpr LayerOp kTpRsMlaLatentBwd{
    .name = "tp.rs.mla_latent_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T d",
    .source = "reduce-scatter of the latent gradient (the forward all-gather's mirror)"};
inline constexpr LayerOp kAttnMlaDownBwd{
    .name = "attn.mla_down_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 5,
    .flops = "4 (T / t) h d",
    .bytes = "4 (h d + (T / t) (h + d))",
    .source = "estimate: dgrad and wgrad of the q and kv down GEMMs (4), input RMSNorm backward"};

// --- backward: dense MLP ---
inline constexpr LayerOp kTpAgMlpBwd{.name = "tp.ag.mlp_bwd",
                                     .phase = OpPhase::backward,
                                     .cls = LayerOpClass::collective,
                                     .bytes = "2 T h",
                                     .source = "sequence-parallel all-gather of fc2's output gradient"};
inline constexpr LayerOp kMlpDenseBwd{
    .name = "mlp.dense_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 8,
    .flops = "12 T h f / t",
    .bytes = "4 (3 h f / t + T (2 h + 3 f / t))",
    .source =
        "estimate: fc2 and fc1 dgrad and wgrad (4), SwiGLU backward, RMSNorm backward, the residual "
        "gradient add and the fc1 input-gradient accumulation"};
inline constexpr LayerOp kTpRsMlpBwd{.name = "tp.rs.mlp_bwd",
                                     .phase = OpPhase::backward,
                                     .cls = LayerOpClass::collective,
                                     .bytes = "2 T h",
                                     .source = "sequence-parallel reduce-scatter of fc1's input gradient"};

// --- backward: MoE block ---
inline constexpr LayerOp kMoeUnpermuteBwd{
    .name = "moe.unpermute_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::permute,
    .launches = 4,
    .bytes = "4 c h",
    .source = "estimate: the gather mirroring unpermute's scatter-add and the probability gradient"};
inline constexpr LayerOp kEpCombineBwd{
    .name = "ep.combine_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::all_to_all,
    .launches = 2,
    .bytes = "2 c h",
    .source = "the gradient of combine is dispatch-shaped: the same two calls as ep.dispatch"};
inline constexpr LayerOp kTpAgSharedExpertBwd{
    .name = "tp.ag.shared_expert_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel all-gather of the shared expert's output gradient"};
inline constexpr LayerOp kMoeSharedExpertBwd{
    .name = "moe.shared_expert_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 6,
    .flops = "12 T h fs / t",
    .bytes = "4 (3 h fs / t + T (2 h + 3 fs / t))",
    .source = "estimate: fc2 and fc1 dgrad and wgrad (4), SwiGLU backward, the input-gradient add"};
inline constexpr LayerOp kTpRsSharedExpertBwd{
    .name = "tp.rs.shared_expert_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of the shared expert's input gradient"};
inline constexpr LayerOp kMoeExpertsBwd{
    .name = "moe.experts_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::grouped_gemm,
    .launches = 8,
    .gemm_calls_per_expert = 4,
    .flops = "12 Te h fe / etp",
    .bytes = "4 (3 ne h fe / etp + Te (2 h + 3 fe / etp))",
    .source =
        "twice the forward's Python ops (each GroupedLinear backward, activation and probability "
        "scaling backward); dgrad and wgrad of fc1 and fc2 per local expert from C++"};
// delay_wgrad_compute (combined 1F1B): kMoeExpertsBwd's two halves, emitted apart.
inline constexpr LayerOp kMoeExpertsDgrad{
    .name = "moe.experts_dgrad",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::grouped_gemm,
    .launches = 4,
    .gemm_calls_per_expert = 2,
    .flops = "6 Te h fe / etp",
    .bytes = "2 (3 ne h fe / etp + Te (2 h + 3 fe / etp))",
    .source =
        "delay_wgrad_compute: the experts' data-gradient half of moe.experts_bwd (Megatron-Core "
        "TransformerLayerSchedulePlan mlp backward without its backward_dw); fc1 and fc2 dgrad per expert"};
inline constexpr LayerOp kMoeExpertsWgrad{
    .name = "moe.experts_wgrad",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::grouped_gemm,
    .launches = 4,
    .gemm_calls_per_expert = 2,
    .flops = "6 Te h fe / etp",
    .bytes = "2 (3 ne h fe / etp + Te (2 h + 3 fe / etp))",
    .source =
        "delay_wgrad_compute: the experts' weight-gradient half (Megatron-Core backward_dw, mlp_bwd_dw in "
        "the "
        "combined 1F1B), issued after the dgrad, off the chain the dispatch-backward all-to-all waits on"};
inline constexpr LayerOp kEpDispatchBwd{
    .name = "ep.dispatch_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::all_to_all,
    .launches = 2,
    .bytes = "2 c h",
    .source = "the gradient of dispatch is combine-shaped: the same two calls as ep.combine"};
inline constexpr LayerOp kMoePermuteBwd{
    .name = "moe.permute_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::permute,
    .launches = 4,
    .bytes = "4 c h",
    .source = "estimate: the scatter-add mirroring permute's gather and the probability gradient"};
inline constexpr LayerOp kMoeRouterBwd{
    .name = "moe.router_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 8,
    .flops = "4 (T / t) h E",
    .bytes = "4 (h E + (T / t) (h + 4 E))",
    .source =
        "estimate: one backward kernel per forward kernel (gating dgrad and wgrad, score, top-k, "
        "aux-loss and norm backward)"};

// --- embedding, output layer and loss, MTP ---
inline constexpr LayerOp kEmbedding{
    .name = "embedding",
    .cls = LayerOpClass::elementwise,
    .launches = 4,
    .bytes = "4 T h",
    .source =
        "read and write T h bf16 values; estimate: VocabParallelEmbedding's out-of-range mask, index "
        "shift, lookup and masked zero-fill"};
inline constexpr LayerOp kTpRsEmbedding{
    .name = "tp.rs.embedding",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "reduce-scatter of the vocab-parallel embedding into the sequence-parallel region"};
inline constexpr LayerOp kTpAgEmbeddingBwd{
    .name = "tp.ag.embedding_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "all-gather of the embedding output gradient (the forward reduce-scatter's mirror)"};
inline constexpr LayerOp kEmbeddingBwd{
    .name = "embedding_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::elementwise,
    .launches = 4,
    .bytes = "6 T h",
    .source =
        "read the gradient, read-modify-write the table rows (3 T h bf16 values); estimate: "
        "embedding_dense_backward's sort, count, scatter-add and the mask"};
inline constexpr LayerOp kTpAgOutput{
    .name = "tp.ag.output",
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel all-gather before the vocab-parallel output layer"};
inline constexpr LayerOp kOutputLayer{
    .name = "output_layer",
    .cls = LayerOpClass::gemm,
    .launches = 3,
    .flops = "2 T h V / t",
    .bytes = "2 (h V / t + T (h + V / t))",
    .source = "estimate: final RMSNorm, the logits GEMM, the fp32 cast of the logits"};
inline constexpr LayerOp kLossCrossEntropy{
    .name = "loss.cross_entropy",
    .cls = LayerOpClass::elementwise,
    .launches = 10,
    .bytes = "12 T V / t",
    .dtype_bytes = 4,
    .source =
        "vocab-parallel cross-entropy: fp32 logits read / written ~3 times; estimate: max, subtract, "
        "target mask (2), masked gather, exp, sum, log, loss and its mean"};
inline constexpr LayerOp kTpArCrossEntropy{
    .name = "tp.ar.cross_entropy",
    .cls = LayerOpClass::collective,
    .bytes = "12 T",
    .dtype_bytes = 4,
    .source = "the max, sum and target-logit all-reduces (3 fp32 per token; one NCCL call charged)"};
inline constexpr LayerOp kLossCrossEntropyBwd{
    .name = "loss.cross_entropy_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::elementwise,
    .launches = 4,
    .bytes = "8 T V / t",
    .dtype_bytes = 4,
    .source =
        "read the saved softmax, write the logit gradient (fp32); estimate: softmax, subtract the "
        "one-hot target, scale by the loss gradient, mask"};
inline constexpr LayerOp kOutputLayerBwd{.name = "output_layer_bwd",
                                         .phase = OpPhase::backward,
                                         .cls = LayerOpClass::gemm,
                                         .launches = 3,
                                         .flops = "4 T h V / t",
                                         .bytes = "4 (h V / t + T (h + V / t))",
                                         .source = "estimate: dgrad and wgrad GEMMs, final RMSNorm backward"};
inline constexpr LayerOp kTpRsOutputBwd{
    .name = "tp.rs.output_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "2 T h",
    .source = "sequence-parallel reduce-scatter of the output layer's input gradient"};
inline constexpr LayerOp kTpAgMtpEh{
    .name = "tp.ag.mtp_eh",
    .cls = LayerOpClass::collective,
    .bytes = "4 T h",
    .source = "all-gather of the concatenated [embedding, hidden] (2 h per token) before eh_proj"};
inline constexpr LayerOp kMtpEhProj{
    .name = "mtp.eh_proj",
    .cls = LayerOpClass::gemm,
    .launches = 4,
    .flops = "4 T h^2 / t",
    .bytes = "2 (2 h^2 / t + 3 T h)",
    .source = "MTP block after its embedding: enorm, hnorm, the concat and eh_proj (2 h -> h, TP-split)"};
inline constexpr LayerOp kMtpEhProjBwd{
    .name = "mtp.eh_proj_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::gemm,
    .launches = 4,
    .flops = "8 T h^2 / t",
    .bytes = "4 (2 h^2 / t + 3 T h)",
    .source = "estimate: eh_proj dgrad and wgrad, enorm and hnorm backward"};
inline constexpr LayerOp kTpRsMtpEhBwd{
    .name = "tp.rs.mtp_eh_bwd",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "4 T h",
    .source = "reduce-scatter of the concatenated input gradient (the forward all-gather's mirror)"};

// --- pipeline ---
inline constexpr LayerOp kPpActivation{
    .name = "pp.activation",
    .cls = LayerOpClass::p2p,
    .bytes = "2 T h / t",
    .source = "one batched NCCL send / receive of the sequence-parallel activations to the next stage"};
inline constexpr LayerOp kPpGradient{
    .name = "pp.gradient",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::p2p,
    .bytes = "2 T h / t",
    .source = "one batched NCCL send / receive of the activation gradients to the previous stage"};

// --- data parallel and optimizer ---
inline constexpr LayerOp kDpParamAllGather{
    .name = "dp.param_all_gather",
    .phase = OpPhase::optimizer,
    .cls = LayerOpClass::collective,
    .bytes = "pb P",
    .source = "distributed optimizer: all-gather of the chunk's dense parameters over dp x cp (bf16)"};
inline constexpr LayerOp kEdpParamAllGather{
    .name = "edp.param_all_gather",
    .phase = OpPhase::optimizer,
    .cls = LayerOpClass::collective,
    .bytes = "pb Pe",
    .source = "all-gather of the chunk's expert parameters over the expert-data-parallel group (bf16)"};
inline constexpr LayerOp kDpGradReduceScatter{
    .name = "dp.grad_reduce_scatter",
    .phase = OpPhase::optimizer,
    .cls = LayerOpClass::collective,
    .bytes = "gb P",
    .dtype_bytes = 4,
    .source = "reduce-scatter of the chunk's dense gradients over dp x cp (fp32)"};
inline constexpr LayerOp kEdpGradReduceScatter{
    .name = "edp.grad_reduce_scatter",
    .phase = OpPhase::optimizer,
    .cls = LayerOpClass::collective,
    .bytes = "gb Pe",
    .dtype_bytes = 4,
    .source = "reduce-scatter of the chunk's expert gradients over the expert-data-parallel group (fp32)"};
// --- Megatron-FSDP (fsdp.hpp) ---
inline constexpr LayerOp kFsdpParamAllGather{
    .name = "fsdp.param_all_gather",
    .cls = LayerOpClass::collective,
    .bytes = "pb Pu",
    .source =
        "Megatron-FSDP: all-gather of one unit's parameters over dp x cp before its forward and its "
        "backward (bf16; one unit prefetched, two buffers)"};
inline constexpr LayerOp kFsdpGradReduceScatter{
    .name = "fsdp.grad_reduce_scatter",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::collective,
    .bytes = "gb Pu",
    .dtype_bytes = 4,
    .source =
        "Megatron-FSDP: reduce-scatter of one unit's gradients over dp x cp after its backward, every "
        "microbatch"};
// --- CPU offload of activations (cpu_offload.hpp) ---
inline constexpr LayerOp kCpuOffloadD2h{
    .name = "offload.d2h",
    .cls = LayerOpClass::host_copy,
    .launches = 9,
    .bytes = "A",
    .source =
        "Transformer Engine cpu_offload.py bulk_offload_group: one pinned-memory copy per saved tensor of an "
        "offloaded layer on the D2H stream; estimate: the memory model's saved tensors of a GQA layer "
        "(norm input and output, QKV, attention output, softmax statistics) and a dense MLP (norm input and "
        "output, fc1 output, activation output)"};
inline constexpr LayerOp kCpuOffloadH2d{
    .name = "offload.h2d",
    .phase = OpPhase::backward,
    .cls = LayerOpClass::host_copy,
    .launches = 9,
    .bytes = "A",
    .source = "Transformer Engine cpu_offload.py bulk_reload_group: the same tensors back on the H2D stream"};
inline constexpr LayerOp kCpuOffloadWait{
    .name = "offload.wait",
    .cls = LayerOpClass::elementwise,
    .bytes = "0",
    .source =
        "Transformer Engine cpu_offload.py: torch.cuda.current_stream().wait_stream(d2h or h2d stream) at a "
        "layer-window commit: one host call (an event record and wait), no kernel, no device time"};
inline constexpr LayerOp kOptimizerAdam{
    .name = "optimizer.adam",
    .phase = OpPhase::optimizer,
    .cls = LayerOpClass::elementwise,
    .launches = 12,
    .bytes = "ob Ps",
    .dtype_bytes = 4,
    .source =
        "Adam over the local shard: read fp32 param, grad, m, v, write param, m, v and the bf16 copy; "
        "estimate: grad norm, clip, found-inf, the "
        "multi-tensor Adam and the bf16 copy over the dense and expert buffers"};

}  // namespace layer_ops

// Every record above, in the order a layer runs them (forward, backward, then embedding, loss, MTP,
// pipeline and optimizer ops).
std::span<const LayerOp* const> layer_op_table();
// The formulas' symbols.
std::span<const LayerOpSymbol> layer_op_symbols();
// The record named `name`; nullptr when none.
const LayerOp* find_layer_op(const char* name);

}  // namespace moetwin
