// Transport calibration for the collective model. NVLink collectives inside one node: the multi-GPU NCCL
// sweeps of a calibration database (or imported nccl-tests runs) -> the parameters of the simulator's
// closed-form collective model (topology/collectives.hpp, estimate_collective on one node), stored as the
// profile's `[nvlink]`.
//
// The model: t = call_latency + steps x step_latency + NVLink bytes per rank / (catalog per-direction
// NVLink bandwidth x factor), with NCCL's ring (all-reduce 2(n-1) steps, reduce-scatter and all-gather
// n-1) and pairwise (all-to-all, send/recv: one exchange) step counts. factor(op, GPU count, per-rank
// buffer): per op and measured GPU count, bands indexed by the buffer nccl-tests reports; a group of n
// GPUs reads the measured counts around n, linear in log2(n), and the nearest measured count outside
// them (CollectiveParams::nvlink_factor). Why not the per-step message (profile schema <= 3): bus-
// bandwidth efficiency at one buffer rises with the GPU count (H200: all-gather 1 GiB 264 GB/s on 2
// GPUs, 322 on 4), while more ranks cut the per-step message, which lowered it; cross_count_errors
// measures both on the data.
//
// How it fits (deterministic, no search):
//  1. Latencies from the smallest message of every (op, GPU count), where the bandwidth term is
//     negligible: least squares of relative error for call_latency + steps x step_latency, both >= 0.
//     When the data cannot separate them (one step count, or a negative step latency) the step latency
//     keeps the model's prior (kNvlinkHopLatencyS) and only the call latency is fitted.
//  2. Per (op, GPU count), one efficiency band per measured buffer (the first band from 0): bytes /
//     (bandwidth x (t - latency)), clamped to (0, 1] (latency-bound points say nothing about bandwidth
//     and get 1). NvlinkIndexing::message instead pools the GPU counts into one band per measured
//     per-step message (median), the schema <= 3 bands.
//  3. Errors: every point predicted with the fitted parameters (in sample), and with its own point
//     left out of its band (a band left empty falls back to its neighbour: how well the bands
//     interpolate between measured sizes). send/recv points keep the GPU count of their run (nccl-tests
//     sendrecv on n GPUs: every rank sends to the next at once); the simulator's pair reads 2.
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/profile/collective_params.hpp"
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
  double message_bytes = 0;  // per-step / per-peer message (the band key of message indexing)
  double predicted_s = 0;    // fitted model, in sample
  double loo_predicted_s = 0;
  double prior_predicted_s = 0;   // the model's uncalibrated defaults (CollectiveParams{}), for comparison
  double relative_error() const;  // |predicted - measured| / measured
  double loo_relative_error() const;
};

// What the efficiency bands are indexed by (step 2 above).
enum class NvlinkIndexing {
  buffer,   // per op and measured GPU count, by per-rank buffer (profile schema >= 4)
  message,  // per op, by per-step message, GPU counts pooled (schema <= 3; for comparison)
};
const char* to_string(NvlinkIndexing indexing);  // "buffer", "message"

// Out-of-sample test across GPU counts: the fit of the points on `fit_ranks` predicting the points on
// `predict_ranks` (the same counts: in sample). Relative time errors |predicted - measured| / measured.
struct NvlinkCrossCountErrors {
  NvlinkIndexing indexing = NvlinkIndexing::buffer;
  std::vector<int> fit_ranks;
  std::vector<int> predict_ranks;
  int points = 0;  // points predicted
  double median_error = 0;
  double p90_error = 0;  // nearest rank: the ceil(0.9 points)-th smallest
  double max_error = 0;
  // Buffers >= 16 MiB (bandwidth-bound): count, median error, and the signed extremes of
  // predicted / measured - 1 (> 0: predicted too slow).
  int large_points = 0;
  double large_median_error = 0;
  double large_min_signed = 0;
  double large_max_signed = 0;
};

struct NvlinkFitReport {
  NvlinkCollectiveFit fit;
  bool step_latency_from_prior = false;   // see step 1 above
  std::vector<NvlinkPointResult> points;  // in input order
  // Both indexings (buffer first): for every measured GPU count, its fit predicting the other counts
  // (with one count: none), then all counts in sample.
  std::vector<NvlinkCrossCountErrors> cross_counts;
};

// Throws InputError naming `source` for an unknown op, fewer than 2 ranks, more ranks than the
// instance has GPUs, or non-positive bytes or times; std::invalid_argument for no points.
NvlinkFitReport fit_nvlink_collectives(const std::vector<NvlinkPoint>& points, const InstanceSpec& instance,
                                       const GpuSpec& gpu, const std::string& source,
                                       NvlinkIndexing indexing = NvlinkIndexing::buffer);

// Fits the points on `fit_ranks` and predicts those on `predict_ranks` (see NvlinkCrossCountErrors).
// Throws std::invalid_argument when either selects no point; InputError as fit_nvlink_collectives.
NvlinkCrossCountErrors cross_count_errors(const std::vector<NvlinkPoint>& points,
                                          const std::vector<int>& fit_ranks,
                                          const std::vector<int>& predict_ranks, NvlinkIndexing indexing,
                                          const InstanceSpec& instance, const GpuSpec& gpu,
                                          const std::string& source);

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

}  // namespace moetwin
