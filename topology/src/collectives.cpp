#include "moetwin/topology/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "moetwin/catalog/fabric_latency.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {

namespace {

const InputLocation kWhere{"collective", 0};

// Members of a group by NVLink domain, both ascending: which members share a domain decides NVLink vs
// network legs (on an 8-GPU instance the domain is the node; on an NVL72 rack 72 GPUs, 18 trays). NCCL
// runs its rings, trees and all-to-all over NVLink inside an MNNVL domain (NVLS / P2P over the NVSwitch
// fabric, Megatron-Bridge's USE_MNNVL=1 on GB200/GB300: shared/design/nvl72-and-infiniband.md A2), and
// over the NICs between domains.
struct GroupShape {
  int n = 0;
  std::map<int, std::vector<int>> by_domain;
  int k_max = 0;       // most members in one domain
  int node_count = 0;  // distinct nodes (trays) of the members
  int node_k_max = 0;  // most members on one node
  int domains() const { return static_cast<int>(by_domain.size()); }
};

GroupShape shape_of(const Cluster& cluster, const std::vector<int>& ranks) {
  if (ranks.empty()) throw InputError(kWhere, "group", "(empty)", "expected at least one rank");
  std::set<int> seen;
  std::map<int, int> per_node;
  GroupShape s;
  for (int r : ranks) {
    if (r < 0 || r >= cluster.gpus()) {
      throw InputError(kWhere, "rank", std::to_string(r),
                       "expected a GPU id in [0, " + std::to_string(cluster.gpus()) + ")");
    }
    if (!seen.insert(r).second)
      throw InputError(kWhere, "rank", std::to_string(r), "expected distinct ranks");
    s.by_domain[cluster.domain_of(r)].push_back(r);
    ++per_node[cluster.node_of(r)];
  }
  s.n = static_cast<int>(ranks.size());
  for (auto& [domain, members] : s.by_domain) {
    std::sort(members.begin(), members.end());
    s.k_max = std::max(s.k_max, static_cast<int>(members.size()));
  }
  s.node_count = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) s.node_k_max = std::max(s.node_k_max, count);
  return s;
}

void check_request(const CollectiveRequest& req) {
  if (!(req.bytes >= 0) || !std::isfinite(req.bytes)) {
    throw InputError(kWhere, "bytes", format_exact(req.bytes), "expected a finite size >= 0 bytes");
  }
  const bool ring_kind = req.kind == CollectiveKind::all_reduce ||
                         req.kind == CollectiveKind::reduce_scatter || req.kind == CollectiveKind::all_gather;
  const bool ok = (ring_kind && req.algorithm == CollectiveAlgorithm::ring) ||
                  (req.kind == CollectiveKind::all_reduce && req.algorithm == CollectiveAlgorithm::tree) ||
                  (!ring_kind && req.algorithm == CollectiveAlgorithm::pairwise);
  if (!ok) {
    throw InputError(kWhere, "algorithm", to_string(req.algorithm),
                     std::string("expected ") + (ring_kind ? "ring" : "pairwise") +
                         (req.kind == CollectiveKind::all_reduce ? " or tree" : "") + " for " +
                         to_string(req.kind));
  }
  if (req.kind == CollectiveKind::send_recv && req.ranks.size() != 2) {
    throw InputError(kWhere, "ranks", std::to_string(req.ranks.size()),
                     "expected 2 ranks {src, dst} for send-recv");
  }
}

int ceil_log2(int m) {
  int l = 0;
  while ((1 << l) < m) ++l;
  return l;
}

double uplink_bandwidth(const Cluster& c) {
  return c.nics_per_node() * c.instance().nic_bandwidth / c.options().uplink_oversubscription.value_or(1.0);
}

// Per-rank traffic of one collective in the closed form: what crosses NVLink, what crosses the rails,
// and what crosses one domain's uplinks, plus the latency steps. "Node" in the terms below is the NVLink
// domain (the same on an 8-GPU instance).
struct Traffic {
  double nvlink = 0;       // bytes per rank over its NVLink port
  double network = 0;      // bytes per rank over its rails
  double node_egress = 0;  // bytes per node through its uplink
  double message = 0;      // bytes per step / per peer
  double latency = 0;      // s
};

