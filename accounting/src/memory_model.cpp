// Memory model. Sources:
//  - States: Megatron-Core mixed precision with bf16 parameters keeps bf16 weights (2 B/param), fp32
//    main-grad buffers (4 B/param: bf16 forces accumulate_allreduce_grads_in_fp32) and, in the
//    optimizer, an fp32 master copy plus Adam's exp_avg and exp_avg_sq (12 B/param). The distributed
//    optimizer shards the 12 B over the data-parallel group (dp x cp) for dense parameters and over the
//    expert-data-parallel group (edp) for expert parameters (megatron/core/optimizer/distrib_optimizer.py;
//    Rajbhandari et al. 2020, ZeRO stage 1).
//  - Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
//    Models" (arXiv:2205.05198), section 4: with tensor + sequence parallelism a GPT layer holds
//    s b h (34 / t + 5 a s / (h t)) bytes. Adapted to what Megatron-Core saves today:
//      * flash/cuDNN attention keeps no s^2 tensors, only its fp32 softmax statistics (4 B x heads);
//      * no dropout (p = 0 in these models), so no 1-byte masks; RMSNorm instead of LayerNorm;
//      * GQA/MLA projection widths instead of 3h, SwiGLU (fc1 output 2 f, activation output f);
//      * MoE: each token is held once per selected expert (top-k copies) for the expert GEMMs:
//        the expert input (dispatch output) and the expert output (kept to back-propagate the router
//        probabilities in unpermute), fc1 output and activation output; router logits and scores in fp32.
//    With those changes the GPT case (q = kv = h, GeLU 4h MLP) gives 32 s b h / t, the paper's 34 less its
//    two dropout masks. Per layer and microbatch, T = mb x seq / cp tokens, t = tp, elements x 2 B:
//      attention GQA: T/t (2h + q + 2kv + q)            [norm in, norm out, Q K V, attention output]
//      attention MLA: T/t (2h + (r_q + r_kv + d_r) + (r_q + r_kv) + 2 n (d_qk + d_r) + 2 n d_v)
//                     [norm in/out, compressed q/kv (norm inputs), norm outputs (up-projection inputs),
//                      Q and K with the rope part, V, attention output]
//      + core-attention softmax statistics 4 B x n T / t (dropped by selective recompute)
//      MLP dense:     T/t (2h + 3f)
//      MLP MoE:       T/t (2h + 3 f_s) + (T/t) k (2 etp h + 3 f_e) + 8 B x E T/t (router, fp32)
//  - Recompute: selective (Megatron's default module "core_attn") checkpoints core attention; its inputs
//    Q, K, V stay saved as checkpoint inputs and its output is saved by the output projection, so what is
//    dropped is the kernel's internal state: with flash attention only the softmax statistics. Full
//    (uniform, 1 layer per checkpoint) keeps only each layer's input, 2 B x h T / t, plus one layer's full
//    activations while that layer is recomputed in backward.
//  - Megatron-FSDP: states sharded over dp x cp plus two gathered unit buffers (sim/fsdp.hpp; below).
//  - CPU offload of activations: the peak of Transformer Engine's window map over the decoder layers
//    (offload_peak_bytes; sim/cpu_offload.hpp), not their sum.
//  - In-flight microbatches: Megatron's 1F1B and interleaved schedules (schedules.py), replayed below.
//  - Logits: vocab_parallel_cross_entropy upcasts the [T, V/t] logits to fp32 and keeps the softmax for
//    backward (4 B per element per in-flight loss microbatch, x (1 + M) with MTP heads), plus the bf16
//    logits (2 B per element) transiently for the microbatch being computed.
#include "moetwin/accounting/memory_model.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

