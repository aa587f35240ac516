// Context parallelism in the replay (scenario parallelism.cp; Megatron --context-parallel-size with
// Transformer Engine's ring attention, cp_comm_type "p2p", Megatron-Core's default and the only type NVIDIA's
// Llama perf recipes use: megatron-bridge-llama-recipes.csv has no cp_comm_type column, the recipes leave it
// at its default). Sources: shared/design/nvidia-mechanisms.md section 3 (TE
// pytorch/attention/dot_product_attention/context_parallel.py, AttnFuncWithCPAndKVP2P; Megatron-Core
// transformer_config.py; Megatron-Bridge performance-guide.md).
//
// What CP does to one rank of a CP group of size cp:
//  - every per-token cost (the GEMMs, the TP collectives, the MoE tokens, the PP P2P, the activations held
//    for backward) runs on its sequence shard, seq / cp tokens per sequence (the builder's T);
//  - causal load balancing: the sequence is cut into 2 cp chunks and rank r holds chunks r and 2cp-1-r, so
//    every rank's queries see seq / 2 keys on average: its attention core computes seq^2 / (2 cp)
//    query-key pairs per sequence (ring_attention_pairs), not (seq / cp)^2 / 2;
//  - ring attention, forward: cp steps; step i computes attention of the rank's queries on the KV block
//    it holds while the block moves on to the next rank (cp - 1 sends of the rank's K and V,
//    cp_kv_bytes). Step 0 is the local diagonal; the off-diagonal steps are half tiles (full Q x half KV
//    or half Q x full KV), so every step holds seq^2 / (2 cp^2) pairs: one tile of equal size per step;
//  - ring attention, backward: the KV block travels with its partial dK/dV, which is sent on after each
//    step and reaches its owner after the last step (cp sends of dKV, cp - 1 of KV): the middle steps
//    move twice the forward bytes and the last dKV hop is not hidden by any tile;
//  - the data-parallel gradient reduce and the distributed optimizer run over dp x cp ranks (the
//    replicated weights' gradients of the CP ranks are summed), which megatron_rank_groups gives the dp
//    channel when cp > 1.
//
// The step times. A step's attention tile of `tile_s` and its transfer of `xfer_s` run on two streams
// (TE alternates two CUDA streams for the tiles and posts the P2P on a third); the next step needs both:
//   forward  = (cp - 1) max(tile, x) + tile
//   backward = max(tile, x) + (cp - 2) max(tile, 2 x) + max(tile, x) + x        (cp >= 2)
// with x the transfer of one KV block (dKV has the same bytes). cp = 1: tile alone, no transfer.
// The transfer of one step is a ring of send/recv pairs over the CP group (each rank sends to the next
// and receives from the previous at once): the slowest pair gates the step, over NVLink when both ranks
// sit in one NVLink domain, else over the scale-out fabric (CommCostModel::seconds(send_recv) on the pair).
// The overlap is priced in closed form inside the attention op (the engine has no CP channel): the
// ring's exposed transfer is part of the attention core's time in the breakdown, not "exposed comm", and
// its P2P does not share links with the PP and DP traffic in the flow model (both stated in the
// prediction's CP line).
//
// Not modelled (refused by the scenario rules where asked for): cp_comm_type all_gather, a2a and a2a+p2p
// (no scenario field selects them; NVIDIA's Llama recipes use p2p only), sliding-window layers under CP.
#pragma once

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

// Query-key pairs of one sequence's causal attention that one CP rank computes under load balancing:
// seq^2 / (2 cp), split in cp equal tiles (one per ring step). `seq` in tokens (the whole sequence).
double ring_attention_pairs(double seq, int cp);

// Bytes of the K and V one CP rank passes on per ring step: its sequence shard (micro_batch x seq / cp
// tokens) of its TP share of the KV heads, bf16 (2 B). GQA: 2 x query_groups x head_dim per token (split
// over tp, at least one group per rank as Megatron replicates groups when tp > query_groups); MLA: the
// up-projected keys (heads x (qk_head_dim + qk_rope_dim)) and values (heads x v_head_dim), split over tp.
double cp_kv_bytes(const ModelSpec& model, int micro_batch, int seq_length, int cp, int tp);

// The ring's forward and backward attention time on one rank, s, from one step's tile and one KV
// block's transfer (formulas above). Throws std::invalid_argument for cp < 1 or negative times.
double ring_attention_forward_s(double tile_s, double xfer_s, int cp);
double ring_attention_backward_s(double tile_s, double xfer_s, int cp);

}  // namespace moetwin
