// The contention suite (issue 27, item 3): engine-level transfers that overlap on the same links, run
// through the engine's flow model (EngineOptions::network = flow) and through the per-flow network models,
// SimGrid (the oracle) and the analytical one. Every case asserts, per transfer, that the engine's duration
// (end - start, from the trace) agrees with SimGrid's and the analytical model's within 3%, plus a
// hand-computed anchor.
//
// Method, per case:
//  - Each transfer (one collective instance or one P2P) is a set of aggregated flows built with the nettest
//    helpers. A ring reduce-scatter is ONE phase: every ring hop carries the (n - 1) chunks it would carry
//    over the n - 1 steps at once (no per-step latencies, no step barriers: simple, and the per-link bytes
//    are right).
//  - Its engine op is derived from those flows: per member GPU the bytes on its NVLink tx/rx and on its
//    rails tx/rx (the engine sees a GPU's rails as one link of rails x NIC bandwidth); the op's alone
//    duration is the route latency + the longest bytes / capacity over the links the transfer crosses, and
//    use[role] = (bytes on the member's link / capacity) / (duration - latency). The alone duration is
//    checked against the analytical model running the transfer alone.
//  - Engine workload: one rank per GPU, one program per rank, each transfer a channel; concurrent transfers
//    of a rank use distinct ChannelKinds, each on its own stream. A transfer starting at an offset waits for
//    a compute op of that length on stream 0 (OpSpec::deps).
//  - The same flows, each starting when the engine started its transfer, run through "simgrid" and
//    "analytical"; a transfer finishes with its last flow.
//
// Model difference to keep in mind: the engine holds all flows of one transfer at one common rate (SimGrid's
// ptask_L07 shape) while CM02 (SimGrid's network model here, and the analytical model) gives each flow its
// own max-min share. They agree when the transfers meeting on a link do so with the same number of flows
// per rail and each transfer is slowed on all of its bottleneck links alike. The cases below are physically
// meaningful setups where that holds; ContentionKnownGapsOfOneRatePerTransfer measures two where it does not
// (+49.7% and +4.8%, see there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/common/numbers.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/topology/network_models.hpp"
#include "net_test_platforms.hpp"

