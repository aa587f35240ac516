#include "moetwin/planning/pareto.hpp"

#include <algorithm>
#include <numeric>

namespace moetwin {

std::vector<std::size_t> pareto_front(const std::vector<TimeCost>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Fastest first, then cheapest, then input order: a sweep keeping the cheapest seen so far leaves
  // exactly the points no earlier (no slower) point beats on cost.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].time != points[b].time) return points[a].time < points[b].time;
    if (points[a].cost != points[b].cost) return points[a].cost < points[b].cost;
    return a < b;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (front.empty() || points[i].cost < points[front.back()].cost) front.push_back(i);
  }
  return front;
}

}  // namespace moetwin
