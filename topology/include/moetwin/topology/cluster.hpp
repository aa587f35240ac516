// The cluster graph: N nodes of one catalog instance as a Boost.Graph of GPUs, one NVSwitch fabric per
// NVLink domain, EFA/InfiniBand NICs (rails with GPU affinity), optional per-node uplinks and the
// inter-domain fabric. Configured, then sealed; the network models see it as a NetPlatform of directed
// link resources and routes of link ids.
//
// Lazy: link ids, routes and every count are arithmetic on (nodes, GPUs, NICs, domain), so the graph and
// the platform's link list are made only when graph() or platform() is first asked for (the flow model,
// `net`, the SimGrid/ns-3 export, simulate_collective). The closed-form collective estimate never asks:
// at 512 nodes (~17k vertices, ~40k edges, 25k named links) building them had been 31% of a 4,096-GPU
// `predict` (docs/2026-12-04-start-up.md, session 41). The first call builds both once (std::call_once:
// concurrent readers of one sealed Cluster, and copies of it, share one build), the same graph and links
// as an eager build.
//
// NVLink domain: nvlink_domain_gpus(instance) consecutive GPUs (= the node for an 8-GPU instance; 72 =
// 18 trays of 4 on an NVL72 rack, whose 9 NVSwitch trays join every GPU of the rack: shared/design/
// nvl72-and-infiniband.md A2). The NVSwitch vertex of a domain sits with the domain's first node.
//
// Resources (the links of platform(), all directed, capacities per direction):
//   per GPU:   NVLink port tx and rx into its domain's NVSwitch fabric, each GpuSpec::nvlink_bandwidth.
//              The NVSwitch fabric is non-blocking (NVLink 4/5 switch domains have full bisection; NVL72:
//              130 TB/s = 72 x 1.8 TB/s), so the only NVLink bottlenecks are the GPU ports.
//   per NIC:   network (EFA or InfiniBand) tx and rx, each InstanceSpec::nic_bandwidth; the tx carries the
//              fabric's one-way message latency (network_latency_s()). GPU g of a node owns NICs
//              g*nics_per_gpu .. g*nics_per_gpu + nics_per_gpu - 1 (its PCIe-local NICs; the "rails").
//   per node (optional): uplink tx and rx of capacity (efa_nics * nic_bandwidth) / oversubscription,
//              for studying an oversubscribed fabric. Without it the fabric is non-blocking (AWS places
//              capacity blocks on non-blocking EFA spines; SRD sprays packets over many paths).
// GPU -> local NIC goes over PCIe (GPUDirect RDMA); it is not a bottleneck by default, so it carries no
// resource (graph edge with link id -1). Routes: same domain over NVLink, other domains over the NICs.
//
// GPU id = node * gpus_per_node + local index = global rank in torchrun order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/topology/network_model.hpp"

namespace moetwin {

// One NVLink hop through NCCL, seconds. NCCL's tuning model (src/graph/tuning.cc, hwLat[NVLINK]) uses
// ~0.6 us per Simple-protocol step on top of a ~1-2 us base; nccl-tests intra-node small-message
// latencies on H100/B200 are 1-2 us end to end. We take 1 us per hop.
inline constexpr double kNvlinkHopLatencyS = 1.0e-6;
// The network links take their fabric's one-way message latency from catalog/fabric_latency.hpp (EFA
// 10 us, InfiniBand 5 us), the one statement of those values.

struct ClusterOptions {
  // Per-node uplink with capacity (efa_nics * nic_bandwidth) / oversubscription, per direction. Unset:
  // non-blocking rail fabric, no uplink resources. Must be >= 1 when set.
  std::optional<double> uplink_oversubscription;
  double nvlink_latency_s = kNvlinkHopLatencyS;  // per NVLink hop (put on the tx port)
  // Per network message, one way, seconds (put on the NIC tx). Unset: the instance fabric's one-way
  // latency, fabric_latency(instance.fabric).one_way_s (EFA 10 us, InfiniBand 5 us), the value the
  // topology closed form charges per network step when no calibration sets one; the flow path
  // (build_collective_flows) charges the closed form's latency minus this route latency on top, so
  // both must come from the same source. Set: must be finite and >= 0.
  std::optional<double> network_latency_s = std::nullopt;
};

enum class VertexKind { gpu, nvswitch, nic, uplink, fabric };

struct ClusterVertex {
  VertexKind kind = VertexKind::gpu;
  int node = -1;   // -1 for the fabric
  int index = -1;  // GPU id (global), NIC index within node, or -1
};

struct ClusterEdge {
  double capacity = 0;  // bytes/s per direction; +inf for PCIe GPU<->NIC (not modelled as a resource)
  double latency = 0;   // seconds
  int link = -1;        // NetPlatform link id, -1 when not a resource
};

// The Boost.Graph of the cluster, defined in cluster_graph.hpp: only what walks the graph includes Boost
// (about 1,300 headers, 3 of the 4 CPU-s of a small file that includes this one, at -O3:
// docs/2026-12-07-first-answer.md).
struct ClusterGraph;

class Cluster {
 public:
  // Checks and lays out `nodes` nodes of `instance` with `gpu` (the graph itself is made on first use).
  // Throws InputError for nodes < 1, an oversubscription < 1, a latency < 0, or an instance whose efa_nics !=
  // gpus * nics_per_gpu.
  Cluster(const InstanceSpec& instance, const GpuSpec& gpu, int nodes, ClusterOptions options = {});

