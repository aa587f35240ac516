// Kernel times from a roofline: time = max(flops / (peak x efficiency), bytes / (HBM bandwidth x
// memory efficiency)), with an efficiency per op class. Until calibration data exists the efficiencies
// are the catalog's GpuSpec::efficiency (estimates with their reasoning in catalog/data/gpus.toml); a
// calibration profile replaces them through this plain struct, never through code.
#pragma once

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/sim/event_queue.hpp"

namespace moetwin {

enum class OpClass { gemm, grouped_gemm, attention, elementwise };
inline constexpr int kOpClasses = 4;
const char* to_string(OpClass cls);

struct ComputeProfile {
  std::string gpu;           // GpuSpec::name
  double peak_flops = 0;     // dense BF16, FLOP/s
  double hbm_bandwidth = 0;  // bytes/s
  // Achievable fraction of peak per OpClass (elementwise: of HBM bandwidth). Memory-bound parts of
  // compute ops use the elementwise efficiency.
  double efficiency[kOpClasses] = {0.75, 0.6, 0.5, 0.8};
  // Smallest time of any kernel on the GPU, s: launch latency + tail of a tiny grid (~2-4 us on
  // Hopper/Blackwell for back-to-back kernels, nsys traces of small elementwise kernels).
  double min_kernel_s = 2e-6;
  int sms = 132;

  // From the catalog GPU: its bf16 peak, HBM bandwidth, SMs and efficiency table ("gemm",
  // "grouped_gemm", "attention", "elementwise"; missing keys keep the defaults above).
  static ComputeProfile from_gpu(const GpuSpec& gpu);
};

// Seconds of one kernel (or a short fused sequence counted as one) of class `cls`.
double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes);
// Whole nanoseconds, rounded up (a kernel never takes less than it computes).
TimeNs to_ns(double seconds);

}  // namespace moetwin
