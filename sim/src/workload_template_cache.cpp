#include "moetwin/sim/workload_template_cache.hpp"

#include <algorithm>
#include <string>

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

std::size_t template_bytes(const std::vector<StageTemplate>& stages) {
  std::size_t bytes = 0;
  for (const StageTemplate& t : stages) {
    bytes += sizeof(StageTemplate);
    bytes += t.program.ops().capacity() * sizeof(OpSpec);
    for (const std::string& label : t.program.labels()) bytes += sizeof(std::string) + label.capacity();
    bytes += t.program.net_loads().capacity() * sizeof(NetLoad);
    bytes += t.vars.capacity() * sizeof(VarReq);
    for (const CommEntry& e : t.comm) bytes += sizeof(CommEntry) + e.per_local.capacity() * sizeof(TimeNs);
    bytes += t.moe_layers.capacity() * sizeof(int) + t.a2a_ops.capacity() * sizeof(std::int32_t);
  }
  return bytes;
}

void WorkloadTemplateCache::insert(std::shared_ptr<const WorkloadTemplate> t) {
  entries_.insert(entries_.begin(), std::move(t));
  if (entries_.size() > capacity_) entries_.resize(capacity_);
}

}  // namespace moetwin
