// Unit-test support: reading a built workload's ops back (needs sim/).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "moetwin/sim/workload.hpp"

namespace moetwin::test_support {

// Durations of rank 0's ops labelled `label`, in issue order.
inline std::vector<TimeNs> rank0_durations(const BuiltWorkload& b, const std::string& label) {
  const Program& prog = b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
  std::vector<TimeNs> out;
  for (const OpSpec& op : prog.ops()) {
    if (prog.labels().at(static_cast<std::size_t>(op.label)) == label) out.push_back(op.duration);
  }
  return out;
}

}  // namespace moetwin::test_support
