// Transport calibration for the collective model. NVLink collectives inside one node: the multi-GPU NCCL
// sweeps of a calibration database (or imported nccl-tests runs) -> the parameters of the simulator's
// closed-form collective model (topology/collectives.hpp, estimate_collective on one node), stored as the
// profile's `[nvlink]`.
//
// The model: t = call_latency + steps x step_latency + NVLink bytes per rank / (catalog per-direction
// NVLink bandwidth x factor(op, per-step message)), with NCCL's ring (all-reduce 2(n-1) steps, reduce-
// scatter and all-gather n-1) and pairwise (all-to-all, send/recv: one exchange) step counts, so a fit
// on 2 GPUs predicts 4 and 8 through the step model, and a fit on several GPU counts tests it.
//
// How it fits (deterministic, no search):
//  1. Latencies from the smallest message of every (op, GPU count), where the bandwidth term is
//     negligible: least squares of relative error for call_latency + steps x step_latency, both >= 0.
//     When the data cannot separate them (one step count, or a negative step latency) the step latency
//     keeps the model's prior (kNvlinkHopLatencyS) and only the call latency is fitted.
//  2. Per op, one efficiency band per measured per-step message size (the first band from 0): the
//     median over GPU counts of bytes / (bandwidth x (t - latency)), clamped to (0, 1] (latency-bound
//     points say nothing about bandwidth and get 1).
//  3. Errors: every point predicted with the fitted parameters (in sample), and with its own point
//     left out of its band (a band left empty falls back to its neighbour: how well the bands
//     interpolate between measured sizes).
#pragma once

#include <string>
#include <vector>

#include "moetwin/calibrate/profile.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/topology/collectives.hpp"

namespace moetwin {

struct NvlinkPoint {
  std::string op;  // "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv"
  int ranks = 0;   // GPUs of the node in the group, >= 2
  double bytes = 0;
  double measured_s = 0;
};

struct NvlinkPointResult {
  NvlinkPoint point;
  double message_bytes = 0;  // per-step / per-peer message the band is read at
  double predicted_s = 0;    // fitted model, in sample
  double loo_predicted_s = 0;
  double prior_predicted_s = 0;   // the model's uncalibrated defaults (CollectiveParams{}), for comparison
  double relative_error() const;  // |predicted - measured| / measured
  double loo_relative_error() const;
};

struct NvlinkFitReport {
  NvlinkCollectiveFit fit;
  bool step_latency_from_prior = false;   // see step 1 above
  std::vector<NvlinkPointResult> points;  // in input order
};

// Throws InputError naming `source` for an unknown op, fewer than 2 ranks, more ranks than the
// instance has GPUs, or non-positive bytes or times; std::invalid_argument for no points.
NvlinkFitReport fit_nvlink_collectives(const std::vector<NvlinkPoint>& points, const InstanceSpec& instance,
                                       const GpuSpec& gpu, const std::string& source);

// EFA fabric runs (libfabric RDM between two NICs) -> the profile's [efa]: the one-way latency of the
// smallest ping-pong message is the step latency; every streamed size gives a band whose factor is
// bytes / (time per message x the instance's per-NIC line rate), clamped to (0, 1].
struct FabricPoint {
  bool stream = false;  // true: streamed time per message; false: ping-pong one-way latency
  double bytes = 0;
  double seconds = 0;
};
// Throws InputError naming `source` for no streamed or no ping-pong point, or non-positive values.
EfaFabricFit fit_efa_fabric(const std::vector<FabricPoint>& points, const InstanceSpec& instance,
                            const std::string& buffer, const std::string& source);

// The collective of a profile op name; InputError located at `source` for others.
CollectiveKind nvlink_op_kind(const std::string& op, const std::string& source);

// The simulator's collective parameters with the fitted NVLink terms in place of `base`'s.
CollectiveParams nvlink_collective_params(const NvlinkCollectiveFit& fit, CollectiveParams base = {});
// ... with the fitted EFA terms in place of `base`'s.
CollectiveParams efa_collective_params(const EfaFabricFit& fit, CollectiveParams base = {});

}  // namespace moetwin
