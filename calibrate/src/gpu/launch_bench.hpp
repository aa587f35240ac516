// CUDA launch-latency calibration: the floor under every small op.
#pragma once

#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::gpu {

// Kind "launch", unit s; label kernel (empty | tiny) and mode:
//   sync_latency     launch one kernel and wait for it (host clock), per call
//   host_issue       host time to enqueue one launch (1000 back-to-back, no wait), per launch
//   back_to_back     GPU time per kernel of 1000 back-to-back launches (events), per launch
//   graph_per_kernel GPU time per kernel of a CUDA graph of 1000 kernels, per kernel
//   graph_sync       launch a one-kernel graph and wait (host clock), per call
std::vector<Experiment> run_launch_bench(int samples);

}  // namespace moetwin::gpu
