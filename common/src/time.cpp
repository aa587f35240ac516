#include "moetwin/common/time.hpp"

#include <cmath>
#include <stdexcept>

namespace moetwin {

TimeNs to_ns(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::logic_error("to_ns: negative or non-finite time");
  const double ns = seconds * 1e9;
  const double nearest = std::round(ns);
  if (std::fabs(ns - nearest) < 1e-6) return static_cast<TimeNs>(nearest);
  return static_cast<TimeNs>(std::ceil(ns));
}

}  // namespace moetwin
