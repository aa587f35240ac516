// Parameters of a token-dispatcher model: the named, bounded values with units and sources of the
// dispatcher's catalog record (catalog/data/dispatchers.toml [[<name>.terms]]; the kernel-benchmark fitter
// tunes the ones marked `fitted`, everything else is a published fact or a documented estimate).
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

class ParamSet {
 public:
  ParamSet() = default;
  explicit ParamSet(std::vector<ModelParam> params);
  // The unscoped value (every instance's unless it has its own). Throws std::logic_error for an unknown
  // name (a bug in the model, not user input).
  double get(const std::string& name) const;
  // The value on `instance`: its instance-scoped term when the record has one, else the unscoped term.
  double get(const std::string& name, const std::string& instance) const;
  // True when `instance` has its own value of `name` (ModelParam::instance).
  bool scoped(const std::string& name, const std::string& instance) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Throws InputError when the value is outside [min, max] or the name is unknown.
  void set(const std::string& name, double value);
  // Sets `instance`'s own value of `name` (which must exist). Throws as set().
  void set(const std::string& name, const std::string& instance, double value);
  const std::vector<ModelParam>& all() const { return params_; }
  std::vector<ModelParam>& mutable_all() { return params_; }

 private:
  const ModelParam* find(const std::string& name, const std::string& instance = "") const;
  std::vector<ModelParam> params_;
};

// A dispatcher's terms as its record gives them.
ParamSet default_dispatcher_params(const DispatcherSpec& dispatcher);

}  // namespace moetwin
