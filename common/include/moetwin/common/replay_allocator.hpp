// keep_freed_memory_for_reuse: the allocator setting of commands that run many predictions in one process
// (plan, recommend, sweep).
//
// Why: a prediction allocates its op programs, engine state and event queue afresh (tens of MB at 256
// GPUs) and frees them at its end. glibc hands freed blocks above its mmap threshold (dynamic, 128 KiB
// growing to at most 32 MiB) back to the kernel, and trims the heap's free top above its trim threshold
// (twice the mmap threshold), so the next prediction faults in fresh zeroed pages for the same sizes: on
// the shipped 1,008-point sweep page faults were a third of the CPU time, and a quarter of `plan`'s
// (perf, docs/2026-12-04-plan-speed.md). Fixing the mmap threshold at its largest allowed value
// (HEAP_MAX_SIZE / 2 = 32 MiB on 64-bit glibc) and never trimming keeps freed memory in the process for
// the next prediction to reuse. Peak RSS is then the largest prediction's working set plus the allocator's
// free lists (measured: +10-15 MB on plan and sweep).
//
// Results do not depend on it: only where the allocator finds memory changes. Not glibc: nothing to do.
#pragma once

#include <cstdlib>  // defines __GLIBC__ on glibc (through <features.h>), tested below

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace moetwin {

// The largest fixed mmap threshold glibc accepts (M_MMAP_THRESHOLD <= HEAP_MAX_SIZE / 2 on 64-bit).
inline constexpr int kReplayMmapThresholdBytes = 32 * 1024 * 1024;

// Returns true when the allocator took the settings (glibc), false elsewhere.
inline bool keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
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
