// Pareto front of (time, cost) points, both minimised.
#pragma once

#include <cstddef>
#include <vector>

namespace moetwin {

struct TimeCost {
  double time = 0;
  double cost = 0;
};

// Indices of the non-dominated points, fastest first. A point is dominated when another is no slower
// and no dearer and strictly better in one; of exact duplicates only the first (lowest index) is kept.
std::vector<std::size_t> pareto_front(const std::vector<TimeCost>& points);

}  // namespace moetwin
