#include "moetwin/sim/prediction_setup.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#include "moetwin/models/calibrated_collectives.hpp"
#include "moetwin/models/calibrated_compute.hpp"

namespace moetwin {

MemoCommCost::MemoCommCost(std::shared_ptr<const CommCostModel> inner) : inner_(std::move(inner)) {}

std::size_t MemoCommCost::KeyHash::operator()(const KeyView& k) const {
  // FNV-1a over the op, the bytes' value (0 for both zeros: -0.0 == 0.0 must hash alike) and the ranks.
  std::uint64_t h = 1469598103934665603ULL;
  const auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ULL;
  };
  mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.op)));
  const double bytes = k.bytes == 0 ? 0.0 : k.bytes;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &bytes, sizeof bits);
  mix(bits);
  for (const int r : *k.ranks) mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)));
  return static_cast<std::size_t>(h);
}

double MemoCommCost::seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  const KeyView view{static_cast<int>(op), bytes, &ranks};
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = seconds_.find(view); it != seconds_.end()) return it->second;
  }
  // Outside the lock: two threads may compute the same answer, which is the same value.
  const double s = inner_->seconds(op, bytes, ranks);
  const std::lock_guard<std::mutex> lock(mutex_);
  seconds_.emplace(Key{view.op, bytes, ranks}, s);
  return s;
}

CommUsage MemoCommCost::usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  const KeyView view{static_cast<int>(op), bytes, &ranks};
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = usage_.find(view); it != usage_.end()) return it->second;
  }
  const CommUsage u = inner_->usage(op, bytes, ranks);
  const std::lock_guard<std::mutex> lock(mutex_);
  usage_.emplace(Key{view.op, bytes, ranks}, u);
  return u;
}

std::size_t MemoCommCost::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return seconds_.size() + usage_.size();
}

std::shared_ptr<const PredictionSetup> PredictionSetupCache::get(const Scenario& scenario,
                                                                 const std::string& dir) const {
  Key key{dir, scenario.calibration_profile, scenario.gpu.name, scenario.instance.name, scenario.nodes};
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = setups_.find(key); it != setups_.end()) return it->second;
  }
  // As predict() builds them without a cache (prediction.cpp): one lookup serves both seams.
  const ScenarioCalibration calibration = calibration_for(scenario, dir);
  auto setup = std::make_shared<PredictionSetup>();
  setup->compute = compute_profile_from(scenario, calibration);
  CollectiveCalibration collectives = collectives_from(scenario, calibration);
  setup->comm = std::make_shared<MemoCommCost>(std::move(collectives.comm));
  setup->collective_source = std::move(collectives.source);
  const std::lock_guard<std::mutex> lock(mutex_);
  // A thread that built the same set-up meanwhile keeps its own: the first one stored serves the rest.
  return setups_.emplace(std::move(key), std::move(setup)).first->second;
}

std::size_t PredictionSetupCache::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return setups_.size();
}

}  // namespace moetwin
