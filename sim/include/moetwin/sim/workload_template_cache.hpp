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
// band replays, its own). The sweep does not use it: a grid cell's three dispatchers share one emission
// of three, and the copies cost about what that saves (docs/2026-12-04-plan-speed.md, session 41).
//
// Memory: a template is the unsealed programs of every stage, 48 bytes an op (OpSpec) plus the var
// requests and collective entries, and it lives beside the priced copy each build makes: a kept template
// is that much more peak memory per worker. Its size grows with the microbatches a pipeline runs (ops per
// stage ~ microbatches x layers per stage x ops per layer): DeepSeek-V3's plan on p6-b300 at global batch
// 256 emits templates of at most 7.4 MB at 64 nodes, 14.6 MB at 32, 29 MB at 16 and 47 MB at 8, where
// small dp makes up to 256 microbatches per pipeline (template_bytes, session 42). So a cache keeps only
// templates of at most `max_bytes` (template_bytes, workload.cpp); a larger emission is priced in place,
// as a build without the cache prices its own (no copy, no second program in memory), and the entry the
// cache holds stays. Peak memory over a build without the cache: at most `capacity` x `max_bytes` per
// cache, the caches alive at once being plan's worker threads.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace moetwin {

struct WorkloadTemplate;     // sim/src/workload_template.hpp
struct WorkloadTemplateKey;  // sim/src/workload_template.hpp

class WorkloadTemplateCache {
 public:
  // The default bound on a kept template, bytes: above every template of DeepSeek-V3's plan at 32 and 64
  // nodes (<= 14.6 MB: one node count's plan shares as before) and most at 16, below the largest at 8
  // and 16 nodes (27 and 5 of their 593 emissions, 24-47 MB), whose copies made most of the peak memory
  // the template cache added over plan's default range: 236 -> 187-192 MB peak RSS with this bound, the
  // CPU time no worse (docs/2026-12-04-plan-speed.md, session 42: 8 and 16 MB bounds saved little more).
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{24} << 20;

  explicit WorkloadTemplateCache(std::size_t capacity = 1, std::size_t max_bytes = kDefaultMaxBytes)
      : capacity_(capacity < 1 ? 1 : capacity), max_bytes_(max_bytes) {}
  // The template of `key`, or null.
  std::shared_ptr<const WorkloadTemplate> find(const WorkloadTemplateKey& key);
  // Whether a template of `bytes` (template_bytes) would be kept: at most max_bytes.
  bool admits(std::size_t bytes) const { return bytes <= max_bytes_; }
  // Keeps `t` (its key must not be held yet), dropping the least recently used beyond capacity.
  void insert(std::shared_ptr<const WorkloadTemplate> t);
  std::size_t hits() const { return hits_; }        // builds that reused a template
  std::size_t misses() const { return misses_; }    // builds that emitted their own
  std::size_t refused() const { return refused_; }  // emissions larger than max_bytes, not kept
  void count_refused() { ++refused_; }
  std::size_t max_bytes() const { return max_bytes_; }

 private:
  std::size_t capacity_;
  std::size_t max_bytes_;
  std::size_t refused_ = 0;
  std::vector<std::shared_ptr<const WorkloadTemplate>> entries_;  // most recently used first
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace moetwin
