#include "moetwin/validate/row_predictions.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

std::vector<std::size_t> all_rows(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<RowPrediction> predict_rows(const std::vector<LiveRun>& runs,
                                        const std::vector<std::size_t>& which, const FittedProfile& profile,
                                        int threads) {
  std::vector<RowPrediction> out(which.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= which.size() || failed.load()) return;
      const LiveRun& run = runs.at(which[k]);
      RowPrediction& r = out[k];
      try {
        Prediction p = predict(run.scenario, predict_options_for(run.scenario, profile));
        p.built = BuiltWorkload{};  // millions of ops; only the summary is kept
        p.engine.trace.clear();
        r.ok = true;
        r.iteration_s = p.iteration_s;
        r.tflops_gpu = p.model_tflops_per_gpu;
        r.detail = std::move(p);
      } catch (const InputError& e) {
        r.error = e.what();
      } catch (...) {
        // Anything else is a bug: stop all workers and rethrow on the calling thread.
        if (!failed.exchange(true)) failure = std::current_exception();
        return;
      }
    }
  };
  const int n = std::max(1, threads);
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace moetwin
