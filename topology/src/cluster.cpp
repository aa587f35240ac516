#include "moetwin/topology/cluster.hpp"

#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "moetwin/catalog/fabric_latency.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/topology/cluster_graph.hpp"

namespace moetwin {

// What platform() and graph() return, built on the first call of either after seal().
struct Cluster::Built {
  std::once_flag once;
  ClusterGraph graph;
  NetPlatform platform;
};

namespace {

std::string node_prefix(int node) {
  return concat({"n", std::to_string(node), "."});
}

}  // namespace

const char* to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu:
      return "gpu";
    case VertexKind::nvswitch:
      return "nvswitch";
    case VertexKind::nic:
      return "nic";
    case VertexKind::uplink:
      return "uplink";
    case VertexKind::fabric:
      return "fabric";
  }
  return "unknown";
}

Cluster::Cluster(const InstanceSpec& instance, const GpuSpec& gpu, int nodes, ClusterOptions options)
    : instance_(instance), gpu_(gpu), nodes_(nodes), options_(options) {
  const InputLocation where{"cluster", 0};
  if (nodes < 1) throw InputError(where, "nodes", std::to_string(nodes), "expected >= 1");
  if (instance.gpus < 1) {
    throw InputError(where, instance.name + ".gpus", std::to_string(instance.gpus), "expected >= 1");
  }
  if (instance.nics_per_gpu < 1 || instance.efa_nics != instance.gpus * instance.nics_per_gpu) {
    throw InputError(where, instance.name + ".efa_nics", std::to_string(instance.efa_nics),
                     "expected gpus * nics_per_gpu = " +
                         std::to_string(instance.gpus * instance.nics_per_gpu) + " (NIC affinity rails)");
  }
  if (!(instance.nic_bandwidth > 0)) {
    throw InputError(where, instance.name + ".nic_bandwidth", format_exact(instance.nic_bandwidth),
                     "expected > 0 bytes/s");
  }
  if (!(gpu.nvlink_bandwidth > 0)) {
    throw InputError(where, gpu.name + ".nvlink_bandwidth", format_exact(gpu.nvlink_bandwidth),
                     "expected > 0 bytes/s");
  }
  if (options.uplink_oversubscription && !(*options.uplink_oversubscription >= 1.0)) {
    throw InputError(where, "oversubscription", format_exact(*options.uplink_oversubscription),
                     "expected >= 1");
  }
  if (!(options.nvlink_latency_s >= 0) || !std::isfinite(options.nvlink_latency_s)) {
    throw InputError(where, "nvlink_latency_s", format_exact(options.nvlink_latency_s),
                     "expected finite seconds >= 0");
  }
  if (options.network_latency_s &&
      (!(*options.network_latency_s >= 0) || !std::isfinite(*options.network_latency_s))) {
    throw InputError(where, "network_latency_s", format_exact(*options.network_latency_s),
                     "expected finite seconds >= 0");
  }
  // The fabric's value unless set: the same source as the closed form's uncalibrated per-step latency
  // (CollectiveParams::network_step_latency), so the flow path's route latency does not exceed the closed
  // form's one-step latency on InfiniBand (it had been EFA's 10 us on every fabric).
  network_latency_s_ = options.network_latency_s.value_or(fabric_latency(instance.fabric).one_way_s);
  gpus_per_node_ = instance.gpus;
  domain_gpus_ = nvlink_domain_gpus(instance);
  if (domain_gpus_ % gpus_per_node_ != 0) {
    throw InputError(where, instance.name + ".nvlink_domain_gpus", std::to_string(domain_gpus_),
                     "expected a multiple of gpus = " + std::to_string(gpus_per_node_));
  }
  nics_per_gpu_ = instance.nics_per_gpu;
  links_per_node_ = 2 * gpus_per_node_ + 2 * nics_per_node() + (has_uplinks() ? 2 : 0);
}

// The link ids' layout per node, in order: GPU g's NVLink tx and rx (2g, 2g+1), NIC c's tx and rx
// (2 gpus + 2c, +1), the uplink's tx and rx (last two, with uplinks).
std::string Cluster::link_name(int link) const {
  const int n = link / links_per_node_;
  int k = link % links_per_node_;
  const char* dir = k % 2 == 0 ? "tx" : "rx";
  const std::string p = node_prefix(n);
  if (k < 2 * gpus_per_node_) return concat({p, "gpu", std::to_string(k / 2), ".nvl.", dir});
  k -= 2 * gpus_per_node_;
  if (k < 2 * nics_per_node()) return concat({p, "nic", std::to_string(k / 2), ".", dir});
  return concat({p, "uplink.", dir});
}

double Cluster::link_bandwidth(int link, double nominal) const {
  double bw = nominal;
  for (const auto& [id, value] : bandwidth_overrides_) {
    if (id == link) bw = value;
  }
  return bw;
}

