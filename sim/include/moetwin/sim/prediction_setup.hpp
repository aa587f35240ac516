// What predict() looks up before it builds a workload, shared by the predictions of one command.
//
// Before each replay predict() finds the scenario GPU's calibration profile (a directory scan and a
// stat of the cached parse), builds the compute profile from it, and builds the collective model
// (TopologyComm: the scenario's Cluster, its Placement graph and the calibrated NVLink/EFA terms). For a
// command that predicts hundreds of scenarios on the same GPU, instance and node count (`plan`: ~1,100
// predictions per node count, `recommend`, `sweep`) that set-up is the same every time: 8% of `plan`'s
// CPU time, and the collective estimates inside the replays, which the dispatchers and variants of one
// layout repeat, another 5% (docs/2026-12-04-plan-speed.md). PredictionSetupCache makes each once:
//  - per (calibration directory, scenario calibration profile, GPU, instance, nodes): the calibration
//    lookup, the compute profile and the collective model, as predict() would build them;
//  - the collective model answers each (op, bytes, ranks) once (MemoCommCost): TopologyComm is a pure
//    function of them on a sealed Cluster.
// Predictions through the cache are identical to predictions without it, field for field
// (sim/tests/prediction_setup_test.cpp).
//
// Scope: one catalog. GPU and instance are keyed by name, as the scenarios of one catalog carry them; a
// cache must not serve scenarios of two catalogs whose specs differ under one name. Calibration files are
// read once: a profile changed on disk while the cache lives is not seen (calibrated_compute.hpp re-reads
// by mtime; a command's cache lives for one command). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// A CommCostModel that answers each (op, bytes, ranks) once from `inner` (which must be a pure function
// of them) and keeps the answer. name() is the inner model's. Thread-safe.
class MemoCommCost final : public CommCostModel {
 public:
  explicit MemoCommCost(std::shared_ptr<const CommCostModel> inner);
  std::string name() const override { return inner_->name(); }
  double seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;
  CommUsage usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const override;
  std::size_t size() const;  // distinct (op, bytes, ranks) answered so far, seconds and usage together

 private:
  // Keys compare bytes as doubles (exact): equal doubles, equal keys. Lookups go through a KeyView
  // (no copy of the ranks) into hash maps: the builder asks once per collective entry and group of every
  // stage program, ~5% of `plan` through an ordered map of copied keys (docs/2026-12-04-plan-speed.md,
  // session 40).
  struct Key {
    int op;
    double bytes;
    std::vector<int> ranks;
  };
  struct KeyView {
    int op;
    double bytes;
    const std::vector<int>* ranks;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const;
    std::size_t operator()(const Key& k) const { return (*this)(KeyView{k.op, k.bytes, &k.ranks}); }
  };
  struct KeyEq {
    using is_transparent = void;
    static bool same(const KeyView& a, const KeyView& b) {
      return a.op == b.op && a.bytes == b.bytes && *a.ranks == *b.ranks;
    }
    bool operator()(const Key& a, const Key& b) const { return same(view(a), view(b)); }
    bool operator()(const KeyView& a, const Key& b) const { return same(a, view(b)); }
    bool operator()(const Key& a, const KeyView& b) const { return same(view(a), b); }
    static KeyView view(const Key& k) { return KeyView{k.op, k.bytes, &k.ranks}; }
  };
  std::shared_ptr<const CommCostModel> inner_;
  mutable std::mutex mutex_;  // guards the two maps
  mutable std::unordered_map<Key, double, KeyHash, KeyEq> seconds_;
  mutable std::unordered_map<Key, CommUsage, KeyHash, KeyEq> usage_;
};

// predict()'s set-up of one scenario (its WorkloadSeams' compute and comm, and the report strings).
struct PredictionSetup {
  ComputeProfile compute;
  std::shared_ptr<const CommCostModel> comm;  // a MemoCommCost over predict()'s collective model
  std::string collective_source;              // CollectiveCalibration::source
};

class PredictionSetupCache {
 public:
  // The set-up of `scenario` with calibration directory `dir` ("" = lookup off), built on first use.
  // Throws what predict()'s own lookup throws (a malformed or mismatched calibration profile), and
  // caches nothing then.
  std::shared_ptr<const PredictionSetup> get(const Scenario& scenario, const std::string& dir) const;
  std::size_t size() const;  // set-ups built

 private:
  // (dir, scenario calibration profile, GPU, instance, nodes)
  using Key = std::tuple<std::string, std::string, std::string, std::string, int>;
  mutable std::mutex mutex_;
  mutable std::map<Key, std::shared_ptr<const PredictionSetup>> setups_;
};

}  // namespace moetwin
