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
