// The share of HBM a user should keep free beyond what the memory model estimates, and the lines that say
// when a layout eats into it. The model counts states, activations, the dispatcher's buffers and a fixed
// reserve (memory_model.hpp); what it leaves out or gets wrong (accounting/README.md, "What the model leaves
// out", and the comparison with measured peaks, memory_check.hpp) is what the headroom is for. `plan`,
// `recommend` and `predict` take it as --hbm-headroom.
#pragma once

#include <string>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// Default headroom, a share of HBM: 10%. Why: against the measured peaks in accounting/data (memory_check),
// the model's estimate less its fixed reserve falls below the measured max-allocated by up to ~10% of HBM
// on the rows it describes (docs/2026-12-04-honest-bounds.md); the caching allocator's reserved peak runs
// 9-17% above max-allocated on the DeepSeek-V3 proxy (Megatron-LM transformer README), of which the 6 GiB
// reserve covers ~3 GiB. A layout within 90% of HBM has that much room for what the model misses.
inline constexpr double kDefaultHbmHeadroom = 0.10;
// Accepted --hbm-headroom range: 0 (book to the last byte the model counts) to 0.5.
inline constexpr double kMaxHbmHeadroom = 0.5;

// The most a GPU may use under `headroom`: (1 - headroom) x HBM, bytes.
double hbm_usable_bytes(double hbm_bytes, double headroom);
// Whether the most loaded stage stays within it.
bool within_hbm_headroom(const MemoryEstimate& memory, double headroom);
// "252.1 of 268.2 GiB (94%)".
std::string memory_use_text(double used_bytes, double hbm_bytes);
// "" within the headroom; else "uses 252.1 of 268.2 GiB HBM per GPU (94%, stage 3), above the 241.4 GiB
// (90%) that --hbm-headroom 10% leaves for what the memory model misses (CUDA/NCCL context beyond its
// reserve, allocator fragmentation, ...): a heavier recompute or more pipeline stages leave room".
std::string hbm_headroom_warning(const Scenario& scenario, const MemoryEstimate& memory, double headroom);

}  // namespace moetwin
