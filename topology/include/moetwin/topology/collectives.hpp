// Collective cost models on the cluster: NCCL ring/tree all-reduce, ring reduce-scatter/all-gather,
// pairwise all-to-all and send/recv, over NVLink (same NVLink domain: the node, or an NVL72 rack) and
// EFA / InfiniBand rails (other domains).
//
// Two evaluation paths over the same terms:
//  (a) estimate_collective(): closed form, per op, used by the engine. time = latency term + the
//      slowest of the per-resource bandwidth terms (NVLink port, the GPU's rails, the node uplink).
//  (b) build_collective_flows() + simulate_collective(): the aggregated flow set (per (node pair, rail),
//      never per token) run through a NetworkModel ("analytical" or "simgrid") on Cluster::platform(),
//      for contention with other traffic and per-link utilisation.
//
// Sizes follow nccl-tests (`size` = the per-rank buffer it prints): all-reduce: the buffer; reduce-
// scatter: the input (each rank keeps bytes/n); all-gather: the output (each rank contributes bytes/n);
// all-to-all: each rank's whole send buffer (bytes/n to each member, itself included); send/recv: the
// message. Bus bandwidth = algbw * factor: all-reduce 2(n-1)/n, reduce-scatter, all-gather and
// all-to-all (n-1)/n, send/recv 1 (nccl-tests doc/PERFORMANCE.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moetwin/topology/cluster.hpp"
#include "moetwin/topology/efficiency_curve.hpp"
#include "moetwin/topology/network_model.hpp"

namespace moetwin {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
// ring: NCCL ring (AR, RS, AG). tree: NCCL double binary tree between nodes, chain inside (AR only).
// pairwise: every pair at once, as NCCL's grouped send/recv (all-to-all, send/recv).
enum class CollectiveAlgorithm { ring, tree, pairwise };

const char* to_string(CollectiveKind kind);
const char* to_string(CollectiveAlgorithm algorithm);
// "all-reduce", "reduce-scatter", "all-gather", "all-to-all", "send-recv"; InputError otherwise.
CollectiveKind parse_collective_kind(const std::string& text, const InputLocation& where);
CollectiveAlgorithm parse_collective_algorithm(const std::string& text, const InputLocation& where);
// NCCL's default choice here: pairwise for all-to-all and send/recv, ring otherwise.
CollectiveAlgorithm default_algorithm(CollectiveKind kind);
// nccl-tests bus-bandwidth factor for a group of n ranks.
double bus_bandwidth_factor(CollectiveKind kind, int n);

// Default efficiency curves (uncalibrated priors; calibration profiles replace them). The factor is a
// protocol/bandwidth efficiency only: per-step latency is a separate term.
// NVLink: < 64 KiB NCCL picks the LL protocol (8-byte stores carrying 4 bytes of data: 0.5); 64 KiB-1 MiB
// LL128 (120 of 128 bytes payload, ~0.94, times the Simple-protocol ceiling: 0.75); >= 1 MiB Simple at
// ~0.8 of the per-direction NVLink rate (nccl-tests intra-node all-reduce busbw ~360 of 450 GB/s on
// H100; DeepEP intranode dispatch 320 GB/s on H200 in shared/data/ep-kernel-bench.csv, ~0.71).
EfficiencyCurve default_nvlink_efficiency();
// EFA: < 64 KiB aws-ofi-nccl's eager path copies through bounce buffers and NCCL uses LL (0.5);
// 64 KiB-1 MiB rendezvous RDMA writes of one or a few 128 KiB NCCL chunks, not enough in flight per
// peer to fill the pipe (0.7); >= 1 MiB streamed RDMA writes at ~0.9 of line rate (SRD headers on an
// 8 KiB MTU cost ~1-2%; the rest is completion and flow-control gaps in aws-ofi-nccl).
EfficiencyCurve default_efa_efficiency();

struct CollectiveParams {
  double nvlink_step_latency_s = kNvlinkHopLatencyS;  // per step whose slowest hop is NVLink
  // Per step that crosses the scale-out fabric (EFA or InfiniBand), s. Unset: the fabric's one-way message
  // latency (catalog/fabric_latency.hpp: EFA 10 us, InfiniBand 5 us); a calibration profile's `[efa]` fit
  // of the instance it was measured on sets it.
  std::optional<double> network_step_latency_s;
  // The value a step on `instance`'s fabric pays: network_step_latency_s, else the fabric's latency.
  double network_step_latency(const InstanceSpec& instance) const;
  EfficiencyCurve nvlink_efficiency = default_nvlink_efficiency();
  EfficiencyCurve efa_efficiency = default_efa_efficiency();
  // Measured on one node (calibration profile `[nvlink]`, calibrate/src/nvlink_fit.cpp); the defaults
  // leave the model above unchanged.
  // Fixed time of one collective call whose group stays inside one node, s: kernel launch and NCCL's
  // start/end synchronisation, paid once per call on top of the per-step latencies.
  double nvlink_call_latency_s = 0;
  // Per-op NVLink curves (NCCL picks protocol, channels and chunking per op, so all-gather and all-reduce
  // reach different fractions of the link at the same message); an op without one uses nvlink_efficiency.
  std::map<CollectiveKind, EfficiencyCurve> nvlink_efficiency_by_kind;
  // Per-op NVLink curves by GPU count (calibration profile schema >= 4): for each measured group size,
  // bands indexed by the per-rank buffer (the request's bytes, nccl-tests' size), not by the per-step
  // message: bus-bandwidth efficiency at one buffer rises with the GPU count (H200, NCCL 2.28: all-gather
  // 1 GiB 264 GB/s on 2 GPUs, 322 on 4), which per-step-message bands read the other way round. An op
  // with such curves uses them instead of nvlink_efficiency_by_kind / nvlink_efficiency.
  std::map<CollectiveKind, std::map<int, EfficiencyCurve>> nvlink_efficiency_by_ranks;