namespace moetwin {
namespace {

using nettest::TestCluster;

constexpr double kTolerance = 0.03;          // relative, on transfer durations
constexpr int kStreams = 1 + kChannelKinds;  // stream 0 compute, then one stream per channel kind

bool is_tx(NetRole role) {
  return role == NetRole::nvlink_tx || role == NetRole::network_tx;
}

// One engine-level transfer: its flows (FlowSpec::start ignored: the engine decides it) and when it asks to
// start. Members are the GPUs its flows leave or enter.
struct TransferSpec {
  std::string name;
  ChannelKind kind = ChannelKind::ep;       // channel of the members that send
  ChannelKind recv_kind = ChannelKind::ep;  // channel of members that only receive (P2P: pp_*_in)
  CommClass cls = CommClass::ep;
  TimeNs offset = 0;  // ns after 0 at which its members issue it (a compute op of that length before it)
  std::vector<FlowSpec> flows;
};

// A platform, the engine's view of its links and the transfers of one case.
struct Case {
  std::string name;
  NetPlatform platform;
  int gpus = 0;
  std::vector<int> link_rank;           // platform link -> the GPU whose engine link it is part of
  std::vector<NetRole> link_role;       // platform link -> role
  std::vector<std::int32_t> net_links;  // Workload::net_links (empty: every GPU its own four links)
  std::vector<TransferSpec> transfers;
};

// The engine's view of a TestCluster: NVLink ports by GPU, NIC k of a node to the GPU it belongs to.
Case cluster_case(std::string name, const TestCluster& c) {
  Case k;
  k.name = std::move(name);
  k.platform = c.platform;
  k.gpus = c.nodes * c.gpus_per_node;
  k.link_rank.assign(c.platform.links().size(), -1);
  k.link_role.assign(c.platform.links().size(), NetRole::nvlink_tx);
  for (int g = 0; g < k.gpus; ++g) {
    const auto gi = static_cast<std::size_t>(g);
    k.link_rank[static_cast<std::size_t>(c.nvl_tx[gi])] = g;
    k.link_role[static_cast<std::size_t>(c.nvl_tx[gi])] = NetRole::nvlink_tx;
    k.link_rank[static_cast<std::size_t>(c.nvl_rx[gi])] = g;
    k.link_role[static_cast<std::size_t>(c.nvl_rx[gi])] = NetRole::nvlink_rx;
  }
  for (int n = 0; n < c.nodes; ++n) {
    for (int r = 0; r < c.rails_per_node(); ++r) {
      const auto nic = static_cast<std::size_t>(c.nic(n, r));
      const int owner = c.gpu(n, r / c.rails_per_gpu);
      k.link_rank[static_cast<std::size_t>(c.nic_tx[nic])] = owner;
      k.link_role[static_cast<std::size_t>(c.nic_tx[nic])] = NetRole::network_tx;
      k.link_rank[static_cast<std::size_t>(c.nic_rx[nic])] = owner;
      k.link_role[static_cast<std::size_t>(c.nic_rx[nic])] = NetRole::network_rx;
    }
  }
  return k;
}

// One ring step over `ranks` whose cross-node hops are split evenly over the sender's and the receiver's
// rails (NCCL runs several channels over all NICs of a GPU; nettest::add_ring_step uses the first rail
// only, which the engine's one-link-per-GPU view of the rails would see at twice its speed).
void add_ring_step_on_rails(const TestCluster& c, const std::vector<int>& ranks, double bytes,
                            std::vector<FlowSpec>& flows) {
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const int src = ranks[k], dst = ranks[(k + 1) % ranks.size()];
    if (c.node_of(src) == c.node_of(dst)) {
      flows.push_back({src, dst, bytes, 0, c.route(src, dst, 0, 0)});
      continue;
    }
    for (int r = 0; r < c.rails_per_gpu; ++r) {
      flows.push_back(
          {src, dst, bytes / c.rails_per_gpu, 0, c.route(src, dst, c.rail_of(src) + r, c.rail_of(dst) + r)});
    }
  }
}

// A DP ring reduce-scatter of `buffer` bytes over `ranks`, as one phase: each hop carries (n - 1) chunks.
TransferSpec reduce_scatter(const TestCluster& c, std::string name, const std::vector<int>& ranks,
                            double buffer, TimeNs offset) {
  TransferSpec t;
  t.name = std::move(name);
  t.kind = t.recv_kind = ChannelKind::dp;
  t.cls = CommClass::dp;
  t.offset = offset;
  const double n = static_cast<double>(ranks.size());
  add_ring_step_on_rails(c, ranks, (n - 1) * buffer / n, t.flows);
  return t;
}

TransferSpec all_to_all(const TestCluster& c, std::string name, const std::vector<int>& nodes,
                        double pair_bytes, TimeNs offset, ChannelKind kind = ChannelKind::ep) {
  TransferSpec t;
  t.name = std::move(name);
  t.kind = t.recv_kind = kind;
  t.cls = CommClass::ep;
  t.offset = offset;
  nettest::add_all_to_all(c, nodes, pair_bytes, 0, t.flows);
  return t;
}

// One P2P per GPU pair: every GPU of `from_node` sends `bytes` to the same GPU of `to_node` over its rails.
std::vector<TransferSpec> pp_sends(const TestCluster& c, const std::string& name, int from_node, int to_node,
                                   double bytes, TimeNs offset, ChannelKind out, ChannelKind in) {
  std::vector<FlowSpec> all;
  nettest::add_pp_send(c, from_node, to_node, bytes, 0, all);
  std::vector<TransferSpec> out_transfers;
  for (int g = 0; g < c.gpus_per_node; ++g) {
    TransferSpec t;
    t.name = concat({name, " gpu", std::to_string(g)});
    t.kind = out;
    t.recv_kind = in;
    t.cls = CommClass::pp;
    t.offset = offset;
    for (const FlowSpec& f : all) {
      if (f.src == c.gpu(from_node, g)) t.flows.push_back(f);
    }
    out_transfers.push_back(std::move(t));
  }
  return out_transfers;
}

// What the engine is told about one transfer.
struct EngineTransfer {
  TimeNs latency = 0;
  TimeNs duration = 0;           // alone
  std::vector<int> members;      // sorted
  std::map<int, NetLoad> loads;  // by member
  std::map<int, bool> sends;     // by member: has bytes to send
};

std::int32_t engine_link(const Case& k, int rank, NetRole role) {
  const std::int32_t id = rank * kNetRoles + static_cast<int>(role);
  return k.net_links.empty() ? id : k.net_links[static_cast<std::size_t>(id)];
}

EngineTransfer derive(const Case& k, const TransferSpec& t) {
  const std::vector<NetLink>& links = k.platform.links();
  // Capacity of each engine link: the platform links it stands for.
  std::map<std::int32_t, double> capacity;
  for (std::size_t l = 0; l < links.size(); ++l) {
    capacity[engine_link(k, k.link_rank[l], k.link_role[l])] += links[l].bandwidth;
  }
  EngineTransfer e;
  double latency = 0;
  std::map<std::int32_t, double> link_bytes;
  std::map<std::pair<int, int>, double> member_bytes;  // (member, role)
  std::map<std::pair<int, int>, int> member_flows;     // (member, role): flows crossing that link
  for (const FlowSpec& f : t.flows) {
    double route_latency = 0;
    for (const int l : f.route) {
      const auto li = static_cast<std::size_t>(l);
      route_latency += links[li].latency;
      const NetRole role = k.link_role[li];
      const int who = is_tx(role) ? f.src : f.dst;
      const std::int32_t id = engine_link(k, k.link_rank[li], role);
      // A GPU's flows leave on its own links (or on the link it shares, Workload::net_links).
      EXPECT_EQ(id, engine_link(k, who, role)) << t.name << ": link " << links[li].name;
      link_bytes[id] += f.bytes;
      member_bytes[{who, static_cast<int>(role)}] += f.bytes;
      ++member_flows[{who, static_cast<int>(role)}];
    }
    latency = std::max(latency, route_latency);
    e.members.push_back(f.src);
    e.members.push_back(f.dst);
    e.sends[f.src] = true;
  }
  std::sort(e.members.begin(), e.members.end());
  e.members.erase(std::unique(e.members.begin(), e.members.end()), e.members.end());
  double longest = 0;  // s
  for (const auto& [id, bytes] : link_bytes) longest = std::max(longest, bytes / capacity[id]);
  e.latency = static_cast<TimeNs>(std::llround(latency * 1e9));
  e.duration = e.latency + static_cast<TimeNs>(std::ceil(longest * 1e9));
  const double work = static_cast<double>(e.duration - e.latency);
  for (const int m : e.members) {
    NetLoad load;
    load.latency = e.latency;
    for (int role = 0; role < kNetRoles; ++role) {
      const auto it = member_bytes.find({m, role});
      if (it == member_bytes.end()) continue;
      const double busy = it->second / capacity[engine_link(k, m, static_cast<NetRole>(role))] * 1e9;
      load.use[role] = static_cast<float>(std::min(1.0, busy / work));
    }
    // NetLoad::flows: the flows on the member's busiest link (its share of a link it shares grows with them).
    int busiest = 0;
    for (int role = 1; role < kNetRoles; ++role) {
      if (load.use[role] > load.use[busiest]) busiest = role;
    }
    const auto flows = member_flows.find({m, busiest});
    load.flows = static_cast<std::uint16_t>(flows != member_flows.end() ? flows->second : 1);
    e.loads[m] = load;
  }
  return e;
}

// Per transfer: when the engine ran it and when the per-flow models finish its flows.
struct Outcome {
  std::vector<EngineTransfer> derived;
  std::vector<TimeNs> start, end;  // engine (flow model, or closed form)
  std::vector<TimeNs> simgrid_end, analytical_end;
  TimeNs iteration = 0;
};

Workload build_workload(const Case& k, const std::vector<EngineTransfer>& derived) {
  Workload w;
  w.init_ranks(k.gpus);
  w.net_links = k.net_links;
  for (int r = 0; r < k.gpus; ++r) {
    Program p;
    // The rank's transfers in offset order; a compute op on stream 0 reaches each offset.
    std::vector<std::size_t> mine;
    for (std::size_t i = 0; i < derived.size(); ++i) {
      if (std::binary_search(derived[i].members.begin(), derived[i].members.end(), r)) mine.push_back(i);
    }
    std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
      return k.transfers[a].offset < k.transfers[b].offset;
    });
    TimeNs now = 0;
    std::int32_t gate = kNoOp;
    std::vector<bool> kind_used(kChannelKinds, false);
    for (const std::size_t i : mine) {
      const TransferSpec& t = k.transfers[i];
      const EngineTransfer& e = derived[i];
      if (t.offset > now) {
        OpSpec wait;
        wait.duration = t.offset - now;
        if (gate != kNoOp) wait.deps[0] = gate;
        gate = p.add(wait);
        now = t.offset;
      }
      const bool sends = e.sends.count(r) > 0;
      const ChannelKind kind = sends ? t.kind : t.recv_kind;
      EXPECT_FALSE(kind_used[static_cast<std::size_t>(kind)]) << "rank " << r << " has two " << t.name;
      kind_used[static_cast<std::size_t>(kind)] = true;
      OpSpec op;
      op.kind = OpKind::comm;
      op.duration = e.duration;
      op.channel = kind;
      op.comm_class = t.cls;
      op.stream = static_cast<std::uint8_t>(1 + static_cast<int>(kind));
      op.net_load = p.net_load(e.loads.at(r));
      op.deps[0] = gate;
      op.label = p.label(t.name);
      p.add(op);
    }
    p.seal(kStreams);
    w.programs.push_back(std::move(p));
    w.rank_program[static_cast<std::size_t>(r)] = r;
  }
  for (std::size_t i = 0; i < derived.size(); ++i) {
    const auto id = static_cast<std::int32_t>(w.channel_size.size());
    w.channel_size.push_back(static_cast<std::int32_t>(derived[i].members.size()));
    for (const int m : derived[i].members) {
      const ChannelKind kind = derived[i].sends.count(m) > 0 ? k.transfers[i].kind : k.transfers[i].recv_kind;
      w.rank_channels[static_cast<std::size_t>(m * kChannelKinds + static_cast<int>(kind))] = id;
    }
  }
  w.validate();
  return w;
}

