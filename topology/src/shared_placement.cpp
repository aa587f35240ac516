#include "moetwin/topology/shared_placement.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace moetwin {

namespace {

struct Entry {
  ParallelLayout layout;
  int gpus_per_node = 0;
  int domain_gpus = 0;
  std::shared_ptr<const Placement> placement;
};

}  // namespace

std::shared_ptr<const Placement> shared_placement(const ParallelLayout& layout, int gpus_per_node,
                                                  int domain_gpus) {
  static std::mutex mutex;
  static std::vector<Entry> recent;  // most recently asked last
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto hit = std::find_if(recent.begin(), recent.end(), [&](const Entry& e) {
      return e.gpus_per_node == gpus_per_node && e.domain_gpus == domain_gpus && e.layout == layout;
    });
    if (hit != recent.end()) {
      std::rotate(hit, hit + 1, recent.end());
      return recent.back().placement;
    }
  }
  // Built outside the lock: two threads asking for the same new placement may both build it (equal).
  auto built = std::make_shared<const Placement>(layout, gpus_per_node, domain_gpus);
  const std::lock_guard<std::mutex> lock(mutex);
  if (recent.size() >= static_cast<std::size_t>(kSharedPlacements)) recent.erase(recent.begin());
  recent.push_back(Entry{layout, gpus_per_node, domain_gpus, built});
  return built;
}

}  // namespace moetwin
