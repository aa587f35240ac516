#include "moetwin/profile/collective_params.hpp"

#include <map>
#include <utility>
#include <vector>

#include "moetwin/common/input_error.hpp"

namespace moetwin {
EfficiencyCurve efficiency_curve_of(const EfficiencyBands& b) {
  std::vector<EfficiencyCurve::Band> bands;
  for (std::size_t i = 0; i < b.min_bytes.size(); ++i) bands.push_back({b.min_bytes[i], b.factor[i]});
  return EfficiencyCurve(std::move(bands), InputLocation{"calibration profile [nvlink]", 0});
}

CollectiveKind nvlink_op_kind(const std::string& op, const std::string& source) {
  if (op == "all_reduce") return CollectiveKind::all_reduce;
  if (op == "reduce_scatter") return CollectiveKind::reduce_scatter;
  if (op == "all_gather") return CollectiveKind::all_gather;
  if (op == "all_to_all") return CollectiveKind::all_to_all;
  if (op == "send_recv") return CollectiveKind::send_recv;
  throw InputError({source, 0}, "op", op,
                   "expected all_reduce, reduce_scatter, all_gather, all_to_all or send_recv");
}

CollectiveParams nvlink_collective_params(const NvlinkCollectiveFit& fit, CollectiveParams base) {
  base.nvlink_call_latency_s = fit.call_latency_s;
  base.nvlink_step_latency_s = fit.step_latency_s;
  base.nvlink_efficiency_by_kind.clear();
  base.nvlink_efficiency_by_ranks.clear();
  for (const auto& [op, bands] : fit.curves)
    base.nvlink_efficiency_by_kind.emplace(nvlink_op_kind(op, "[nvlink]"), efficiency_curve_of(bands));
  for (const auto& [op, by_ranks] : fit.buffer_curves) {
    std::map<int, EfficiencyCurve>& curves = base.nvlink_efficiency_by_ranks[nvlink_op_kind(op, "[nvlink]")];
    for (const auto& [n, bands] : by_ranks) curves.emplace(n, efficiency_curve_of(bands));
  }
  return base;
}

CollectiveParams efa_collective_params(const EfaFabricFit& fit, CollectiveParams base) {
  base.network_step_latency_s = fit.step_latency_s;
  base.efa_efficiency = efficiency_curve_of(fit.efficiency);
  return base;
}

}  // namespace moetwin
