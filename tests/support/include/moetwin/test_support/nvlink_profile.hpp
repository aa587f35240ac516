// Unit-test support: hand-made calibration profiles holding an NVLink collective fit, for the tests that
// write one and read it back (calibrate/) or price collectives with it (sim/) (needs profile/).
#pragma once

#include <utility>
#include <vector>

#include "moetwin/profile/calibration_profile.hpp"

namespace moetwin::test_support {

// An NVLink fit seen on `ranks` GPUs from `points` measurements: per-call and per-step latency in s, no
// efficiency bands yet (the test adds the bands it checks).
inline NvlinkCollectiveFit nvlink_fit(std::vector<int> ranks, double call_latency_s, double step_latency_s,
                                      int points) {
  return NvlinkCollectiveFit{.ranks = std::move(ranks),
                             .call_latency_s = call_latency_s,
                             .step_latency_s = step_latency_s,
                             .buffer_curves = {},
                             .curves = {},
                             .points = points};
}

// An H200-SXM profile with no curves: the catalog's bf16 peak (989e12 FLOP/s, catalog/data) and a 4 TB/s
// device-to-device copy, at the current schema. Tests add the [nvlink], [efa] or GEMM sections they read.
inline CalibrationProfile bare_h200_profile() {
  CalibrationProfile p;
  p.gpu = "H200-SXM";
  p.peak_bf16_flops = 989e12;
  p.d2d_bandwidth = 4e12;
  return p;
}

}  // namespace moetwin::test_support
