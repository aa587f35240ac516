// Tensor-parallel communication overlap in the replay (scenario training.tp_comm_overlap; Megatron
// --tp-comm-overlap, Transformer Engine userbuffers, te.initialize_ub). With sequence parallelism the
// all-gather before a column-parallel GEMM (QKV, fc1) and the reduce-scatter after a row-parallel GEMM (proj,
// fc2) run through userbuffers, split into chunks and pipelined with their GEMM, so only part of each
// collective is exposed on the compute stream.
//
// Which GEMM overlaps which collective, and how: Transformer Engine's default userbuffers config
// (transformer_engine/pytorch/module/base.py, initialize_ub: methods "ring_exchange" for qkv_fprop,
// fc1_fprop, proj_dgrad, fc2_dgrad; "pipeline" for proj_fprop, fc2_fprop; "bulk" for qkv_dgrad, qkv_wgrad,
// fc1_dgrad, fc1_wgrad), which Megatron-Bridge's `userbuffers_*` TransformerLayerTPOverlapCfg presets
// (megatron/bridge/training/comm_overlap.py) refine per GPU, hidden size and TP with their own num_sm,
// cga_size and num_splits. From memory of those sources; none is in the shared corpus: UNVERIFIED.
//
//  twin op (collective, GEMM part)                         TE buffer     method         GEMM share
//  tp_ag_attn      -> attn_qkv (forward, recompute)         qkv_fprop     ring_exchange  all of it
//  attn_out_proj   -> tp_rs_attn                            proj_fprop    pipeline       all of it
//  tp_ag_mlp       -> mlp_dense fc1 (gate + up)             fc1_fprop     ring_exchange  2/3 of the FLOPs
//  mlp_dense fc2   -> tp_rs_mlp                             fc2_fprop     pipeline       1/3
//  tp_ag_attn_bwd  -> attn_out_proj_bwd dgrad               proj_dgrad    ring_exchange  1/2 (dgrad of
//  dgrad+wgrad) attn_qkv_bwd wgrad || tp_rs_attn_bwd                     qkv_wgrad     bulk           1/2
//  (wgrad) tp_ag_mlp_bwd   -> mlp_dense_bwd fc2 dgrad               fc2_dgrad     ring_exchange  1/6 (2 T h f
//  of 12 T h f) mlp_dense_bwd fc1 wgrad || tp_rs_mlp_bwd                 fc1_wgrad     bulk           1/3 (4
//  T h f of 12 T h f)
//
// Not overlapped (unchanged): the embedding's and output layer's TP collectives, the cross-entropy
// all-reduce, MLA's latent all-gather and reduce-scatter (MLA's down/up projections are not userbuffers
// linears in the twin's reading), the shared experts' collectives. TE's qkv_dgrad bulk overlap (the
// backward all-gather of the saved layer-norm output for the wgrad) has no op in the twin to overlap.
//
// Exposed time. A pipelined overlap (ring_exchange, pipeline) splits the collective of time C and its GEMM
// share of time G into n = tp chunks; GEMM chunk i needs communication chunk i (all-gather; a reduce-scatter
// mirrors it: communication chunk i needs GEMM chunk i). The pipeline's makespan is c + (n - 1) max(c, g) + g
// with c = C/n, g = G/n, so beyond the GEMM it exposes
//     max(C/n, C - G + G/n):
// one communication chunk when the communication is shorter than the GEMM, else what the communication
// exceeds the GEMM by plus the GEMM's last chunk. A bulk overlap runs the whole collective beside an
// independent GEMM (the reduce-scatter of the dgrad output beside the wgrad): max(0, C - G).
// SMs: ring_exchange moves chunks with the copy engines (TE use_ce, set_sm_margin off), so its GEMM keeps
// every SM. pipeline and bulk run the reduction / copy in `tp_overlap_sms` SMs the GEMM is launched without
// (set_sm_margin): the overlapped GEMM share takes sms / (sms - tp_overlap_sms) of its time.
#pragma once

namespace moetwin {

// How TE overlaps one collective with its GEMM (userbuffers method).
enum class TpOverlapMethod { ring_exchange, pipeline, bulk };

// SMs the userbuffers pipeline and bulk kernels hold (TE's default config num_sm = 16 with cga_size 2;
// Megatron-Bridge's presets use 2-32 per GEMM), bounds of SimProfile::tp_overlap_sms.
constexpr int kTpOverlapSmsDefault = 16;
constexpr int kTpOverlapSmsMin = 1;
constexpr int kTpOverlapSmsMax = 32;

// Time a pipelined overlap of `comm_s` communication with `gemm_s` of GEMM in `chunks` chunks leaves exposed
// beyond the GEMM, s: max(C/n, C - G + G/n). std::invalid_argument for chunks < 1 or a negative time.
double pipelined_exposed_s(double comm_s, double gemm_s, int chunks);
// The same for a bulk overlap (the collective beside an independent GEMM), s: max(0, C - G).
double bulk_exposed_s(double comm_s, double gemm_s);
// Exposed time of `method` (pipelined methods in `chunks` chunks), s.
double exposed_s(TpOverlapMethod method, double comm_s, double gemm_s, int chunks);

// The time of a GEMM share of `gemm_s` overlapped by `method` on a GPU of `gpu_sms` SMs of which the
// userbuffers kernels hold `overlap_sms` (pipeline, bulk: set_sm_margin), s. ring_exchange: unchanged.
// std::invalid_argument unless 1 <= overlap_sms < gpu_sms.
double overlapped_gemm_s(TpOverlapMethod method, double gemm_s, int gpu_sms, int overlap_sms);

}  // namespace moetwin