  const EfficiencyCurve& nvlink_curve(CollectiveKind kind) const;
  // NVLink efficiency of `kind` for `ranks` GPUs of one node moving a `bytes` per-rank buffer in
  // `message`-byte steps. With curves by GPU count: each measured count's curve read at `bytes`, linear
  // in log2(ranks) between the measured counts around `ranks`, the nearest measured count's outside
  // them (8 GPUs read the 4-GPU curve of a 2- and 4-GPU fit: the conservative choice, as efficiency rose
  // from 2 to 4). Else nvlink_curve(kind) at `message`.
  double nvlink_factor(CollectiveKind kind, int ranks, double bytes, double message) const;
};

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::all_to_all;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::pairwise;
  double bytes = 0;        // nccl-tests size, see above; >= 0
  std::vector<int> ranks;  // GPU ids of the group, distinct; send/recv: {src, dst}
};

struct CollectiveEstimate {
  double time_s = 0;                  // latency + bandwidth terms
  double latency_s = 0;               // step latency term
  double bandwidth_s = 0;             // slowest resource term
  double nvlink_s = 0;                // NVLink port term: nvlink bytes per rank / effective NVLink rate
  double network_s = 0;               // EFA rails term: network bytes per rank / effective rail rate
  double algbw = 0;                   // bytes / time_s, bytes/s (0 when time_s == 0)
  double busbw = 0;                   // algbw * bus_bandwidth_factor, bytes/s
  int ranks = 0;                      // n
  int nodes = 0;                      // nodes the group spans
  int ranks_per_node = 0;             // largest number of members on one node
  int domains = 0;                    // NVLink domains the group spans (= nodes on an 8-GPU instance)
  int ranks_per_domain = 0;           // largest number of members in one NVLink domain
  double message_bytes = 0;           // per-step / per-peer message the efficiency curves were read at
  double nvlink_bytes_per_rank = 0;   // bytes one rank sends over NVLink
  double network_bytes_per_rank = 0;  // bytes one rank sends over its EFA rails
  std::string bottleneck;             // "nvlink", "efa", "uplink" or "none"
};

// Closed form. Throws InputError for an empty/duplicate group, a bad rank, bytes < 0, tree for anything
// but all-reduce, pairwise for ring collectives, or send/recv with other than 2 ranks.
CollectiveEstimate estimate_collective(const Cluster& cluster, const CollectiveRequest& request,
                                       const CollectiveParams& params = {});

// The aggregated flows of one collective, all starting at 0. Intra-node traffic is one flow per
// (src GPU, dst GPU) over NVLink; inter-node traffic one flow per (src node, dst node, rail), where the
// rails of a node are the NICs of the group's members on it, paired in order. A node pair's bytes are
// spread evenly over those rails (exact for balanced traffic and for node-level skew; per-GPU skew
// inside a node is averaged over its rails). Flow bytes are effective bytes (payload / efficiency).
struct CollectiveFlows {
  std::vector<FlowSpec> flows;
  std::vector<double> payload_bytes;  // payload of each flow (bytes/efficiency = flows[i].bytes)
  double extra_latency_s = 0;         // latency steps beyond the one the routes carry
};

CollectiveFlows build_collective_flows(const Cluster& cluster, const CollectiveRequest& request,
                                       const CollectiveParams& params = {});

// An all-to-all with an arbitrary traffic matrix (bytes[i][j] from ranks[i] to ranks[j]; diagonal
// ignored), e.g. skewed routing. Aggregated as above.
CollectiveFlows build_all_to_all_flows(const Cluster& cluster, const std::vector<int>& ranks,
                                       const std::vector<std::vector<double>>& bytes,
                                       const CollectiveParams& params = {});

struct LinkLoad {
  int link = 0;
  double payload_bytes = 0;  // bytes of payload carried
  double busy_fraction = 0;  // busy time / collective time, in [0, 1]
};

struct CollectiveSimulation {
  CollectiveEstimate estimate;  // time_s, algbw, busbw from the network run (+ extra latency)
  NetworkRun run;
  std::vector<LinkLoad> links;  // links that carried bytes, most loaded first (busy fraction, payload, id)
};

// Runs the flows through `model` on the sealed cluster platform.
CollectiveSimulation simulate_collective(const Cluster& cluster, const CollectiveRequest& request,
                                         const NetworkModel& model, const CollectiveParams& params = {});

}  // namespace moetwin