void Cluster::build(Built& out) const {
  const int nodes = nodes_;
  const int nics = nics_per_node();
  const double pcie = std::numeric_limits<double>::infinity();
  const double nvl_bw = gpu_.nvlink_bandwidth;
  const double nic_bw = instance_.nic_bandwidth;
  ClusterGraph& graph = out.graph;
  NetPlatform& platform = out.platform;
  platform.reserve_links(static_cast<std::size_t>(link_count()));
  // Links are added in id order and named by link_name(), the one statement of the id layout; an
  // overridden one carries its set_link_bandwidth() capacity, in the platform and on its graph edge alike.
  const auto add_link = [this, &platform](double nominal, double latency) {
    const int id = static_cast<int>(platform.links().size());
    platform.add_link(NetLink{link_name(id), link_bandwidth(id, nominal), latency});
    return id;
  };
  const auto capacity = [&platform](int link) {
    return platform.links()[static_cast<std::size_t>(link)].bandwidth;
  };
  // add_vertex(g) then assign: add_vertex(property, g) goes through Boost's named_graph lookup, whose
  // empty boost::optional trips GCC 12's -Wmaybe-uninitialized under the sanitizers.
  // All vertices are made at once (a 512-node cluster has ~17k; growing the vector one by one was 4% of a
  // 4,096-GPU predict), then given their properties in the order add_vertex would have numbered them.
  // One NVSwitch vertex per NVLink domain, numbered with the domain's first node.
  const int per_domain = nodes_per_domain();
  const auto first_of_domain = [per_domain](int n) { return n % per_domain == 0; };
  const std::size_t vertices = static_cast<std::size_t>(nodes) *
                                   static_cast<std::size_t>(gpus_per_node_ + nics + (has_uplinks() ? 1 : 0)) +
                               static_cast<std::size_t>(domains()) + 1;
  graph = ClusterGraph(vertices);
  std::size_t next_vertex = 0;
  const auto add_vertex = [&graph, &next_vertex](ClusterVertex v) {
    const auto d = boost::vertex(next_vertex++, graph);
    graph[d] = v;
    return d;
  };
  // Vertices first (node by node, then the fabric) so that descriptors are stable and ordered.
  std::vector<std::vector<ClusterGraph::vertex_descriptor>> gpu_v(static_cast<std::size_t>(nodes));
  std::vector<std::vector<ClusterGraph::vertex_descriptor>> nic_v(static_cast<std::size_t>(nodes));
  std::vector<ClusterGraph::vertex_descriptor> switch_v(static_cast<std::size_t>(nodes));
  std::vector<ClusterGraph::vertex_descriptor> uplink_v(static_cast<std::size_t>(nodes));
  for (int n = 0; n < nodes; ++n) {
    const auto un = static_cast<std::size_t>(n);
    for (int g = 0; g < gpus_per_node_; ++g) {
      gpu_v[un].push_back(add_vertex(ClusterVertex{VertexKind::gpu, n, n * gpus_per_node_ + g}));
    }
    if (first_of_domain(n)) {
      switch_v[un] = add_vertex(ClusterVertex{VertexKind::nvswitch, n, -1});
    } else {
      switch_v[un] = switch_v[static_cast<std::size_t>(n - n % per_domain)];
    }
    for (int c = 0; c < nics; ++c) {
      nic_v[un].push_back(add_vertex(ClusterVertex{VertexKind::nic, n, c}));
    }
    if (has_uplinks()) uplink_v[un] = add_vertex(ClusterVertex{VertexKind::uplink, n, -1});
  }
  const auto fabric = add_vertex(ClusterVertex{VertexKind::fabric, -1, -1});
  if (next_vertex != vertices) throw std::logic_error("Cluster: vertex count");

  // Links and edges, node by node in the id layout of link_name().
  for (int n = 0; n < nodes; ++n) {
    const auto un = static_cast<std::size_t>(n);
    for (int g = 0; g < gpus_per_node_; ++g) {
      const auto gv = gpu_v[un][static_cast<std::size_t>(g)];
      const int tx = add_link(nvl_bw, options_.nvlink_latency_s);
      const int rx = add_link(nvl_bw, 0.0);
      boost::add_edge(gv, switch_v[un], ClusterEdge{capacity(tx), options_.nvlink_latency_s, tx}, graph);
      boost::add_edge(switch_v[un], gv, ClusterEdge{capacity(rx), 0.0, rx}, graph);
    }
    const auto net_side = has_uplinks() ? uplink_v[un] : fabric;
    for (int c = 0; c < nics; ++c) {
      const auto cv = nic_v[un][static_cast<std::size_t>(c)];
      const int tx = add_link(nic_bw, network_latency_s_);
      const int rx = add_link(nic_bw, 0.0);
      const auto owner = gpu_v[un][static_cast<std::size_t>(c / nics_per_gpu_)];
      boost::add_edge(owner, cv, ClusterEdge{pcie, 0.0, -1}, graph);
      boost::add_edge(cv, owner, ClusterEdge{pcie, 0.0, -1}, graph);
      boost::add_edge(cv, net_side, ClusterEdge{capacity(tx), network_latency_s_, tx}, graph);
      boost::add_edge(net_side, cv, ClusterEdge{capacity(rx), 0.0, rx}, graph);
    }
    if (has_uplinks()) {
      const double up_bw = nics * nic_bw / *options_.uplink_oversubscription;
      const int tx = add_link(up_bw, 0.0);
      const int rx = add_link(up_bw, 0.0);
      boost::add_edge(uplink_v[un], fabric, ClusterEdge{capacity(tx), 0.0, tx}, graph);
      boost::add_edge(fabric, uplink_v[un], ClusterEdge{capacity(rx), 0.0, rx}, graph);
    }
  }
  if (platform.links().size() != static_cast<std::size_t>(link_count())) {
    throw std::logic_error("Cluster: link count");
  }
  platform.seal();
}

