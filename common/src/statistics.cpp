#include "moetwin/common/statistics.hpp"

#include <algorithm>
#include <stdexcept>

namespace moetwin {

double median_of(std::vector<double> values) {
  if (values.empty()) throw std::logic_error("median of an empty set");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace moetwin
