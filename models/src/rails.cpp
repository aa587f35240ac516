// NIC rails: path mix per dispatcher and its time factor. See rails.hpp.
#include "moetwin/models/rails.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace moetwin {

RailMix rail_mix(const DispatcherSpec& spec, bool low_latency, bool nccl_pxn, int gpus_per_node) {
  if (gpus_per_node <= 0) throw std::logic_error("rail_mix: no GPUs per node");
  // Destinations spread uniformly over the remote node's local indices: 1 in G shares the sender's.
  const double other_index = static_cast<double>(gpus_per_node - 1) / gpus_per_node;
  RailMix m;
  if (spec.transport == DispatcherTransport::nccl) {
    if (nccl_pxn) {
      m.pxn = other_index;
    } else {
      m.cross_rail = other_index;
    }
  } else if (low_latency) {
    m.cross_rail = other_index;  // per-copy writes straight to the expert's rank
  }
  // DeepEP's normal kernels: to the same local index on each remote node only.
  m.same_rail = 1.0 - m.cross_rail - m.pxn;
  return m;
}

double rail_time_factor(const RailMix& mix, const InstanceSpec& instance) {
  const double eff = instance.cross_rail_efficiency;
  if (!(eff > 0) || eff > 1) throw std::logic_error("rail_time_factor: cross_rail_efficiency outside (0, 1]");
  return mix.same_rail + mix.pxn + mix.cross_rail / eff;
}

int ofi_stripes(double message_bytes, int rails) {
  if (rails <= 1 || message_bytes < 64) return 1;
  constexpr double kStripeBytes = 128.0 * 1024.0;  // aws-ofi-nccl min stripe size (nccl_ofi_param.h)
  const int wanted = static_cast<int>(std::min<double>(rails, std::ceil(message_bytes / kStripeBytes)));
  for (int d = std::max(1, wanted); d > 1; --d)
    if (rails % d == 0) return d;
  return 1;
}

}  // namespace moetwin