void Cluster::set_link_bandwidth(int link, double bytes_per_s) {
  if (sealed_) throw std::logic_error("Cluster: set_link_bandwidth after seal");
  if (link < 0 || link >= link_count()) throw std::out_of_range("Cluster: link id " + std::to_string(link));
  if (!(bytes_per_s > 0)) {
    throw InputError(InputLocation{"cluster", 0}, link_name(link), format_exact(bytes_per_s),
                     "expected bandwidth > 0 bytes/s");
  }
  bandwidth_overrides_.emplace_back(link, bytes_per_s);
}

void Cluster::seal() {
  if (sealed_) return;
  built_ = std::make_shared<Built>();
  sealed_ = true;
}

const Cluster::Built& Cluster::built() const {
  if (!sealed_) throw std::logic_error("Cluster: platform() or graph() before seal()");
  // Every sharer of built_ is a sealed Cluster equal to this one, so whichever builds builds the same.
  std::call_once(built_->once, [this] { build(*built_); });
  return *built_;
}

const NetPlatform& Cluster::platform() const {
  return built().platform;
}

const ClusterGraph& Cluster::graph() const {
  return built().graph;
}

void Cluster::check_gpu(int gpu) const {
  if (gpu < 0 || gpu >= gpus()) throw std::out_of_range("Cluster: GPU id " + std::to_string(gpu));
}

int Cluster::nvlink_tx(int gpu) const {
  check_gpu(gpu);
  return node_of(gpu) * links_per_node_ + 2 * local_of(gpu);
}
int Cluster::nvlink_rx(int gpu) const {
  return nvlink_tx(gpu) + 1;
}

int Cluster::nic_tx(int node, int nic) const {
  if (node < 0 || node >= nodes_ || nic < 0 || nic >= nics_per_node()) {
    throw std::out_of_range("Cluster: NIC " + std::to_string(node) + "." + std::to_string(nic));
  }
  return node * links_per_node_ + 2 * gpus_per_node_ + 2 * nic;
}
int Cluster::nic_rx(int node, int nic) const {
  return nic_tx(node, nic) + 1;
}

int Cluster::uplink_tx(int node) const {
  if (!has_uplinks()) throw std::logic_error("Cluster: no uplinks configured");
  if (node < 0 || node >= nodes_) throw std::out_of_range("Cluster: node " + std::to_string(node));
  return node * links_per_node_ + 2 * gpus_per_node_ + 2 * nics_per_node();
}
int Cluster::uplink_rx(int node) const {
  return uplink_tx(node) + 1;
}

int Cluster::nic_of(int gpu, int rail) const {
  check_gpu(gpu);
  if (rail < 0 || rail >= nics_per_gpu_) throw std::out_of_range("Cluster: rail " + std::to_string(rail));
  return local_of(gpu) * nics_per_gpu_ + rail;
}

std::vector<int> Cluster::nic_route(int src_node, int src_nic, int dst_node, int dst_nic) const {
  if (src_node == dst_node) throw std::logic_error("Cluster: nic_route within one node");
  std::vector<int> r{nic_tx(src_node, src_nic)};
  if (has_uplinks()) {
    r.push_back(uplink_tx(src_node));
    r.push_back(uplink_rx(dst_node));
  }
  r.push_back(nic_rx(dst_node, dst_nic));
  return r;
}

std::vector<int> Cluster::route(int src_gpu, int dst_gpu, int rail) const {
  check_gpu(src_gpu);
  check_gpu(dst_gpu);
  if (src_gpu == dst_gpu) return {};
  if (domain_of(src_gpu) == domain_of(dst_gpu)) return {nvlink_tx(src_gpu), nvlink_rx(dst_gpu)};
  return nic_route(node_of(src_gpu), nic_of(src_gpu, rail), node_of(dst_gpu), nic_of(dst_gpu, rail));
}

}  // namespace moetwin