Traffic traffic_of(const CollectiveRequest& req, const GroupShape& g, const CollectiveParams& p,
                   const InstanceSpec& instance) {
  Traffic t;
  const double s = req.bytes;
  const int n = g.n, m = g.domains(), k = g.k_max;
  // `efa`: a step across NVLink domains on the instance's fabric (EFA or InfiniBand).
  const double nvl = p.nvlink_step_latency_s, efa = p.network_step_latency(instance);
  if (n == 1) return t;
  switch (req.algorithm) {
    case CollectiveAlgorithm::ring: {
      // NCCL runs one ring per channel, rotated so that every member of a node is the exit point of
      // as many rings as the others: a node's k members send v in total to the next node (v/k each
      // over their rails) and v(k-1)/k each over NVLink.
      const double v = bus_bandwidth_factor(req.kind, n) * s;
      const bool ar = req.kind == CollectiveKind::all_reduce;
      const int steps = ar ? 2 * (n - 1) : n - 1;
      // NCCL's tuning model (src/graph/tuning.cc) charges network latency only on the steps where a
      // chunk crosses a node boundary.
      const int inter_steps = m > 1 ? (ar ? 2 * (m - 1) : m - 1) : 0;
      t.message = s / n;
      t.latency = inter_steps * efa + (steps - inter_steps) * nvl;
      if (m == 1) {
        t.nvlink = v;
      } else {
        t.nvlink = v * (k - 1) / k;
        t.network = v / k;
        t.node_egress = v;
      }
      break;
    }
    case CollectiveAlgorithm::tree: {
      // Double binary tree between nodes (each node sends s up and s down in total, spread over its
      // members' rails), a chain inside each node (each member forwards s up and s down).
      t.message = s;
      t.nvlink = k > 1 ? 2 * s : 0;
      t.latency = 2 * (ceil_log2(m) * efa + (k - 1) * nvl);
      if (m > 1) {
        t.network = 2 * s / k;
        t.node_egress = 2 * s;
      }
      break;
    }
    case CollectiveAlgorithm::pairwise: {
      if (req.kind == CollectiveKind::send_recv) {
        t.message = s;
        if (m == 1) {
          t.nvlink = s;
          t.latency = nvl;
        } else {
          t.network = s;
          t.node_egress = s;
          t.latency = efa;
        }
        break;
      }
      // All-to-all: s/n to every member; the rank with the fewest node-local peers sends the most over
      // the network. All peers are in flight at once (NCCL groups the sends): one latency step.
      int k_min = n;
      for (const auto& [domain, members] : g.by_domain)
        k_min = std::min(k_min, static_cast<int>(members.size()));
      t.message = s / n;
      t.nvlink = (k - 1) * s / n;
      t.network = (n - k_min) * s / n;
      double egress = 0;
      for (const auto& [domain, members] : g.by_domain) {
        const double km = static_cast<double>(members.size());
        egress = std::max(egress, km * (n - km) * s / n);
      }
      t.node_egress = egress;
      t.latency = m > 1 ? efa : nvl;
      break;
    }
  }
  // The call's fixed cost, measured only where the whole group is in one node (an NVLink domain larger
  // than a node pays the same: it was measured on 8-GPU NVSwitch nodes, an assumption there).
  if (m == 1) t.latency += p.nvlink_call_latency_s;
  return t;
}

void add_flow(CollectiveFlows& out, int src, int dst, double payload, double efficiency,
              std::vector<int> route) {
  if (payload <= 0) return;
  FlowSpec f;
  f.src = src;
  f.dst = dst;
  f.bytes = payload / efficiency;
  f.route = std::move(route);
  out.flows.push_back(std::move(f));
  out.payload_bytes.push_back(payload);
}

