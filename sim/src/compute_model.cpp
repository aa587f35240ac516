#include "moetwin/sim/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace moetwin {

const char* to_string(OpClass cls) {
  switch (cls) {
    case OpClass::gemm:
      return "gemm";
    case OpClass::grouped_gemm:
      return "grouped_gemm";
    case OpClass::attention:
      return "attention";
    case OpClass::elementwise:
      return "elementwise";
  }
  return "?";
}

ComputeProfile ComputeProfile::from_gpu(const GpuSpec& gpu) {
  ComputeProfile p;
  p.gpu = gpu.name;
  p.peak_flops = gpu.bf16_flops;
  p.hbm_bandwidth = gpu.hbm_bandwidth;
  p.sms = gpu.sms > 0 ? gpu.sms : p.sms;
  const char* keys[kOpClasses] = {"gemm", "grouped_gemm", "attention", "elementwise"};
  for (int i = 0; i < kOpClasses; ++i) {
    const auto it = gpu.efficiency.find(keys[i]);
    if (it != gpu.efficiency.end()) p.efficiency[i] = it->second;
  }
  return p;
}

double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes) {
  if (profile.peak_flops <= 0 || profile.hbm_bandwidth <= 0) {
    throw std::logic_error("kernel_seconds: profile without peak rates");
  }
  const double eff = profile.efficiency[static_cast<int>(cls)];
  const double mem_eff = profile.efficiency[static_cast<int>(OpClass::elementwise)];
  double t = 0;
  if (cls == OpClass::elementwise) {
    t = bytes / (profile.hbm_bandwidth * eff);
  } else {
    t = std::max(flops / (profile.peak_flops * eff), bytes / (profile.hbm_bandwidth * mem_eff));
  }
  return std::max(t, profile.min_kernel_s);
}

TimeNs to_ns(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::logic_error("to_ns: negative or non-finite time");
  // Round up, but treat values within 1e-6 ns of an integer as that integer (binary floating point
  // turns 1e-4 s x 1e9 into 100000.00000000001).
  const double ns = seconds * 1e9;
  const double nearest = std::round(ns);
  if (std::fabs(ns - nearest) < 1e-6) return static_cast<TimeNs>(nearest);
  return static_cast<TimeNs>(std::ceil(ns));
}

}  // namespace moetwin
