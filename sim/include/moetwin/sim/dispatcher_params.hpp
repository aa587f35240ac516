// Calibration parameters of the token-dispatcher models: a plain list of named, bounded values with units
// and sources (the fitter tunes the ones marked `fitted`; everything else is a published fact or a
// documented estimate). Defaults per dispatcher come from default_dispatcher_params().
#pragma once

#include <string>
#include <vector>

namespace moetwin {

struct ModelParam {
  std::string name;  // e.g. "rdma_efficiency"
  std::string unit;  // "s", "fraction", "tokens", "count"
  double value = 0;
  double min = 0;  // bounds the fitter respects
  double max = 0;
  bool fitted = false;  // tuned on kernel benchmarks (see `source` for which)
  std::string source;   // publication, documentation, or the calibration run that set it
};

class ParamSet {
 public:
  ParamSet() = default;
  explicit ParamSet(std::vector<ModelParam> params);
  // Throws std::logic_error for an unknown name (a bug in the model, not user input).
  double get(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Throws InputError when the value is outside [min, max] or the name is unknown.
  void set(const std::string& name, double value);
  const std::vector<ModelParam>& all() const { return params_; }
  std::vector<ModelParam>& mutable_all() { return params_; }

 private:
  const ModelParam* find(const std::string& name) const;
  std::vector<ModelParam> params_;
};

// Defaults for "nccl-alltoall", "deepep-uccl", "deepep-nvshmem", "deepep-v2-gin". Throws std::logic_error
// for another name.
ParamSet default_dispatcher_params(const std::string& dispatcher);

}  // namespace moetwin