// Runs the case's transfers on the engine (`mode`) and, with the engine's start times, on SimGrid and the
// analytical model.
Outcome run_case(const Case& k, NetworkMode mode) {
  Outcome o;
  const std::unique_ptr<NetworkModel> analytical = make_network_model("analytical");
  for (const TransferSpec& t : k.transfers) {
    o.derived.push_back(derive(k, t));
    // The derived alone duration is what the analytical model says of the transfer alone.
    const NetworkRun alone = analytical->run(k.platform, t.flows);
    const double d = static_cast<double>(o.derived.back().duration);
    EXPECT_NEAR(static_cast<double>(alone.makespan), d, 1e-4 * d) << k.name << ": " << t.name << " alone";
  }
  const Workload w = build_workload(k, o.derived);
  EngineOptions options;
  options.network = mode;
  options.trace = true;
  const EngineResult r = run_engine(w, options);
  o.iteration = r.iteration;
  // (rank, program index) -> transfer.
  std::map<std::pair<int, int>, std::size_t> op_transfer;
  for (int rank = 0; rank < k.gpus; ++rank) {
    const Program& p = w.programs[static_cast<std::size_t>(rank)];
    for (int i = 0; i < p.size(); ++i) {
      if (p.ops()[static_cast<std::size_t>(i)].kind != OpKind::comm) continue;
      const std::string& label =
          p.labels()[static_cast<std::size_t>(p.ops()[static_cast<std::size_t>(i)].label)];
      for (std::size_t t = 0; t < k.transfers.size(); ++t) {
        if (k.transfers[t].name == label) op_transfer[{rank, i}] = t;
      }
    }
  }
  o.start.assign(k.transfers.size(), -1);
  o.end.assign(k.transfers.size(), -1);
  for (const TraceSpan& s : r.trace) {
    const auto it = op_transfer.find({s.rank, s.op});
    if (it == op_transfer.end()) continue;
    const std::size_t t = it->second;
    // Every member of a transfer runs it over the same span (a rendezvous).
    if (o.start[t] >= 0) {
      EXPECT_EQ(o.start[t], s.start) << k.transfers[t].name;
      EXPECT_EQ(o.end[t], s.end) << k.transfers[t].name;
    }
    o.start[t] = s.start;
    o.end[t] = s.end;
  }
  std::vector<FlowSpec> flows;
  std::vector<std::size_t> owner;
  for (std::size_t t = 0; t < k.transfers.size(); ++t) {
    EXPECT_GE(o.start[t], 0) << k.transfers[t].name << " did not run";
    for (FlowSpec f : k.transfers[t].flows) {
      f.start = o.start[t];
      flows.push_back(std::move(f));
      owner.push_back(t);
    }
  }
  for (const char* model : {"simgrid", "analytical"}) {
    const NetworkRun run = make_network_model(model)->run(k.platform, flows);
    std::vector<TimeNs>& end = std::string(model) == "simgrid" ? o.simgrid_end : o.analytical_end;
    end.assign(k.transfers.size(), 0);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      end[owner[i]] = std::max(end[owner[i]], run.flows[i].finish);
    }
  }
  return o;
}

