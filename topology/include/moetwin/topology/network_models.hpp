// The registry of network models by name, in its own library (moetwin::network_models) because it links
// SimGrid, and through it ns-3: a program that only needs the analytical model (the `moetwin` binary, whose
// start was mostly the loader's work) links moetwin::topology alone; `moetwin net` (moetwin-net), the
// topology tests and benchmarks link this one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "moetwin/topology/network_model.hpp"

namespace moetwin {

// Registry: "analytical", "simgrid". Throws InputError listing the known names for anything else.
std::unique_ptr<NetworkModel> make_network_model(const std::string& name);
std::vector<std::string> network_model_names();

}  // namespace moetwin
