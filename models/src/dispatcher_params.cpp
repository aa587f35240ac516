#include "moetwin/models/dispatcher_params.hpp"

#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

ParamSet::ParamSet(std::vector<ModelParam> params) : params_(std::move(params)) {}

const ModelParam* ParamSet::find(const std::string& name, const std::string& instance) const {
  for (const auto& p : params_)
    if (p.name == name && p.instance == instance) return &p;
  return nullptr;
}

double ParamSet::get(const std::string& name, const std::string& instance) const {
  if (!instance.empty()) {
    if (const ModelParam* p = find(name, instance)) return p->value;
  }
  return get(name);
}

bool ParamSet::scoped(const std::string& name, const std::string& instance) const {
  return !instance.empty() && find(name, instance) != nullptr;
}

double ParamSet::get(const std::string& name) const {
  const ModelParam* p = find(name);
  if (p == nullptr) throw std::logic_error("dispatcher parameter not defined: " + name);
  return p->value;
}

void ParamSet::set(const std::string& name, double value) {
  set(name, "", value);
}

void ParamSet::set(const std::string& name, const std::string& instance, double value) {
  for (auto& p : params_) {
    if (p.name != name || p.instance != instance) continue;
    if (!(value >= p.min && value <= p.max))
      throw InputError({"dispatcher parameters", 0}, name, format_exact(value),
                       "a value in [" + format_exact(p.min) + ", " + format_exact(p.max) + "] " + p.unit);
    p.value = value;
    return;
  }
  std::string known;
  for (const auto& p : params_)
    known += (known.empty() ? "" : ", ") + p.name + (p.instance.empty() ? "" : "@" + p.instance);
  throw InputError({"dispatcher parameters", 0}, "parameter", instance.empty() ? name : name + "@" + instance,
                   "one of: " + known);
}

ParamSet default_dispatcher_params(const DispatcherSpec& dispatcher) {
  return ParamSet(dispatcher.terms);
}

}  // namespace moetwin