// 6 GiB: CUDA context with PyTorch, cuBLAS(Lt)/cuDNN/Transformer-Engine workspaces ~1 GiB (a CUDA 12
// context with lazy module loading is ~0.5 GiB on H100; TE keeps a 32 MiB cuBLASLt workspace per stream);
// NCCL ~2 GiB (Megatron builds ~10 communicators per rank -- tp, pp, dp, cp, ep, etp, edp, mp, tp-ep,
// embedding -- each with per-channel, per-peer buffers of NCCL_BUFFSIZE 4 MiB plus LL/LL128 buffers and
// aws-ofi-nccl bounce buffers); caching-allocator fragmentation ~3 GiB (freed blocks kept in size-class
// pools; MoE's variable-size token buffers fragment them even with expandable segments).
const double kMemoryReserveBytes = 6.0 * kGiB;

namespace {

constexpr double kBf16 = 2.0;  // bytes per bf16 element (weights, activations)
constexpr double kFp32 = 4.0;  // bytes per fp32 element (main grads, softmax statistics, logits)
constexpr double kOptimizerBytesPerParam = 12.0;  // fp32 master + Adam exp_avg + exp_avg_sq
constexpr double kRouterFp32PerExpert = 2.0;      // router logits and scores per (token, expert)

double tokens_per_microbatch(const ParallelLayout& p, int micro_batch, int seq_length) {
  return static_cast<double>(micro_batch) * seq_length / p.cp;
}

// Elements per token (before / t) the attention block keeps without recompute.
double attention_elements(const ModelSpec& m) {
  const double h = m.hidden;
  const double n = m.heads;
  if (m.attention == AttentionKind::mla) {
    const double compressed = static_cast<double>(m.q_lora_rank) + m.kv_lora_rank + m.qk_rope_dim;
    const double normed = static_cast<double>(m.q_lora_rank) + m.kv_lora_rank;
    return 2.0 * h + compressed + normed + 2.0 * n * (m.qk_head_dim + m.qk_rope_dim) + 2.0 * n * m.v_head_dim;
  }
  const double q = n * m.head_dim;
  const double kv = static_cast<double>(m.query_groups) * m.head_dim;
  return 2.0 * h + (q + 2.0 * kv) + q;
}

// Non-expert parameters of one decoder layer on one GPU (TP-sharded except the replicated parts).
std::int64_t dense_layer_params(const LayerParams& lp, bool moe, int tp) {
  const std::int64_t attention =
      (lp.attention - lp.attention_tp_replicated) / tp + lp.attention_tp_replicated;
  const std::int64_t mlp = moe ? lp.shared_experts / tp + lp.router : lp.dense_mlp / tp;
  return attention + lp.mlp_norm + mlp;
}

std::int64_t expert_layer_params(const ModelSpec& m, const LayerParams& lp, const ParallelLayout& p) {
  return static_cast<std::int64_t>(m.experts / p.ep) * (lp.routed_expert / p.etp);
}

// DeepEP default Config (deep_ep/buffer.py get_dispatch_config / get_combine_config): NVLink receive
// tokens per channel by EP group size; the RDMA receive chunk is 128 tokens for every size.
int deepep_nvl_recv_tokens(int ranks) {
  if (ranks <= 8) return 256;
  if (ranks <= 64) return 288;
  if (ranks <= 128) return 560;
  return 720;
}

}  // namespace

int InFlight::total() const {
  int sum = 0;
  for (int c : per_chunk) sum += c;
  return sum;
}

LayerActivations layer_activation_bytes(const ModelSpec& m, bool moe, const ParallelLayout& p,
                                        int micro_batch, int seq_length, Recompute recompute) {
  const double tokens = tokens_per_microbatch(p, micro_batch, seq_length);
  const double local = tokens / p.tp;  // tokens per GPU under sequence parallelism
  const double h = m.hidden;
  LayerActivations a;
  if (recompute == Recompute::full) {
    a.attention = kBf16 * h * local;  // the checkpointed layer input
    return a;
  }
  a.attention = kBf16 * attention_elements(m) * local;
  if (recompute == Recompute::none) a.attention += kFp32 * m.heads * local;  // softmax statistics
  if (moe) {
    a.mlp = kBf16 * local * (2.0 * h + 3.0 * m.shared_ffn_hidden) +
            kBf16 * local * m.top_k * (2.0 * p.etp * h + 3.0 * m.expert_ffn_hidden) +
            kFp32 * kRouterFp32PerExpert * m.experts * local;
  } else {
    a.mlp = kBf16 * local * (2.0 * h + 3.0 * m.ffn_hidden);
  }
  return a;
}

