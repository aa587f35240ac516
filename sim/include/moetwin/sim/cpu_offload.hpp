// CPU offload of activations in the replay (scenario training.cpu_offload_layers; Megatron-Core
// --cpu-offloading-num-layers with offload_activations, which builds Transformer Engine's
// get_cpu_offload_context(num_layers = N, model_layers = L); Megatron-Bridge's `cpu_offload_layers`, set by
// NVIDIA's Llama 3 70B / 405B FSDP recipes on GB200 / GB300 (20-92 layers) and 70B on B200 (5):
// validate/data/megatron-bridge-llama-recipes.csv; shared/design/nvidia-mechanisms.md 4).
//
// What moves: the tensors decoder layers 0 .. N-1 save for backward (the memory model's per-layer
// activations, accounting/memory_model.hpp layer_activation_bytes), one microbatch at a time, to pinned host
// memory over the instance's host link (catalog instances.toml host_link: PCIe Gen5 x16 on x86 DGX / EC2,
// NVLink-C2C on Grace), and back before that layer's backward. Weights are not offloaded.
//
// When (TE AsyncDoubleBufferGroupOffloadHandler, pytorch/cpu_offload.py; the window map as recalled from the
// TE source, not in the shared corpus: UNVERIFIED): the N offloaded groups are spread over the L layers by a
// window map w (offload_window_map, accounting/memory_model.hpp; w[N-1] = L - 1).
//  forward:  layer 0's copy starts on the D2H stream after layer 0's forward; at the end of layer w[c]'s
//            forward the compute stream waits for the D2H stream (group c's copy done, its GPU buffers
//            freed), then group c + 1's copy starts. So group c's copy hides under the forward of layers up
//            to w[c], and is exposed only where it takes longer.
//  backward: at the start of layer w[c]'s backward (c = N-1 down to 0) the compute stream waits for the H2D
//            stream, then group c's reload starts; before layer 0's backward the compute stream waits for
//            every reload.
// The copies run on their own stream (pipeline_program.hpp kStreamOffload; TE's D2H and H2D streams are one
// here: the compute stream waits for a microbatch's last copy to the host at the end of its forward, before
// any reload, and for its last reload before layer 0's backward, so the two never overlap) as comm ops of
// the rank alone (ChannelKind::host): copy engines, no SMs. In the breakdown their exposed time is the
// `pp` class (offload needs pp = 1, so that class carries nothing else; the prediction says so).
//
// Not modelled (named): the host link shared with NICs behind one PCIe switch on x86 DGX / EC2 nodes and two
// GPUs on one Grace's C2C and LPDDR5X (the catalog rate is per GPU, with bounds), the pinned-buffer
// allocations, TE's FP8 tensors saved in FP8 (the memory model counts bf16: an upper bound of the bytes).
#pragma once

#include <vector>

#include "moetwin/accounting/memory_model.hpp"  // offload_window_map, the activations a layer saves

namespace moetwin {

// One copy of `bytes` over a host link of `link_bytes_per_s` (per direction), s.
double offload_copy_seconds(double bytes, double link_bytes_per_s);

}  // namespace moetwin
