// NCCL collective sweeps across the GPUs of one node, one process driving all of them (ncclCommInitAll).
// libnccl.so.2 is opened at run time (dlopen), so a node without NCCL gets NoDeviceError (exit 4)
// instead of a loader failure.
#pragma once

#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::gpu {

struct NcclBenchOptions {
  int max_gpus = 0;  // 0 = all visible; sweeps n = 1, 2, 4, ... up to it (and it, if not a power of 2)
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = 1ULL << 30;
  int factor = 4;  // size step
  int samples = 10;
};

// Kind "nccl", unit s, samples = seconds per collective (slowest GPU); params bytes (per-rank buffer as
// nccl-tests counts it: the full vector for all_reduce, the output for all_gather, the input for
// reduce_scatter, the per-rank total for all_to_all and send_recv), ranks; label op.
std::vector<Experiment> run_nccl_bench(const NcclBenchOptions& options, std::string& nccl_version);

}  // namespace moetwin::gpu
