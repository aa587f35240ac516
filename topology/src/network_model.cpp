// NetPlatform: the links and routes every network model runs flows on.
#include "moetwin/topology/network_model.hpp"

#include <cmath>
#include <stdexcept>

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

}  // namespace moetwin