// The (GPU, rail) endpoints of a domain's members, in member order then rail order.
std::vector<std::pair<int, int>> rails_of(const Cluster& c, const std::vector<int>& members) {
  std::vector<std::pair<int, int>> rails;
  for (int r : members) {
    for (int rail = 0; rail < c.nics_per_gpu(); ++rail) rails.emplace_back(r, rail);
  }
  return rails;
}

// `payload` bytes from domain a's members to domain b's members, spread evenly over the rails (each
// member's own NICs, on its node).
void add_domain_pair(CollectiveFlows& out, const Cluster& c, const std::vector<int>& ma,
                     const std::vector<int>& mb, double payload, double efficiency) {
  if (payload <= 0) return;
  const auto ra = rails_of(c, ma), rb = rails_of(c, mb);
  const std::size_t flows = std::max(ra.size(), rb.size());
  for (std::size_t j = 0; j < flows; ++j) {
    const auto [src, src_rail] = ra[j % ra.size()];
    const auto [dst, dst_rail] = rb[j % rb.size()];
    add_flow(out, src, dst, payload / static_cast<double>(flows), efficiency,
             c.nic_route(c.node_of(src), c.nic_of(src, src_rail), c.node_of(dst), c.nic_of(dst, dst_rail)));
  }
}

}  // namespace

const char* to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      return "all-reduce";
    case CollectiveKind::reduce_scatter:
      return "reduce-scatter";
    case CollectiveKind::all_gather:
      return "all-gather";
    case CollectiveKind::all_to_all:
      return "all-to-all";
    case CollectiveKind::send_recv:
      return "send-recv";
  }
  return "unknown";
}

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
      return "ring";
    case CollectiveAlgorithm::tree:
      return "tree";
    case CollectiveAlgorithm::pairwise:
      return "pairwise";
  }
  return "unknown";
}

CollectiveKind parse_collective_kind(const std::string& text, const InputLocation& where) {
  for (CollectiveKind k :
       {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
        CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    if (text == to_string(k)) return k;
  }
  throw InputError(where, "collective", text,
                   "expected one of all-reduce, reduce-scatter, all-gather, all-to-all, send-recv");
}

CollectiveAlgorithm parse_collective_algorithm(const std::string& text, const InputLocation& where) {
  for (CollectiveAlgorithm a :
       {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::pairwise}) {
    if (text == to_string(a)) return a;
  }
  throw InputError(where, "algorithm", text, "expected one of ring, tree, pairwise");
}

CollectiveAlgorithm default_algorithm(CollectiveKind kind) {
  return kind == CollectiveKind::all_to_all || kind == CollectiveKind::send_recv
             ? CollectiveAlgorithm::pairwise
             : CollectiveAlgorithm::ring;
}

double bus_bandwidth_factor(CollectiveKind kind, int n) {
  if (n <= 1) return kind == CollectiveKind::send_recv ? 1.0 : 0.0;
  const double dn = n;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2.0 * (dn - 1) / dn;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return (dn - 1) / dn;
    case CollectiveKind::send_recv:
      return 1.0;
  }
  return 0.0;
}

EfficiencyCurve default_nvlink_efficiency() {
  return EfficiencyCurve({{0, 0.5}, {64 * kKiB, 0.75}, {kMiB, 0.8}},
                         InputLocation{"default NVLink curve", 0});
}

EfficiencyCurve default_efa_efficiency() {
  return EfficiencyCurve({{0, 0.5}, {64 * kKiB, 0.7}, {kMiB, 0.9}}, InputLocation{"default EFA curve", 0});
}

double CollectiveParams::network_step_latency(const InstanceSpec& instance) const {
  return network_step_latency_s.value_or(fabric_latency(instance.fabric).one_way_s);
}

const EfficiencyCurve& CollectiveParams::nvlink_curve(CollectiveKind kind) const {
  const auto it = nvlink_efficiency_by_kind.find(kind);
  return it == nvlink_efficiency_by_kind.end() ? nvlink_efficiency : it->second;
}

