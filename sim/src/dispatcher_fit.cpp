#include "moetwin/sim/dispatcher_fit.hpp"

#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

DispatcherFit dispatcher_fit(const SimProfile& profile, const DispatcherSpec& dispatcher,
                             const InstanceSpec& instance, const std::string& stack) {
  DispatcherFit f;
  f.terms = profile.a2a_for(dispatcher.name);
  f.own_terms = profile.a2a_by_dispatcher.count(dispatcher.name) > 0;
  if (const auto st = profile.stack_a2a_scale.find(stack); st != profile.stack_a2a_scale.end())
    f.stack_scale = st->second;
  f.model_params = profile.model_params;
  f.host_factor = host_time_factor(profile, instance);
  f.reference_instance = profile.proxy_reference_instance;
  f.generic_sources = generic_a2a_source_names(profile);
  return f;
}

DispatcherFit dispatcher_fit(const SimProfile& profile, const Scenario& scenario) {
  return dispatcher_fit(profile, scenario.dispatcher, scenario.instance, scenario.stack.spec.name);
}

A2aTransfer a2a_transfer(const SimProfile& profile, const DispatcherSpec& dispatcher,
                         const InstanceSpec& instance) {
  return a2a_transfer(dispatcher_fit(profile, dispatcher, instance, std::string()), dispatcher, instance);
}

std::shared_ptr<const MoeCostModel> dispatcher_moe_seam(const Scenario& scenario, const SimProfile& profile) {
  if (scenario.model.experts <= 0) return nullptr;
  return dispatcher_mechanism(scenario, dispatcher_fit(profile, scenario));
}

}  // namespace moetwin