  // After seal() the graph and platform are immutable; mutators throw std::logic_error. A copy of a sealed
  // Cluster shares its (lazily built) graph and platform.
  void seal();
  bool sealed() const { return sealed_; }
  // Overrides the capacity of one link (e.g. a degraded NIC) before sealing. Throws std::logic_error
  // once sealed, std::out_of_range for a bad id.
  void set_link_bandwidth(int link, double bytes_per_s);

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int gpus() const { return nodes_ * gpus_per_node_; }
  int nics_per_gpu() const { return nics_per_gpu_; }
  int nics_per_node() const { return gpus_per_node_ * nics_per_gpu_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  int local_of(int gpu) const { return gpu % gpus_per_node_; }
  // GPUs per NVLink domain (a multiple of gpus_per_node) and the domain of a GPU / node.
  int domain_gpus() const { return domain_gpus_; }
  int nodes_per_domain() const { return domain_gpus_ / gpus_per_node_; }
  int domain_of(int gpu) const { return gpu / domain_gpus_; }
  int domain_of_node(int node) const { return node / nodes_per_domain(); }
  int domains() const { return (nodes_ + nodes_per_domain() - 1) / nodes_per_domain(); }
  bool has_uplinks() const { return options_.uplink_oversubscription.has_value(); }
  const ClusterOptions& options() const { return options_; }
  // Seconds one network message pays, one way, on a NIC tx link: options().network_latency_s, else the
  // instance fabric's (catalog/fabric_latency.hpp).
  double network_latency_s() const { return network_latency_s_; }
  const InstanceSpec& instance() const { return instance_; }
  const GpuSpec& gpu_spec() const { return gpu_; }

  // Link ids 0 .. links()-1, laid out node by node (see nvlink_tx() and friends).
  int link_count() const { return nodes_ * links_per_node_; }
  // The links as a sealed platform, and the graph. Both require seal() first (std::logic_error otherwise);
  // the first call of either builds both (thread-safe).
  const NetPlatform& platform() const;
  const ClusterGraph& graph() const;

  // Link ids for `src_gpu` -> `dst_gpu`. Same NVLink domain: [src nvl tx, dst nvl rx]. Other domain: [src NIC
  // tx, (src uplink tx, dst uplink rx), dst NIC rx], using NIC `rail` (0 .. nics_per_gpu-1) of each GPU's
  // affinity set. Empty for src == dst. Throws std::out_of_range for bad ids or rail.
  std::vector<int> route(int src_gpu, int dst_gpu, int rail = 0) const;
  // Route between two NICs given by node-level NIC index (0 .. nics_per_node-1) on different nodes:
  // [src NIC tx, (uplinks), dst NIC rx]. Used by flow builders that aggregate per (node pair, rail).
  std::vector<int> nic_route(int src_node, int src_nic, int dst_node, int dst_nic) const;

  // Link ids by role (for reports and tests).
  int nvlink_tx(int gpu) const;
  int nvlink_rx(int gpu) const;
  int nic_tx(int node, int nic) const;  // nic: node-level NIC index
  int nic_rx(int node, int nic) const;
  int uplink_tx(int node) const;  // std::logic_error without uplinks
  int uplink_rx(int node) const;
  // Node-level NIC index of `rail` of `gpu`'s affinity set.
  int nic_of(int gpu, int rail) const;
  // Per-GPU inter-node bandwidth (all its rails), bytes/s per direction.
  double gpu_network_bandwidth() const { return nics_per_gpu_ * instance_.nic_bandwidth; }

 private:
  // What platform() and graph() return, built on the first call of either after seal() (cluster.cpp).
  struct Built;

  void check_gpu(int gpu) const;
  const Built& built() const;
  void build(Built& out) const;
  std::string link_name(int link) const;
  double link_bandwidth(int link, double nominal) const;

  InstanceSpec instance_;
  GpuSpec gpu_;
  int nodes_ = 0;
  int gpus_per_node_ = 0;
  int domain_gpus_ = 0;
  int nics_per_gpu_ = 0;
  ClusterOptions options_;
  double network_latency_s_ = 0;  // s, resolved from options_ and the instance's fabric
  // set_link_bandwidth() overrides (link id, bytes/s) in call order, applied by build(); a later one wins.
  std::vector<std::pair<int, double>> bandwidth_overrides_;
  std::shared_ptr<Built> built_;  // made by seal(): shared by copies, filled once by built()
  bool sealed_ = false;
  int links_per_node_ = 0;  // link ids are laid out node by node
};

const char* to_string(VertexKind kind);

}  // namespace moetwin