// Seconds -> ns, for the hand-computed anchors.
double ns(double seconds) {
  return seconds * 1e9;
}

std::vector<int> all_gpus(int count) {
  std::vector<int> v;
  for (int g = 0; g < count; ++g) v.push_back(g);
  return v;
}

// --- the cases ---

// A DP ring reduce-scatter over every GPU of `nodes` nodes (TP = 1: the dense parameters' DP group spans
// the EP groups) from 0, and 100 us later the EP all-to-all of each EP group of `ep_nodes` nodes (2: EP = 16,
// a 4-node job runs two EP groups side by side; EP across all 4 nodes is a known gap, see KnownGaps).
Case rs_beside_a2a(int nodes, int ep_nodes = 2) {
  const TestCluster c = nettest::make_cluster(nodes);
  Case k = cluster_case(concat({"reduce-scatter beside all-to-all, ", std::to_string(nodes),
                                " nodes, EP over ", std::to_string(ep_nodes), " nodes"}),
                        c);
  k.transfers.push_back(reduce_scatter(c, "dp reduce-scatter", all_gpus(k.gpus), 64 * kMiB, 0));
  for (int first = 0; first < nodes; first += ep_nodes) {
    std::vector<int> group;
    for (int n = first; n < first + ep_nodes; ++n) group.push_back(n);
    // 64 MiB per GPU spread over the group's GPUs.
    k.transfers.push_back(all_to_all(c, concat({"ep all-to-all from node ", std::to_string(first)}), group,
                                     64 * kMiB / (8.0 * ep_nodes), 100'000));
  }
  return k;
}

// Two microbatches' dispatch all-to-alls of one EP group (nodes 0-1), the second `offset` later.
Case two_all_to_alls(TimeNs offset) {
  const TestCluster c = nettest::make_cluster(2);
  Case k = cluster_case(concat({"two all-to-alls, offset ", std::to_string(offset), " ns"}), c);
  k.transfers.push_back(all_to_all(c, "ep all-to-all mb0", {0, 1}, 4 * kMiB, 0));
  // The engine needs a channel per concurrent transfer of a rank: etp stands in for mb1's EP channel.
  k.transfers.push_back(all_to_all(c, "ep all-to-all mb1", {0, 1}, 4 * kMiB, offset, ChannelKind::etp));
  return k;
}

// EP all-to-all of nodes 0-1 at 0; stage boundary node 1 -> node 2 of a 1F1B steady state: at 100 us
// Megatron's send_forward_recv_backward batches the activations forward (node 1's tx rails) with the
// gradients backward (node 1's rx rails), one P2P per GPU pair and direction. `bwd_delay` starts the
// backward that much later (KnownGaps).
Case pp_beside_a2a(TimeNs bwd_delay = 0) {
  const TestCluster c = nettest::make_cluster(3);
  Case k = cluster_case(
      concat({"pp send/recv beside all-to-all, backward delay ", std::to_string(bwd_delay), " ns"}), c);
  k.transfers.push_back(all_to_all(c, "ep all-to-all", {0, 1}, 4 * kMiB, 0));
  for (TransferSpec& t : pp_sends(c, "pp fwd 1->2", 1, 2, 32 * kMiB, 100'000, ChannelKind::pp_fwd_out,
                                  ChannelKind::pp_fwd_in)) {
    k.transfers.push_back(std::move(t));
  }
  for (TransferSpec& t : pp_sends(c, "pp bwd 2->1", 2, 1, 32 * kMiB, 100'000 + bwd_delay,
                                  ChannelKind::pp_bwd_out, ChannelKind::pp_bwd_in)) {
    k.transfers.push_back(std::move(t));
  }
  return k;
}

// Two nodes of two GPUs each, one NIC per node shared by both GPUs (p5 has 4 NICs per GPU and p6-b200 1, so
// sharing arises on instances with fewer NICs than GPUs, or under oversubscription). GPU 0 sends 64 MiB to
// GPU 2 from 0; GPU 1 sends 32 MiB to GPU 3 from 200 us: both cross node 0's NIC tx and node 1's NIC rx. In
// the engine, ranks 1 and 3 map their network tx/rx onto ranks 0 and 2's (Workload::net_links).
Case shared_rail() {
  Case k;
  k.name = "rail shared by two GPUs";
  k.gpus = 4;
  std::vector<int> nvl_tx, nvl_rx, nic_tx, nic_rx;
  const auto add = [&](const std::string& name, double bandwidth, double latency, int rank, NetRole role) {
    const int id = k.platform.add_link({name, bandwidth, latency});
    k.link_rank.push_back(rank);
    k.link_role.push_back(role);
    return id;
  };
  for (int g = 0; g < 4; ++g) {
    const std::string gpu = concat({"gpu", std::to_string(g), ".nvl."});
    nvl_tx.push_back(
        add(gpu + "tx", nettest::kNvlinkBandwidth, nettest::kNvlinkLatency, g, NetRole::nvlink_tx));
    nvl_rx.push_back(
        add(gpu + "rx", nettest::kNvlinkBandwidth, nettest::kNvlinkLatency, g, NetRole::nvlink_rx));
  }
  for (int n = 0; n < 2; ++n) {
    const std::string nic = concat({"n", std::to_string(n), ".nic."});
    // The NIC's engine link is that of the node's first GPU; its second GPU maps onto it.
    nic_tx.push_back(
        add(nic + "tx", nettest::kNicBandwidth, nettest::kNicLatency, 2 * n, NetRole::network_tx));
    nic_rx.push_back(
        add(nic + "rx", nettest::kNicBandwidth, nettest::kNicLatency, 2 * n, NetRole::network_rx));
  }
  k.platform.seal();
  for (int r = 0; r < 4; ++r) {
    for (int role = 0; role < kNetRoles; ++role) {
      const bool network =
          role == static_cast<int>(NetRole::network_tx) || role == static_cast<int>(NetRole::network_rx);
      const int owner = network ? r - r % 2 : r;
      k.net_links.push_back(owner * kNetRoles + role);
    }
  }
  const auto p2p = [&](const std::string& name, int src, int dst, double bytes, TimeNs offset) {
    TransferSpec t;
    t.name = name;
    t.kind = ChannelKind::pp_fwd_out;
    t.recv_kind = ChannelKind::pp_fwd_in;
    t.cls = CommClass::pp;
    t.offset = offset;
    t.flows.push_back(
        {src,
         dst,
         bytes,
         0,
         {nic_tx[static_cast<std::size_t>(src / 2)], nic_rx[static_cast<std::size_t>(dst / 2)]}});
    return t;
  };
  k.transfers.push_back(p2p("p2p 0->2", 0, 2, 64 * kMiB, 0));
  k.transfers.push_back(p2p("p2p 1->3", 1, 3, 32 * kMiB, 200'000));
  return k;
}

class ContentionSuite : public ::testing::Test {
 protected:
  // Runs the case on the engine's flow model and compares every transfer with SimGrid and the analytical
  // model. Returns the outcome for the anchors.
  Outcome compare(const Case& k) {
    const Outcome o = run_case(k, NetworkMode::flow);
    double worst_sg = 0, worst_an = 0;
    for (std::size_t t = 0; t < k.transfers.size(); ++t) {
      const double engine = static_cast<double>(o.end[t] - o.start[t]);
      const double simgrid = static_cast<double>(o.simgrid_end[t] - o.start[t]);
      const double analytical = static_cast<double>(o.analytical_end[t] - o.start[t]);
      const double e_sg = std::abs(engine - simgrid) / simgrid;
      const double e_an = std::abs(engine - analytical) / analytical;
      worst_sg = std::max(worst_sg, e_sg);
      worst_an = std::max(worst_an, e_an);
      EXPECT_LE(e_sg, kTolerance) << k.name << ": " << k.transfers[t].name << " engine " << engine
                                  << " ns vs simgrid " << simgrid << " ns";
      EXPECT_LE(e_an, kTolerance) << k.name << ": " << k.transfers[t].name << " engine " << engine
                                  << " ns vs analytical " << analytical << " ns";
    }
    std::printf("[ contention ] %s: %zu transfers, worst duration error vs simgrid %s, vs analytical %s\n",
                k.name.c_str(), k.transfers.size(), format_significant(worst_sg, 3).c_str(),
                format_significant(worst_an, 3).c_str());
    worst_simgrid_ = std::max(worst_simgrid_, worst_sg);
    worst_analytical_ = std::max(worst_analytical_, worst_an);
    return o;
  }

  void TearDown() override {
    RecordProperty("worst_relative_error_simgrid", format_significant(worst_simgrid_, 3));
    RecordProperty("worst_relative_error_analytical", format_significant(worst_analytical_, 3));
  }

  double worst_simgrid_ = 0;
  double worst_analytical_ = 0;
};

// Index of the transfer named `name`.
std::size_t find(const Case& k, const std::string& name) {
  for (std::size_t t = 0; t < k.transfers.size(); ++t) {
    if (k.transfers[t].name == name) return t;
  }
  ADD_FAILURE() << "no transfer " << name;
  return 0;
}

TEST_F(ContentionSuite, ContentionReduceScatterBesideAllToAllOn2And4Nodes) {
  // EP across all 4 nodes: each rail of a ring hop carries 3 all-to-all flows (one per other node) and 1
  // reduce-scatter flow; per-flow fairness gives the all-to-all 3/4 of the rail, which the engine gets from
  // NetLoad::flows (weight 3 against 1). Without the weights it was 49.7% slow (1010.6 vs 675.1 us).
  {
    const Case k = rs_beside_a2a(4, 4);
    compare(k);
  }
  for (const int nodes : {2, 4}) {
    const Case k = rs_beside_a2a(nodes);
    const Outcome o = compare(k);
    // Anchor: the ring's cross-node hops (GPU 8n + 7 -> 8n + 8) meet the all-to-all on the hop's rails (one
    // flow each per rail). From the reduce-scatter's 4 us latency on, those rails stay busy until both are
    // through (the all-to-all starts moving at 104 us, long before the ring's 629 us alone): the ring
    // finishes at 4 us + (its hop's half + the all-to-all's rail flow) / 50 GB/s.
    const double hop_half = (k.gpus - 1.0) / k.gpus * 64 * kMiB / 2;
    const double rail_flow = 64 * kMiB / 16 * 8 / 2;  // pair bytes x 8 GPUs / 2 rails
    const double expect = ns(4e-6 + (hop_half + rail_flow) / nettest::kNicBandwidth);
    const std::size_t rs = find(k, "dp reduce-scatter");
    EXPECT_NEAR(static_cast<double>(o.end[rs]), expect, kTolerance * expect) << nodes << " nodes";
    EXPECT_GT(static_cast<double>(o.end[rs] - o.start[rs]),
              1.2 * static_cast<double>(o.derived[rs].duration));
  }
}

TEST_F(ContentionSuite, ContentionTwoOverlappingAllToAlls) {
  const TimeNs offset = 150'000;
  const Case k = two_all_to_alls(offset);
  const Outcome o = compare(k);
  // Anchor: each rail carries one 16 MiB flow of each (W = 335.5 us alone). The rails are busy from 4 us
  // until both are through: mb1 ends at 4 us + 2W; mb0, sharing half of the rails from 154 us, at 4 us +
  // 2W - 150 us.
  const double w = 4 * 4 * kMiB / nettest::kNicBandwidth;
  EXPECT_NEAR(static_cast<double>(o.end[1]), ns(4e-6 + 2 * w), kTolerance * ns(2 * w));
  EXPECT_NEAR(static_cast<double>(o.end[0]), ns(4e-6 + 2 * w) - offset, kTolerance * ns(2 * w));
}

TEST_F(ContentionSuite, ContentionPipelineSendRecvBesideAllToAll) {
  const Case k = pp_beside_a2a();
  const Outcome o = compare(k);
  // Anchor: node 1's tx rails carry the all-to-all's 16 MiB flow and the forward send's 16 MiB half, busy
  // from 4 us until both are through: the forward send, the later, ends at 4 us + 32 MiB / 50 GB/s (the
  // all-to-all at 575 us); likewise node 1's rx rails with the backward send.
  const double expect = ns(4e-6 + 32 * kMiB / nettest::kNicBandwidth);
  const std::size_t fwd = find(k, "pp fwd 1->2 gpu0");
  const std::size_t bwd = find(k, "pp bwd 2->1 gpu0");
  EXPECT_NEAR(static_cast<double>(o.end[fwd]), expect, kTolerance * expect);
  EXPECT_NEAR(static_cast<double>(o.end[bwd]), expect, kTolerance * expect);
  EXPECT_NEAR(static_cast<double>(o.end[0]),
              ns(4e-6 + 100e-6 + 2 * (16 * kMiB / nettest::kNicBandwidth - 100e-6)), kTolerance * expect);
}

TEST_F(ContentionSuite, ContentionRailSharedByTwoGpus) {
  const Case k = shared_rail();
  const Outcome o = compare(k);
  // Anchor: p2p 0->2 alone moves 200 us x 50 GB/s = 10 MB before p2p 1->3 starts to move at 204 us. Both
  // then get 25 GB/s: 1->3's 32 MiB take 1342.2 us (done at 1546.2 us); 0->2 has 67.1 - 10 - 33.6 = 23.6 MB
  // left, alone at 50 GB/s: done at 4 us + (64 + 32) MiB / 50 GB/s = 2017.3 us.
  EXPECT_NEAR(static_cast<double>(o.end[1]), ns(204e-6 + 32 * kMiB / 25e9), 1000);
  EXPECT_NEAR(static_cast<double>(o.end[0]), ns(4e-6 + 96 * kMiB / nettest::kNicBandwidth), 1000);
}

TEST_F(ContentionSuite, ContentionClosedFormIsNeverSlowerThanFlow) {
  std::vector<Case> cases;
  cases.push_back(rs_beside_a2a(2));
  cases.push_back(rs_beside_a2a(4));
  cases.push_back(two_all_to_alls(150'000));
  cases.push_back(pp_beside_a2a());
  cases.push_back(shared_rail());
  for (const Case& k : cases) {
    const Outcome closed = run_case(k, NetworkMode::closed_form);
    const Outcome flow = run_case(k, NetworkMode::flow);
    for (std::size_t t = 0; t < k.transfers.size(); ++t) {
      EXPECT_EQ(closed.end[t] - closed.start[t], closed.derived[t].duration)
          << k.name << ": " << k.transfers[t].name;
      EXPECT_LE(closed.end[t] - closed.start[t], flow.end[t] - flow.start[t])
          << k.name << ": " << k.transfers[t].name;
    }
    // Every case overlaps transfers on shared links: the closed form, which overlaps them for free, is
    // faster.
    EXPECT_LT(closed.iteration, flow.iteration) << k.name;
  }
  // Control: the second all-to-all starts after the first is done: nothing overlaps, both modes agree.
  const Case apart = two_all_to_alls(400'000);
  EXPECT_EQ(run_case(apart, NetworkMode::closed_form).iteration,
            run_case(apart, NetworkMode::flow).iteration);
}

// Where one rate per transfer and one rate per flow disagree (the setups above avoid these; measured here so
// that the gap stays known and its direction checked):
//  - The PP backward started 50 us after the forward: from 104 us to 154 us the all-to-all is slowed on node
//    1's tx rails only; the engine holds its flows into node 1 (rx) at the same half rate, CM02 runs those at
//    full rate. The backward then meets more all-to-all traffic in the engine: 550.1 us vs 525.1 us in
//    SimGrid (+4.8%).
TEST_F(ContentionSuite, ContentionKnownGapsOfOneRatePerTransfer) {
  for (const Case& k : {pp_beside_a2a(50'000)}) {
    const Outcome o = run_case(k, NetworkMode::flow);
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t t = 0; t < k.transfers.size(); ++t) {
      const double engine = static_cast<double>(o.end[t] - o.start[t]);
      const double simgrid = static_cast<double>(o.simgrid_end[t] - o.start[t]);
      const double error = std::abs(engine - simgrid) / simgrid;
      if (error > worst) {
        worst = error;
        worst_at = t;
      }
      // The coupling and the per-transfer share only ever slow a transfer down relative to CM02 here.
      EXPECT_GE(engine, simgrid * (1 - kTolerance)) << k.name << ": " << k.transfers[t].name;
    }
    std::printf(
        "[ known gap ] %s: worst %s, engine %s us vs simgrid %s us (error %s)\n", k.name.c_str(),
        k.transfers[worst_at].name.c_str(),
        format_significant(static_cast<double>(o.end[worst_at] - o.start[worst_at]) / 1e3, 5).c_str(),
        format_significant(static_cast<double>(o.simgrid_end[worst_at] - o.start[worst_at]) / 1e3, 5).c_str(),
        format_significant(worst, 3).c_str());
    EXPECT_GT(worst, kTolerance) << k.name << ": the gap closed; move the case into the suite";
  }
}

}  // namespace
}  // namespace moetwin
