#include "moetwin/sim/workload_template_cache.hpp"

#include <algorithm>

#include "workload_template.hpp"

namespace moetwin {

std::shared_ptr<const WorkloadTemplate> WorkloadTemplateCache::find(const WorkloadTemplateKey& key) {
  const auto it =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const std::shared_ptr<const WorkloadTemplate>& t) { return t->key == key; });
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  std::rotate(entries_.begin(), it, it + 1);  // most recently used first
  return entries_.front();
}

void WorkloadTemplateCache::insert(std::shared_ptr<const WorkloadTemplate> t) {
  entries_.insert(entries_.begin(), std::move(t));
  if (entries_.size() > capacity_) entries_.resize(capacity_);
}

}  // namespace moetwin
