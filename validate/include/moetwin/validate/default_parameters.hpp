// Which free parameters `moetwin validate --fit` fits when none are named: only those the rows can pin
// down. A time scale is identifiable only where the time it scales is a visible share of the iterations
// it is fitted on; below that, terms with larger shares (host time per layer, A2A time per call) trade
// against it and the fit drives it to a bound, and the value it takes there carries to GPUs and layouts
// where that time dominates.
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/validate/row_predictions.hpp"

namespace moetwin {

// A scale is fitted by default when the median, over the rows, of its time's share of the predicted
// iteration is at least this. Why 0.2: the scales' floor is 0.7, and a 30% change of a time holding a
// fifth of the iteration moves it by 6%, above the in-sample median error (4-5% on the live runs); at a
// tenth (the kernel time of the published B300 runs) the 3% it moves is inside what the other terms absorb.
inline constexpr double kMinIdentifiableShare = 0.2;

// Median over the predicted rows (ok ones) of compute time / iteration time, and of exposed TP + PP + DP
// collective time / iteration time (median over each row's ranks). 0 when no row was predicted.
struct TimeShares {
  double compute = 0;
  double collectives = 0;
  int rows = 0;
};
TimeShares median_time_shares(const std::vector<RowPrediction>& predictions);

// The default parameter set:
//  - compute_time_scale when shares.compute >= kMinIdentifiableShare, collective_time_scale when
//    shares.collectives >= kMinIdentifiableShare;
//  - launch_s and layer_host_s always (host time is a large share of every live run);
//  - for every dispatcher with runs, in order of first appearance: its A2A transfer scale and latency
//    per call and, for the DeepEP family (whose kernel models have no per-remote-peer term of their own;
//    nccl-alltoall's per_remote_peer_s is calibrated on nccl-tests), its latency per call per remote node
//    and time per token sent to another node.
// moe_host_s, <dispatcher>.a2a_per_copy_s and <dispatcher>.a2a_fill_tokens are fitted only when named
// (README.md, "How right is it": on the live runs they fit to 0 or trade out-of-sample p90 for median).
std::vector<std::string> default_fit_parameters(const std::vector<LiveRun>& runs, const TimeShares& shares);

}  // namespace moetwin
