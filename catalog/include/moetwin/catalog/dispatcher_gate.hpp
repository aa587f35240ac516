// Which token dispatchers can run on which hardware, as the training stack decides it (not as the kernels
// could): Megatron-Bridge's flex-dispatcher gate and the dispatchers' transports.
//
// Megatron-Bridge (src/megatron/bridge/training/flex_dispatcher_backend.py at HEAD, read for
// shared/design/nvl72-and-infiniband.md C1/C2) accepts the flex backend
//   - "deepep" only on GPUs of compute capability 8.x or 9.x and on the discrete "NVIDIA B200" / "NVIDIA
//   B300";
//     on GB200 / GB300 (the Grace superchips' GPUs, NVL72 members) it falls back to Megatron's alltoall;
//   - "hybridep" on compute capability 8.x, 9.x and 10.x (H100 .. GB300); elsewhere alltoall.
// A silent fallback would make the twin price a dispatcher the run does not use, so a scenario asking for a
// gated dispatcher is refused with the reason and what the stack would run instead.
#pragma once

#include <optional>
#include <string>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

// GPUs the dispatcher's own NVLink stage reaches on `instance`: the NVLink domain for a record that
// reaches_nvlink_domain (NCCL over MNNVL, HybridEP), else the host node (DeepEP v1). Beyond it, the NICs.
int nvlink_reach_gpus(const DispatcherSpec& dispatcher, const InstanceSpec& instance);

// Why Megatron-Bridge will not run `dispatcher` on `gpu` (and runs alltoall instead); nullopt when it does.
std::optional<std::string> flex_backend_refusal(const DispatcherSpec& dispatcher, const GpuSpec& gpu);

// Why `dispatcher`'s transport cannot run on `instance`'s fabric or RDMA path for EP groups of
// `ep_group_gpus` consecutive GPUs (etp x ep in Megatron's expert rank order) in a job of `world_gpus`;
// nullopt when it can. A group inside the dispatcher's NVLink reach (the node, or the domain for a record
// that reaches_nvlink_domain: groups tile the reach, or the whole job fits in one) never uses the RDMA path,
// so the fabric does not matter there; 0 = any group (the fabric always matters).
std::optional<std::string> transport_refusal(const DispatcherSpec& dispatcher, const InstanceSpec& instance,
                                             int ep_group_gpus = 0, int world_gpus = 0);

// The first of the two refusals, or nullopt: whether `dispatcher` can run on `instance` with `gpu` for EP
// groups of `ep_group_gpus` GPUs in a job of `world_gpus` (as transport_refusal).
std::optional<std::string> dispatcher_refusal(const DispatcherSpec& dispatcher, const InstanceSpec& instance,
                                              const GpuSpec& gpu, int ep_group_gpus = 0, int world_gpus = 0);

// Why `dispatcher`'s normal kernels cannot serve an EP group of `ep_ranks` ranks (max_ranks_normal: DeepEP v1
// over NVSHMEM caps at 20 RDMA peers x 8 GPUs); nullopt when they can. With dispatcher_refusal, the whole
// rule of which dispatcher runs a layout (scenario validation, recommend and compare use both).
std::optional<std::string> rank_cap_refusal(const DispatcherSpec& dispatcher, int ep_ranks);

// Why two dispatchers that both run here (dispatcher_refusal nullopt for each) price alike on `instance`:
// the same cost model (node_dedup), the same posting path (transport, and on an instance without
// GPU-initiated RDMA the same fallback) and the same NVLink reach (nvlink_reach_gpus: DeepEP v1's host node
// and HybridEP's domain are one and the same 8-GPU node on DGX B200) leave only their terms apart: the
// sentence names the shared mechanism and what still differs (SMs held, the terms' sources). nullopt when
// a mechanism tells them apart on `instance` (HybridEP's TMA stage reaching a 72-GPU rack where DeepEP's
// NVLink stage stops at the 4-GPU tray).
std::optional<std::string> same_mechanism_note(const DispatcherSpec& a, const DispatcherSpec& b,
                                               const InstanceSpec& instance);

}  // namespace moetwin