double CollectiveParams::nvlink_factor(CollectiveKind kind, int ranks, double bytes, double message) const {
  const auto it = nvlink_efficiency_by_ranks.find(kind);
  if (it == nvlink_efficiency_by_ranks.end() || it->second.empty()) return nvlink_curve(kind).factor(message);
  const std::map<int, EfficiencyCurve>& by_ranks = it->second;
  const auto upper = by_ranks.lower_bound(ranks);  // first measured count >= ranks
  if (upper == by_ranks.end()) return by_ranks.rbegin()->second.factor(bytes);
  if (upper->first == ranks || upper == by_ranks.begin()) return upper->second.factor(bytes);
  const auto lower = std::prev(upper);
  const double w =
      (std::log2(static_cast<double>(ranks)) - std::log2(static_cast<double>(lower->first))) /
      (std::log2(static_cast<double>(upper->first)) - std::log2(static_cast<double>(lower->first)));
  const double lo = lower->second.factor(bytes), hi = upper->second.factor(bytes);
  return lo + (hi - lo) * w;
}

CollectiveEstimate estimate_collective(const Cluster& cluster, const CollectiveRequest& request,
                                       const CollectiveParams& params) {
  check_request(request);
  const GroupShape g = shape_of(cluster, request.ranks);
  const Traffic t = traffic_of(request, g, params, cluster.instance());
  CollectiveEstimate e;
  e.ranks = g.n;
  e.nodes = g.node_count;
  e.ranks_per_node = g.node_k_max;
  e.domains = g.domains();
  e.ranks_per_domain = g.k_max;
  e.message_bytes = t.message;
  e.nvlink_bytes_per_rank = t.nvlink;
  e.network_bytes_per_rank = t.network;
  e.latency_s = t.latency;
  e.bottleneck = "none";
  // The NVLink term is the group's members in one domain (all of it inside a domain) moving the buffer.
  const double nvl_rate = cluster.gpu_spec().nvlink_bandwidth *
                          params.nvlink_factor(request.kind, g.k_max, request.bytes, t.message);
  const double efa_factor = params.efa_efficiency.factor(t.message);
  const auto consider = [&](double seconds, const char* what) {
    if (seconds > e.bandwidth_s) {
      e.bandwidth_s = seconds;
      e.bottleneck = what;
    }
  };
  e.nvlink_s = t.nvlink / nvl_rate;
  e.network_s = t.network / (cluster.gpu_network_bandwidth() * efa_factor);
  consider(e.nvlink_s, "nvlink");
  consider(e.network_s, "efa");
  // A domain's egress leaves through the uplinks of its nodes: the busiest node carries its members' share.
  if (cluster.has_uplinks()) {
    const double node_share = static_cast<double>(g.node_k_max) / g.k_max;
    consider(t.node_egress * node_share / (uplink_bandwidth(cluster) * efa_factor), "uplink");
  }
  e.time_s = e.latency_s + e.bandwidth_s;
  if (e.time_s > 0) {
    e.algbw = request.bytes / e.time_s;
    e.busbw = e.algbw * bus_bandwidth_factor(request.kind, g.n);
  }
  return e;
}

