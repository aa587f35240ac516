// Predicting many live-run rows at once: every row is an independent replay, run on a pool of threads
// and stored by row index, so the results are identical for any thread count.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

struct RowPrediction {
  bool ok = false;
  std::string error;  // InputError message when the replay cannot represent the row
  double iteration_s = 0;
  double tflops_gpu = 0;
  Prediction detail;  // summary and per-rank stats (the built programs and trace are dropped)
};

// Predicts runs[i] for every i in `which` with `profile`'s SimProfile and the dispatcher MoE cost.
// Result k belongs to which[k]. threads <= 0 means 1.
std::vector<RowPrediction> predict_rows(const std::vector<LiveRun>& runs,
                                        const std::vector<std::size_t>& which, const FittedProfile& profile,
                                        int threads);

// All row indices 0..n-1.
std::vector<std::size_t> all_rows(std::size_t n);

}  // namespace moetwin