InFlight peak_in_flight(int pp, int vpp, int stage, int microbatches,
                        const std::vector<double>& chunk_bytes) {
  if (pp < 1 || vpp < 1 || stage < 0 || stage >= pp || microbatches < 1 ||
      chunk_bytes.size() != static_cast<std::size_t>(vpp)) {
    throw std::logic_error("peak_in_flight: invalid pipeline arguments");
  }
  // 64-bit: a 2^30 global batch at micro_batch x dp = 1 with vpp 2 is 2^31 chunk passes.
  const std::int64_t total = std::int64_t{microbatches} * vpp;
  std::int64_t warmup = 0;
  if (vpp == 1) {
    warmup = std::min<std::int64_t>(pp - stage - 1, total);
  } else if (microbatches == pp) {
    warmup = total;
  } else {
    warmup = std::min<std::int64_t>((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  }
  const int group = pp * vpp;
  auto forward_chunk = [&](std::int64_t k) { return vpp == 1 ? 0 : static_cast<int>((k % group) / pp); };
  auto backward_chunk = [&](std::int64_t k) { return vpp - 1 - forward_chunk(k); };

  InFlight held;
  held.per_chunk.assign(static_cast<std::size_t>(vpp), 0);
  InFlight best = held;
  double bytes = 0;
  double best_bytes = -1;
  auto forward = [&](std::int64_t k) {
    const auto c = static_cast<std::size_t>(forward_chunk(k));
    ++held.per_chunk[c];
    bytes += chunk_bytes[c];
    if (bytes > best_bytes) {
      best_bytes = bytes;
      best = held;
    }
  };
  auto backward = [&](std::int64_t k) {
    const auto c = static_cast<std::size_t>(backward_chunk(k));
    --held.per_chunk[c];
    bytes -= chunk_bytes[c];
  };
  for (std::int64_t k = 0; k < warmup; ++k) forward(k);
  // The steady phase repeats with period `group` (pp x vpp steps): any `group` consecutive passes visit
  // every chunk pp times forward and pp times backward, so the holding after step i + group equals the one
  // after step i, and the peak is reached within the first period. Stepping through one period is exact
  // and bounds the work by pp x vpp instead of the microbatch count (a 2^30 global batch took 7 s here
  // before the size guard could refuse it, issue 55).
  const std::int64_t steady = std::min<std::int64_t>(total - warmup, group);
  for (std::int64_t i = 0; i < steady; ++i) {
    forward(warmup + i);
    backward(i);
  }
  return best;
}

std::vector<int> offload_window_map(int layers, int offloaded) {
  std::vector<int> w;
  if (offloaded <= 0 || layers <= 0) return w;
  const int per = layers / offloaded;
  const int rest = layers % offloaded;
  int carried = 0;
  for (int c = 0; c < offloaded; ++c) {
    int at = per * (c + 1) - 1;
    if (c < rest) {
      at += c + 1;
      carried = c + 1;
    } else {
      at += carried;
    }
    w.push_back(at);
  }
  return w;
}

double offload_peak_bytes(const std::vector<double>& layer_bytes, int offloaded) {
  double total = 0;
  for (double b : layer_bytes) total += b;
  const int layers = static_cast<int>(layer_bytes.size());
  if (offloaded <= 0 || offloaded >= layers) return total;
  const std::vector<int> w = offload_window_map(layers, offloaded);
  double peak = 0;
  double held = 0;
  int freed = 0;  // groups whose copy the compute stream has waited for
  for (int k = 0; k < layers; ++k) {
    held += layer_bytes[static_cast<std::size_t>(k)];
    peak = std::max(peak, held);  // before the commit at the end of layer k
    while (freed < offloaded && w[static_cast<std::size_t>(freed)] == k) {
      held -= layer_bytes[static_cast<std::size_t>(freed)];
      ++freed;
    }
  }
  double kept = 0, reload = 0;
  for (int k = 0; k < layers; ++k) {
    if (k >= offloaded) kept += layer_bytes[static_cast<std::size_t>(k)];
    if (k < offloaded) reload = std::max(reload, layer_bytes[static_cast<std::size_t>(k)]);
  }
  return std::max(peak, kept + reload);
}

double deepep_buffer_bytes(int hidden, int ep_ranks, int sms) {
  // DeepEP csrc/config.hpp, Config::get_nvl_buffer_size_hint and get_rdma_buffer_size_hint, as
  // Megatron-Core's fused_a2a.get_buffer calls them (max over the dispatch and combine configs, which
  // share the receive sizes). hidden_bytes = h x max(element size, 2); per token slot: the hidden
  // vector, an 8 B source meta, 128 top-k indices (int64) and weights (fp32), 128 fp32 scales.
  constexpr double kNvlPeers = 8;  // NUM_MAX_NVL_PEERS
  constexpr double kMaxTopK = 128;
  constexpr double kMaxScales = 128;
  constexpr double kRdmaRecvTokens = 128;
  const double hidden_bytes = kBf16 * hidden;
  const double slot = hidden_bytes + 8.0 + kMaxTopK * 8.0 + kMaxTopK * 4.0 + kMaxScales * 4.0;
  const double channels = (sms > 0 ? sms : 20) / 2;  // Buffer.num_sms defaults to 20; 2 SMs per channel
  const double nvl_ranks = std::min<double>(ep_ranks, kNvlPeers);
  const double rdma_ranks = std::max(1, ep_ranks / 8);  // DeepEP requires ep % 8 == 0 beyond one node
  const double nvl = channels * nvl_ranks * (2.0 * rdma_ranks + 3.0) * 4.0 +
                     channels * nvl_ranks * deepep_nvl_recv_tokens(ep_ranks) * slot;
  double rdma = 0;
  if (ep_ranks > kNvlPeers) {  // intranode groups use NVLink only
    rdma = channels * rdma_ranks * (kNvlPeers * 2.0 + 2.0) * 2.0 * 4.0 +
           channels * rdma_ranks * kRdmaRecvTokens * 2.0 * (slot + 16.0);
  }
  return nvl + rdma;
}

MemoryEstimate estimate_memory(const Scenario& sc, const PipelineLayout& layout) {
  const ModelSpec& m = sc.model;
  const ParallelLayout& p = sc.parallel;
  const TrainingConfig& tr = sc.training;
  if (p.edp() < 1 || layout.pp != p.pp || layout.vpp != p.vpp) {
    throw std::logic_error("estimate_memory: layout does not match the (validated) parallel sizes");
  }
  const int microbatches = tr.microbatches(p);
  const LayerParams lp = layer_params(m);
  const std::int64_t vocab_shard = padded_vocab(m, p.tp) / p.tp * m.hidden;
  const double tokens = tokens_per_microbatch(p, tr.micro_batch, tr.seq_length);
  const double local = tokens / p.tp;
  const double logits_elements = tokens * static_cast<double>(padded_vocab(m, p.tp)) / p.tp;
  const double heads = 1.0 + m.mtp_layers;  // main output head plus one per MTP layer
  const bool mtp_moe = mtp_is_moe(m);
  auto layer_bytes = [&](bool moe, Recompute r) {
    return layer_activation_bytes(m, moe, p, tr.micro_batch, tr.seq_length, r).total();
  };

  MemoryEstimate est;
  est.hbm_bytes = sc.gpu.hbm_bytes;
  for (int s = 0; s < p.pp; ++s) {
    StageMemory st;
    st.stage = s;
    std::vector<double> chunk_activation(static_cast<std::size_t>(p.vpp), 0.0);
    std::vector<double> chunk_weight(static_cast<std::size_t>(p.vpp), 0.0);
    bool has_moe = false;
    double working_layer = 0;  // full recompute: one layer recomputed at a time
    int loss_chunk = -1;
    for (int v = 0; v < p.vpp; ++v) {
      const PipelineChunk& c = layout.chunk(s, v);
      std::vector<double> decoder;  // saved bytes per decoder layer of the chunk
      for (int i = c.first_layer; i < c.first_layer + c.decoder_layers; ++i) {
        const bool moe = layer_is_moe(m, i);
        has_moe = has_moe || moe;
        st.dense_params += dense_layer_params(lp, moe, p.tp);
        if (moe) st.expert_params += expert_layer_params(m, lp, p);
        decoder.push_back(layer_bytes(moe, tr.recompute));
        working_layer = std::max(working_layer, layer_bytes(moe, Recompute::none));
      }
      // CPU offload (pp 1: the chunk is every decoder layer): the peak of TE's window map, not the sum.
      double act = offload_peak_bytes(decoder, p.pp == 1 && p.vpp == 1 ? tr.cpu_offload_layers : 0);
      if (c.mtp_layers > 0) {
        has_moe = has_moe || mtp_moe;
        // Each MTP block: eh_proj (2h x h, column-parallel) and three norms, then a transformer layer;
        // it reuses the embedding, of which the last stage holds its own copy.
        st.dense_params +=
            c.mtp_layers * ((2 * static_cast<std::int64_t>(m.hidden) * m.hidden) / p.tp +
                            3 * static_cast<std::int64_t>(m.hidden) + dense_layer_params(lp, mtp_moe, p.tp));
        if (mtp_moe) st.expert_params += c.mtp_layers * expert_layer_params(m, lp, p);
        if (!c.embedding) st.dense_params += vocab_shard;
        // enorm/hnorm inputs, their concatenation (eh_proj input) and output: 4 h per token.
        act += c.mtp_layers * (layer_bytes(mtp_moe, tr.recompute) + kBf16 * 4.0 * m.hidden * local);
        working_layer = std::max(working_layer, layer_bytes(mtp_moe, Recompute::none));
      }
      if (c.embedding) st.dense_params += vocab_shard;
      double weight = act;
      if (c.loss) {
        loss_chunk = v;
        st.dense_params += vocab_shard + m.hidden;  // output layer (its own copy if tied) + final norm
        act += kBf16 * 2.0 * m.hidden * local;      // final norm input and output
        weight = act + kFp32 * logits_elements * heads;
      }
      chunk_activation[static_cast<std::size_t>(v)] = act;
      chunk_weight[static_cast<std::size_t>(v)] = weight;
      st.decoder_layers += c.decoder_layers;
      st.mtp_layers += c.mtp_layers;
      st.embedding = st.embedding || c.embedding;
      st.loss = st.loss || c.loss;
    }
    st.in_flight = peak_in_flight(p.pp, p.vpp, s, microbatches, chunk_weight);
    // overlap_moe_a2a with pp = 1: Megatron-Core's combined 1F1B without pipelining runs microbatch i's
    // forward beside microbatch i - 1's backward, so two microbatches' activations are held at the peak.
    if (p.pp == 1 && tr.overlap_moe_a2a && microbatches >= 2) st.in_flight.per_chunk[0] = 2;
    for (int v = 0; v < p.vpp; ++v) {
      st.activations +=
          st.in_flight.per_chunk[static_cast<std::size_t>(v)] * chunk_activation[static_cast<std::size_t>(v)];
    }
    if (tr.recompute == Recompute::full) st.activations += working_layer;
    if (loss_chunk >= 0) {
      st.logits =
          st.in_flight.per_chunk[static_cast<std::size_t>(loss_chunk)] * kFp32 * logits_elements * heads +
          kBf16 * logits_elements;
    }

    const double params = static_cast<double>(st.dense_params + st.expert_params);
    st.weights = kBf16 * params;
    if (is_fp8(tr.precision)) {
      // Linear GEMMs per layer: attention (2 or 4 with MLA) + MLP (2); delayed scaling keeps an amax history
      // of 1024 per FP8 tensor (input, weight, gradient): Megatron --fp8-amax-history-len default 1024.
      constexpr double kAmaxHistory = 1024, kFp8TensorsPerGemm = 3, kGemmsPerLayer = 6;
      const double layers = st.decoder_layers + st.mtp_layers;
      st.fp8 = 2.0 * params + layers * kGemmsPerLayer * kFp8TensorsPerGemm * kAmaxHistory * kFp32;
    }
    st.gradients = kFp32 * params;
    if (tr.distributed_optimizer) {
      st.optimizer = kOptimizerBytesPerParam * (static_cast<double>(st.dense_params) / (p.dp * p.cp) +
                                                static_cast<double>(st.expert_params) / p.edp());
    } else {
      st.optimizer = kOptimizerBytesPerParam * params;
    }
    if (tr.megatron_fsdp && p.dp * p.cp > 1) {
      // Megatron-FSDP (optim_grads_params; sim/include/moetwin/sim/fsdp.hpp): weights, main grads and the
      // optimizer states sharded over dp x cp, plus the two gathered buffers of the largest unit (a decoder
      // layer, the embedding or the output layer) in bf16, its unsharded fp32 gradients while they are
      // reduce-scattered, and (FP8) TE's FP8 weight copy and transpose of the two gathered units.
      const double shard = static_cast<double>(p.dp) * p.cp;
      double unit = static_cast<double>(dense_layer_params(lp, false, p.tp));
      if (st.embedding || st.loss) unit = std::max(unit, static_cast<double>(vocab_shard));
      st.weights = kBf16 * (params / shard + 2.0 * unit);
      st.gradients = kFp32 * (params / shard + unit);
      st.optimizer = kOptimizerBytesPerParam * params / shard;
      if (is_fp8(tr.precision)) st.fp8 += 2.0 * (2.0 * unit) - 2.0 * params;
    }
    if (has_moe) {
      if (sc.dispatcher.transport == DispatcherTransport::nccl) {
        // Megatron alltoall dispatcher: the permuted send buffer and the all-to-all receive buffer of
        // one dispatch, k copies of this GPU's tokens each (the receive side becomes the expert input,
        // counted in activations; the pair is the transient peak while the collective runs).
        st.dispatcher = 2.0 * kBf16 * local * m.top_k * p.etp * m.hidden;
      } else {
        st.dispatcher = deepep_buffer_bytes(m.hidden, p.ep, sc.dispatcher.sms);
      }
    }
    st.reserve = kMemoryReserveBytes;
    est.stages.push_back(st);
  }
  for (const StageMemory& st : est.stages) {
    if (st.total() > est.worst().total()) est.worst_stage = st.stage;
  }
  est.fits = est.worst().total() <= est.hbm_bytes;
  return est;
}

std::string hbm_fit_warning(const Scenario& scenario, const MemoryEstimate& memory) {
  if (memory.fits) return "";
  return concat({"does not fit in HBM: ", format_fixed(memory.worst().total() / kGiB, 1),
                 " GiB needed per GPU on stage ", std::to_string(memory.worst_stage), " (the most loaded), ",
                 format_fixed(memory.hbm_bytes / kGiB, 1), " GiB available (", scenario.gpu.name,
                 "); `moetwin inspect` gives the breakdown"});
}

}  // namespace moetwin