namespace {

// build_all_to_all_flows; `buffer` is the per-rank buffer the NVLink efficiency is read at by calibrated
// curves by GPU count (nvlink_factor): a uniform all-to-all's own size, else n x the largest pair.
CollectiveFlows all_to_all_flows(const Cluster& cluster, const std::vector<int>& ranks,
                                 const std::vector<std::vector<double>>& bytes,
                                 const CollectiveParams& params, std::optional<double> buffer) {
  const GroupShape g = shape_of(cluster, ranks);
  const std::size_t n = ranks.size();
  if (bytes.size() != n)
    throw InputError(kWhere, "traffic matrix", std::to_string(bytes.size()) + " rows",
                     "expected one row per rank");
  double max_pair = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (bytes[i].size() != n) {
      throw InputError(kWhere, "traffic matrix row " + std::to_string(i), std::to_string(bytes[i].size()),
                       "expected " + std::to_string(n) + " columns");
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (!(bytes[i][j] >= 0) || !std::isfinite(bytes[i][j])) {
        throw InputError(kWhere, "traffic matrix", format_exact(bytes[i][j]), "expected finite bytes >= 0");
      }
      if (i != j) max_pair = std::max(max_pair, bytes[i][j]);
    }
  }
  // The efficiency is read at the largest per-peer message: NCCL moves every pair at once.
  const double nvl_eff = params.nvlink_factor(CollectiveKind::all_to_all, g.k_max,
                                              buffer.value_or(max_pair * static_cast<double>(n)), max_pair);
  const double efa_eff = params.efa_efficiency.factor(max_pair);
  CollectiveFlows out;
  // Intra-domain pairs first (ascending src, dst), then domain pairs (ascending), rails in order: a fixed
  // issue order keeps SimGrid deterministic.
  std::map<std::pair<int, int>, double> domain_pairs;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const int a = cluster.domain_of(ranks[i]), b = cluster.domain_of(ranks[j]);
      if (a == b) {
        add_flow(out, ranks[i], ranks[j], bytes[i][j], nvl_eff, cluster.route(ranks[i], ranks[j]));
      } else {
        domain_pairs[{a, b}] += bytes[i][j];
      }
    }
  }
  for (const auto& [pair, payload] : domain_pairs) {
    add_domain_pair(out, cluster, g.by_domain.at(pair.first), g.by_domain.at(pair.second), payload, efa_eff);
  }
  return out;
}

}  // namespace

CollectiveFlows build_all_to_all_flows(const Cluster& cluster, const std::vector<int>& ranks,
                                       const std::vector<std::vector<double>>& bytes,
                                       const CollectiveParams& params) {
  return all_to_all_flows(cluster, ranks, bytes, params, std::nullopt);
}

CollectiveFlows build_collective_flows(const Cluster& cluster, const CollectiveRequest& request,
                                       const CollectiveParams& params) {
  check_request(request);
  const GroupShape g = shape_of(cluster, request.ranks);
  const Traffic t = traffic_of(request, g, params, cluster.instance());
  const double s = request.bytes;
  const int n = g.n, m = g.domains();
  CollectiveFlows out;
  if (n == 1) return out;
  const double nvl_eff = params.nvlink_factor(request.kind, g.k_max, s, t.message);
  const double efa_eff = params.efa_efficiency.factor(t.message);
  std::vector<int> nodes;  // NVLink domains of the group, ascending
  for (const auto& [domain, members] : g.by_domain) nodes.push_back(domain);

  switch (request.algorithm) {
    case CollectiveAlgorithm::pairwise: {
      if (request.kind == CollectiveKind::send_recv) {
        const int src = request.ranks[0], dst = request.ranks[1];
        if (cluster.domain_of(src) == cluster.domain_of(dst)) {
          add_flow(out, src, dst, s, nvl_eff, cluster.route(src, dst));
        } else {
          for (int rail = 0; rail < cluster.nics_per_gpu(); ++rail) {
            add_flow(out, src, dst, s / cluster.nics_per_gpu(), efa_eff, cluster.route(src, dst, rail));
          }
        }
        break;
      }
      const std::vector<std::vector<double>> matrix(static_cast<std::size_t>(n),
                                                    std::vector<double>(static_cast<std::size_t>(n), s / n));
      out = all_to_all_flows(cluster, request.ranks, matrix, params, s);
      break;
    }
    case CollectiveAlgorithm::ring: {
      // Steady state of the rotated rings: NVLink to the next member of the node, and each node's
      // exit traffic to the next node spread over its members' rails.
      for (int node : nodes) {
        const auto& mem = g.by_domain.at(node);
        const std::size_t k = mem.size();
        for (std::size_t i = 0; k > 1 && i < k; ++i) {
          add_flow(out, mem[i], mem[(i + 1) % k], t.nvlink, nvl_eff, cluster.route(mem[i], mem[(i + 1) % k]));
        }
      }
      for (std::size_t a = 0; m > 1 && a < nodes.size(); ++a) {
        const int b = nodes[(a + 1) % nodes.size()];
        add_domain_pair(out, cluster, g.by_domain.at(nodes[a]), g.by_domain.at(b), t.node_egress, efa_eff);
      }
      break;
    }
    case CollectiveAlgorithm::tree: {
      // Chain inside each node: s up and s down between neighbours.
      for (int node : nodes) {
        const auto& mem = g.by_domain.at(node);
        for (std::size_t i = 0; i + 1 < mem.size(); ++i) {
          add_flow(out, mem[i + 1], mem[i], s, nvl_eff, cluster.route(mem[i + 1], mem[i]));
          add_flow(out, mem[i], mem[i + 1], s, nvl_eff, cluster.route(mem[i], mem[i + 1]));
        }
      }
      // Two binary trees over the node positions (the second shifted by one, so that a node interior
      // in one tree is a leaf in the other), each carrying half the data up and down.
      for (int shift = 0; m > 1 && shift < 2; ++shift) {
        for (int pos = 1; pos < m; ++pos) {
          const int child = nodes[static_cast<std::size_t>((pos + shift) % m)];
          const int parent = nodes[static_cast<std::size_t>(((pos - 1) / 2 + shift) % m)];
          add_domain_pair(out, cluster, g.by_domain.at(child), g.by_domain.at(parent), s / 2, efa_eff);
          add_domain_pair(out, cluster, g.by_domain.at(parent), g.by_domain.at(child), s / 2, efa_eff);
        }
      }
      break;
    }
  }
  // The routes carry one hop latency; the remaining steps are added on top.
  const double route_latency = m > 1 ? cluster.network_latency_s() : cluster.options().nvlink_latency_s;
  out.extra_latency_s = std::max(0.0, t.latency - route_latency);
  return out;
}

