// parallel_for: runs f(0) .. f(n - 1) on `threads` threads (the caller's among them), each index once,
// in no fixed order. Results are the caller's to make deterministic: f(k) should write only what belongs
// to k. Failures are reported as a plain loop would report them: the exception of the lowest index that
// threw (every lower index still runs; higher ones are skipped once a failure is known).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace moetwin {

template <typename F>
void parallel_for(std::size_t n, int threads, F&& f) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failed{kNone};  // lowest index that threw so far
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= n || k > first_failed.load()) return;
      try {
        f(k);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (k < first_failed.load()) {
          first_failed.store(k);
          failure = std::current_exception();
        }
      }
    }
  };
  const auto count =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)), n));
  std::vector<std::thread> pool;
  for (int t = 1; t < count; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// Worker threads for `requested` (> 0: that many; otherwise the hardware threads, 1 to 16).
inline int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

}  // namespace moetwin
