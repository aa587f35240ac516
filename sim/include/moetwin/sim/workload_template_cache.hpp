// The emitted stage programs of a workload, kept for the next build that would emit the same ones.
//
// `plan` predicts every layout variant with each of 3-4 dispatchers and replays a dispatcher without
// live runs again with each measured relative's A2A terms (its band). Those builds (the DeepEP family's
// dispatchers among themselves; NCCL's all-to-all has permute ops and a counts all-gather of its own)
// emit the same op programs: what the stage builder reads
// while it emits (sim/src/workload.cpp: the model, the layout, the training settings, the dispatcher's
// fused permute and NCCL transport, the instance's GPUs per node, the host-scaled profile's launch,
// host and byte terms, the compute profile and the collective model) is the same, and the dispatcher and
// its fitted terms change only the MoE costs: the var-slot durations, the all-to-alls' SMs and their
// flow-model loads, which the builder prices after emission. Emission was ~55% of each such replay
// (docs/2026-12-04-plan-speed.md, session 41).
//
// A cache holds the emitted programs of its last `capacity` distinct keys (WorkloadTemplateKey: every
// input the emission reads, compared exactly); build_workload (WorkloadSeams::programs) copies them and
// prices the copy, the same pricing a build without the cache runs on programs it emits itself, so a
// workload built through the cache equals the plain build in every field
// (sim/tests/workload_template_cache_test.cpp). The compute profile and the collective model are keyed
// by address: build_workload uses the cache only when both seams are given, and the cache keeps the
// collective model alive; the caller keeps the compute profile alive and unchanged while the cache
// lives (predict() passes it only with a PredictionSetupCache, whose set-ups live for the command).
//
// Not thread-safe: one cache per worker (plan gives each work item, one layout variant or one option's
// band replays, its own). Memory: a template is the unsealed programs of every stage (~1-10 MB at 8-64
// nodes). The sweep does not use it: a grid cell's three dispatchers share one emission of three, and
// the copies cost about what that saves (docs/2026-12-04-plan-speed.md, session 41).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace moetwin {

struct WorkloadTemplate;     // sim/src/workload_template.hpp
struct WorkloadTemplateKey;  // sim/src/workload_template.hpp

class WorkloadTemplateCache {
 public:
  explicit WorkloadTemplateCache(std::size_t capacity = 1) : capacity_(capacity < 1 ? 1 : capacity) {}
  // The template of `key`, or null.
  std::shared_ptr<const WorkloadTemplate> find(const WorkloadTemplateKey& key);
  // Keeps `t` (its key must not be held yet), dropping the least recently used beyond capacity.
  void insert(std::shared_ptr<const WorkloadTemplate> t);
  std::size_t hits() const { return hits_; }      // builds that reused a template
  std::size_t misses() const { return misses_; }  // builds that emitted their own

 private:
  std::size_t capacity_;
  std::vector<std::shared_ptr<const WorkloadTemplate>> entries_;  // most recently used first
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace moetwin
