// NetPlatform and the registry of network models (STYLE.md #7: each model has a name, a one-line
// description and a reference).
#include "moetwin/topology/network_model.hpp"

#include <cmath>
#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/topology/analytical_network.hpp"
#include "moetwin/topology/simgrid_network.hpp"

namespace moetwin {

int NetPlatform::add_link(NetLink link) {
  if (sealed_) {
    throw std::logic_error("NetPlatform::add_link(" + link.name + "): the platform is sealed");
  }
  if (!std::isfinite(link.bandwidth) || link.bandwidth <= 0) {
    throw std::invalid_argument("link " + link.name + ": bandwidth: " + std::to_string(link.bandwidth) +
                                ": expected a finite number of bytes/s > 0");
  }
  if (!std::isfinite(link.latency) || link.latency < 0) {
    throw std::invalid_argument("link " + link.name + ": latency: " + std::to_string(link.latency) +
                                ": expected a finite number of seconds >= 0");
  }
  links_.push_back(std::move(link));
  return static_cast<int>(links_.size() - 1);
}

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
