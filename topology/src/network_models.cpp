// The registry of network models (STYLE.md #7: each model has a name, a one-line description and a
// reference).
#include "moetwin/topology/network_models.hpp"

#include "moetwin/common/input_error.hpp"
#include "moetwin/topology/analytical_network.hpp"
#include "moetwin/topology/simgrid_network.hpp"

namespace moetwin {

std::vector<std::string> network_model_names() {
  return {"analytical", "simgrid"};
}

std::unique_ptr<NetworkModel> make_network_model(const std::string& name) {
  if (name == "analytical") {
    return std::make_unique<AnalyticalNetwork>();
  }
  if (name == "simgrid") {
    return std::make_unique<SimgridNetwork>();
  }
  throw InputError(InputLocation{}, "network model", name, "one of analytical, simgrid");
}

}  // namespace moetwin
