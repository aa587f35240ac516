#include "moetwin/common/time.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace moetwin {

TimeNs to_ns(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::logic_error("to_ns: negative or non-finite time");
  const double ns = seconds * 1e9;
  // The same rule in integer steps (no libm round/ceil calls: the workload builder converts every op's
  // cost, 2-5% of `plan`). For 0 <= ns < 2^63 the cast truncates to floor(ns), and ns - floor(ns) is exact
  // (below 2^52 the fraction is representable, above it ns is an integer). Within 1e-6 above an integer:
  // that integer; within 1e-6 below one (fraction > 1 - 1e-6): the next, which ceil gives too; otherwise
  // ceil. So the answer is floor, plus one for any fraction of at least 1e-6 — what round/ceil below give.
  if (ns < 9.2e18) {
    const auto whole = static_cast<TimeNs>(ns);
    const double fraction = ns - static_cast<double>(whole);
    return fraction < 1e-6 ? whole : whole + 1;
  }
  const double nearest = std::round(ns);
  if (std::fabs(ns - nearest) < 1e-6) return static_cast<TimeNs>(nearest);
  return static_cast<TimeNs>(std::ceil(ns));
}

TimeNs ceil_ns(double ns) {
  if (!std::isfinite(ns) || std::abs(ns) > 9.2e18) {
    throw std::overflow_error("time: " + std::to_string(ns) + " ns: out of the int64 ns range");
  }
  const double tolerance = std::max(1e-6, 1e-13 * std::abs(ns));
  return static_cast<TimeNs>(std::ceil(ns - tolerance));
}

}  // namespace moetwin
