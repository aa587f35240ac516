// What a fitted profile (SimProfile) holds for one scenario's dispatcher, read into the plain record the
// dispatcher's cost module takes (models/dispatcher_cost.hpp, which prices it): its own or generic
// in-training terms, the stack's scale, the dispatcher model's fitted parameters, the host CPU factor and
// the reference instance.
#pragma once

#include <memory>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/models/dispatcher_cost.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {

// `profile`'s terms for `dispatcher` on `instance` with software stack `stack` (catalog name).
DispatcherFit dispatcher_fit(const SimProfile& profile, const DispatcherSpec& dispatcher,
                             const InstanceSpec& instance, const std::string& stack);
// The same for `scenario`'s dispatcher, instance and stack.
DispatcherFit dispatcher_fit(const SimProfile& profile, const Scenario& scenario);

// The dispatcher MoE cost seam of `scenario` under `profile`'s terms (dispatcher_mechanism of its
// dispatcher_fit); null for a dense model: no MoE layer to route, the workload's default seam is never asked.
std::shared_ptr<const MoeCostModel> dispatcher_moe_seam(const Scenario& scenario, const SimProfile& profile);

// a2a_transfer (dispatcher_cost.hpp) under `profile` (any stack: the transfer does not read it).
A2aTransfer a2a_transfer(const SimProfile& profile, const DispatcherSpec& dispatcher,
                         const InstanceSpec& instance);

}  // namespace moetwin