CollectiveSimulation simulate_collective(const Cluster& cluster, const CollectiveRequest& request,
                                         const NetworkModel& model, const CollectiveParams& params) {
  const CollectiveFlows flows = build_collective_flows(cluster, request, params);
  const NetPlatform& platform = cluster.platform();
  CollectiveSimulation sim;
  sim.estimate = estimate_collective(cluster, request, params);  // shape fields and bytes per rank
  sim.run = model.run(platform, flows.flows);
  const double makespan_s = static_cast<double>(sim.run.makespan) * 1e-9;
  CollectiveEstimate& e = sim.estimate;
  // The makespan includes the route latency of one step; report the same latency term as the closed
  // form and the rest as bandwidth time.
  const double closed_latency = e.latency_s;
  e.time_s = makespan_s + flows.extra_latency_s;
  e.latency_s = std::min(closed_latency, e.time_s);
  e.bandwidth_s = e.time_s - e.latency_s;
  e.algbw = e.time_s > 0 ? request.bytes / e.time_s : 0;
  e.busbw = e.algbw * bus_bandwidth_factor(request.kind, e.ranks);

  std::vector<double> payload(platform.links().size(), 0.0);
  for (std::size_t i = 0; i < flows.flows.size(); ++i) {
    for (int l : flows.flows[i].route) payload[static_cast<std::size_t>(l)] += flows.payload_bytes[i];
  }
  for (std::size_t l = 0; l < payload.size(); ++l) {
    if (payload[l] <= 0) continue;
    LinkLoad load;
    load.link = static_cast<int>(l);
    load.payload_bytes = payload[l];
    if (sim.run.makespan > 0 && l < sim.run.links.size()) {
      load.busy_fraction =
          std::min(1.0, static_cast<double>(sim.run.links[l].busy) / static_cast<double>(sim.run.makespan));
    }
    sim.links.push_back(load);
  }
  std::stable_sort(sim.links.begin(), sim.links.end(), [](const LinkLoad& a, const LinkLoad& b) {
    if (a.busy_fraction != b.busy_fraction) return a.busy_fraction > b.busy_fraction;
    if (a.payload_bytes != b.payload_bytes) return a.payload_bytes > b.payload_bytes;
    return a.link < b.link;
  });
  return sim;
}

}  // namespace moetwin
