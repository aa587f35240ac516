// Unit-test support: a parallel layout by its sizes, one argument order for every module's tests (needs
// scenarios/). Three tests had a builder of their own, in two argument orders.
#pragma once

#include <ostream>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin::test_support {

// TP x PP x EP with DP data-parallel replicas (ep * etp divides tp * cp * dp, as in Megatron-Core); expert
// tensor parallel, context parallel and virtual pipeline chunks default to 1; no custom pipeline layout.
inline ParallelLayout parallel_layout(int tp, int pp, int ep, int dp, int etp = 1, int cp = 1, int vpp = 1) {
  return ParallelLayout{
      .tp = tp, .pp = pp, .vpp = vpp, .ep = ep, .etp = etp, .dp = dp, .cp = cp, .pipeline_layout = ""};
}

}  // namespace moetwin::test_support

namespace moetwin {

// How GoogleTest prints a layout in a failed EXPECT_EQ (found by argument-dependent lookup).
inline void PrintTo(const ParallelLayout& l, std::ostream* out) {
  *out << "tp " << l.tp << " pp " << l.pp << " vpp " << l.vpp << " ep " << l.ep << " etp " << l.etp << " dp "
       << l.dp << " cp " << l.cp;
  if (!l.pipeline_layout.empty()) *out << " layout \"" << l.pipeline_layout << '"';
}

}  // namespace moetwin
