// Calibration of the MoE kernels (kernels/): permute, unpermute, router top-k, and the
// device-to-device copy of the same bytes as their bandwidth reference.
#pragma once

#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::gpu {

struct KernelBenchOptions {
  bool quick = false;
  int samples = 10;
};

// Kind "kernel", unit s, samples = seconds per call; params tokens, hidden, topk, experts, bytes_moved
// (bytes read + written, the convention of every bandwidth here incl. the copy); label op
// (d2d_copy, permute, unpermute, router).
std::vector<Experiment> run_kernel_bench(const KernelBenchOptions& options);

}  // namespace moetwin::gpu
