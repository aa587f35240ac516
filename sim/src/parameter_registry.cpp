#include "moetwin/sim/parameter_registry.hpp"

#include <algorithm>

#include "moetwin/common/concat.hpp"

namespace moetwin {

namespace {

bool was_fitted(const FittedProfile& profile, const std::string& key) {
  return profile.fitted &&
         std::find(profile.fitted_keys.begin(), profile.fitted_keys.end(), key) != profile.fitted_keys.end();
}

RegistryEntry entry(const FittedProfile& profile, const std::string& key, const std::string& scope,
                    const std::string& layer) {
  const FreeParameter* fp = find_free_parameter(key);
  return {key,
          scope,
          layer,
          get_free_parameter(profile.sim, key),
          fp != nullptr ? fp->unit : std::string(),
          fp != nullptr ? fp->lo : 0.0,
          fp != nullptr ? fp->hi : 0.0,
          fp != nullptr ? fp->meaning : std::string()};
}

}  // namespace

std::vector<RegistryEntry> parameter_registry(const FittedProfile& profile, const Catalog& catalog) {
  std::vector<RegistryEntry> out;
  const std::string fitted_layer = "fitted on live runs";
  for (const FreeParameter& fp : free_parameters()) {
    out.push_back(entry(profile, fp.key, "global", was_fitted(profile, fp.key) ? fitted_layer : "default"));
  }
  for (const auto& [name, spec] : catalog.dispatchers()) {
    const std::string scope = concat({"dispatcher ", name});
    for (const std::string& leaf : a2a_parameter_leaves()) {
      const std::string key = concat({name, ".", leaf});
      const bool own = profile.fitted && profile.sim.a2a_by_dispatcher.count(name) > 0;
      out.push_back(entry(profile, key, scope,
                          own ? fitted_layer : (profile.fitted ? "generic (no runs of it)" : "default")));
    }
    for (const ModelParam& term : spec.terms) {
      if (!term.instance.empty()) {
        // An instance's own value (per_message_s per instance from its low-latency rows): the record's
        // value; the live fit does not move it (it is a benchmark calibration, not a training term).
        out.push_back({concat({name, ".", term.name, "@", term.instance}),
                       concat({scope, ", instance ", term.instance}),
                       term.fitted ? "calibrated on kernel benchmarks" : "default", term.value, term.unit,
                       term.min, term.max, term.source});
        continue;
      }
      const std::string key = concat({name, ".", term.name});
      const bool live = profile.fitted && profile.sim.model_params.count(key) > 0;
      RegistryEntry e =
          entry(profile, key, scope,
                live ? fitted_layer : (term.fitted ? "calibrated on kernel benchmarks" : "default"));
      e.meaning = term.source;  // the record's own words; the live-fit meaning is in the profile file
      out.push_back(std::move(e));
    }
  }
  for (const auto& [name, stack] : catalog.stacks()) {
    const std::string key = concat({name, ".stack_a2a_scale"});
    const bool own = profile.fitted && profile.sim.stack_a2a_scale.count(name) > 0;
    out.push_back(entry(profile, key, concat({"stack ", name}),
                        own ? "fitted on this stack's rows" : "default (no rows of this stack)"));
  }
  return out;
}

}  // namespace moetwin
