// keep_freed_memory_for_reuse: the allocator setting of every moetwin executable (cli/src/run_cli.cpp, at
// start) and of the sweep's worker processes (sweep/runner.hpp run_points, for library users).
//
// Why: a prediction allocates its op programs, engine state and event queue afresh (tens of MB at 256
// GPUs) and frees them at its end. glibc hands freed blocks above its mmap threshold (dynamic, 128 KiB
// growing to at most 32 MiB) back to the kernel, and trims the heap's free top above its trim threshold
// (twice the mmap threshold), so the next prediction may fault in fresh zeroed pages for the same sizes.
// In the binary that still linked Open MPI, SimGrid and HDF5 (before issue 40 item 1) page faults were a
// third of the shipped 1,008-point sweep's CPU time and a quarter of `plan`'s (perf); with this setting
// they were gone. `moetwin` without those libraries showed no repeated faults without it (plan at 16
// nodes: 24,300 page faults, the working set once); which library caused the faults was not isolated
// (docs/2026-12-04-plan-speed.md). A single `predict` still re-faults regrown vectors: 2,082 page faults
// without the setting, 1,645 with it (docs/2026-12-04-start-up.md), so every executable sets it at start.
// Fixing the mmap threshold at its largest allowed value (HEAP_MAX_SIZE / 2 = 32 MiB on 64-bit glibc) and
// never trimming keeps freed memory in the process for the next prediction to reuse. Peak RSS is then the
// largest prediction's working set plus the allocator's free lists (measured: +15-35 MB).
//
// Results do not depend on it: only where the allocator finds memory changes. Not glibc, or glibc's malloc
// replaced by a sanitizer's (ASan intercepts mallopt and refuses it): nothing to do, returns false.
#pragma once

#include <cstdlib>  // defines __GLIBC__ on glibc (through <features.h>), tested below

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace moetwin {

// True when malloc is glibc's own: not under AddressSanitizer, whose allocator replaces it (GCC defines
// __SANITIZE_ADDRESS__; Clang answers __has_feature(address_sanitizer)).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kGlibcMallocInUse = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kGlibcMallocInUse = false;
#elif defined(__GLIBC__)
inline constexpr bool kGlibcMallocInUse = true;
#else
inline constexpr bool kGlibcMallocInUse = false;
#endif
#elif defined(__GLIBC__)
inline constexpr bool kGlibcMallocInUse = true;
#else
inline constexpr bool kGlibcMallocInUse = false;
#endif

// The largest fixed mmap threshold glibc accepts (M_MMAP_THRESHOLD <= HEAP_MAX_SIZE / 2 on 64-bit).
inline constexpr int kReplayMmapThresholdBytes = 32 * 1024 * 1024;

// Returns true when the allocator took the settings (glibc), false elsewhere.
inline bool keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  if (!kGlibcMallocInUse) return false;
  // Order matters: setting M_MMAP_THRESHOLD turns off the dynamic adjustment of both thresholds.
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, kReplayMmapThresholdBytes) == 1;
  // -1 (as size_t: the largest value): never give the heap's free top back to the kernel.
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, -1) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace moetwin
