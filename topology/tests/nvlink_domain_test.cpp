// An NVLink domain larger than a node (issue 42 item 2): placement, cluster routes and collective times on
// the AWS u-p6e-gb200x72 UltraServer (p6e-gb200.36xlarge: 4 GB200 per tray, 72 GPUs per NVLink domain,
// 4 x 400 Gb/s EFAv4 per tray), against hand values; and the same trays with the domain cut to the node to
// show that the domain, not the node, decides the legs.
#include <gtest/gtest.h>

#include <numeric>

#include "moetwin/common/numbers.hpp"
#include "moetwin/test_support/parallel_layout.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/topology/cluster.hpp"
#include "moetwin/topology/cluster_graph.hpp"
#include "moetwin/topology/collectives.hpp"
#include "moetwin/topology/placement.hpp"

namespace moetwin {
namespace {

using test_support::catalog;
using test_support::parallel_layout;

const InstanceSpec& tray() {
  return catalog().instance("p6e-gb200.36xlarge");
}

Cluster sealed(const InstanceSpec& i, int nodes) {
  Cluster c(i, catalog().gpu(i.gpu), nodes);
  c.seal();
  return c;
}

std::vector<int> iota(int first, int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(NvlinkDomain, CatalogTrayIsFourGpusOfA72GpuDomain) {
  EXPECT_EQ(tray().gpus, 4);
  EXPECT_EQ(nvlink_domain_gpus(tray()), 72);
  // An 8-GPU node is its own domain; a hand-built spec without the field reads as its node.
  EXPECT_EQ(nvlink_domain_gpus(catalog().instance("p6-b300.48xlarge")), 8);
  InstanceSpec bare;
  bare.gpus = 8;
  EXPECT_EQ(nvlink_domain_gpus(bare), 8);
}

TEST(NvlinkDomain, Ep64InsideOneDomainUsesNoNic) {
  // 16 trays (64 GPUs) of the UltraServer, TP1 PP1 EP64 DP64: one EP group over 16 trays, one domain.
  const Placement p(parallel_layout(1, 1, 64, 64), 4, 72);
  EXPECT_EQ(p.max_nodes_spanned(GroupKind::ep), 16);
  EXPECT_EQ(p.max_domains_spanned(GroupKind::ep), 1);
  EXPECT_EQ(p.max_domains_spanned(GroupKind::dp), 1);
  EXPECT_EQ(p.domain_of(63), 0);
  EXPECT_TRUE(p.same_domain(0, 63));
  for (int node = 0; node < 16; ++node) {
    for (int nic = 0; nic < 4; ++nic)
      EXPECT_TRUE(p.groups_on_nic(node, nic, 1).empty()) << node << "." << nic;
  }
  EXPECT_FALSE(p.kinds_share_nics(GroupKind::ep, GroupKind::dp));
  // EP16 groups (4 per stage of 64) also stay inside the domain.
  const Placement p16(parallel_layout(1, 1, 16, 64), 4, 72);
  EXPECT_EQ(p16.max_domains_spanned(GroupKind::ep), 1);
  EXPECT_EQ(p16.max_nodes_spanned(GroupKind::ep), 4);
}

TEST(NvlinkDomain, EpAcrossTwoDomainsCrossesNicsOnlyBetweenDomains) {
  // Two UltraServers (36 trays, 144 GPUs), TP1 PP2 DP72 EP72... a stage is 72 ranks = one domain each; an
  // EP144 group of PP1 spans both.
  const Placement within(parallel_layout(1, 2, 72, 72), 4, 72);
  EXPECT_EQ(within.max_domains_spanned(GroupKind::ep), 1);
  EXPECT_EQ(within.max_domains_spanned(GroupKind::pp), 2);  // the pipeline send crosses domains
  EXPECT_TRUE(within.groups_on_nic(0, 0, 1) ==
              (std::vector<GroupRef>{{GroupKind::pp, 0}, {GroupKind::embedding, 0}}));
  const Placement across(parallel_layout(1, 1, 144, 144), 4, 72);
  EXPECT_EQ(across.max_domains_spanned(GroupKind::ep), 2);
  EXPECT_EQ(across.domain_of(71), 0);
  EXPECT_EQ(across.domain_of(72), 1);
  EXPECT_EQ(across.domains_of(across.groups(GroupKind::ep)[0]), (std::vector<int>{0, 1}));
  EXPECT_TRUE(across.kinds_share_nics(GroupKind::ep, GroupKind::dp));
  // The same trays with the domain at the node: every EP group crosses NICs already inside 72 GPUs.
  const Placement nodes_only(parallel_layout(1, 1, 64, 64), 4);
  EXPECT_EQ(nodes_only.max_domains_spanned(GroupKind::ep), 16);
  EXPECT_FALSE(nodes_only.groups_on_nic(0, 0, 1).empty());
}

TEST(NvlinkDomain, PlacementRefusesADomainThatIsNotAMultipleOfTheNode) {
  EXPECT_THROW(Placement(parallel_layout(1, 1, 8, 8), 4, 6), InputError);
}

TEST(NvlinkDomain, ClusterRoutesNvlinkInsideTheDomainAndNicsBetweenDomains) {
  const Cluster c = sealed(tray(), 36);  // two x72 UltraServers
  EXPECT_EQ(c.domain_gpus(), 72);
  EXPECT_EQ(c.nodes_per_domain(), 18);
  EXPECT_EQ(c.domains(), 2);
  EXPECT_EQ(c.domain_of_node(17), 0);
  EXPECT_EQ(c.domain_of_node(18), 1);
  // Tray 0 GPU 0 to tray 17 GPU 3: same domain, the two NVLink ports.
  EXPECT_EQ(c.route(0, 71), (std::vector<int>{c.nvlink_tx(0), c.nvlink_rx(71)}));
  EXPECT_EQ(c.route(5, 2), (std::vector<int>{c.nvlink_tx(5), c.nvlink_rx(2)}));
  // GPU 71 to GPU 72 (tray 18, the second domain): GPU 71's NIC (tray 17, NIC 3) to GPU 72's (tray 18, NIC
  // 0).
  EXPECT_EQ(c.route(71, 72), (std::vector<int>{c.nic_tx(17, 3), c.nic_rx(18, 0)}));
  // One NVSwitch fabric per domain; every GPU's NVLink port leads into its domain's.
  int switches = 0;
  const ClusterGraph& g = c.graph();
  for (auto [v, end] = boost::vertices(g); v != end; ++v)
    switches += g[*v].kind == VertexKind::nvswitch ? 1 : 0;
  EXPECT_EQ(switches, 2);
  const auto switch_of = [&](int gpu) {
    for (auto [v, end] = boost::vertices(g); v != end; ++v) {
      if (g[*v].kind != VertexKind::gpu || g[*v].index != gpu) continue;
      for (auto [e, eend] = boost::out_edges(*v, g); e != eend; ++e) {
        if (g[boost::target(*e, g)].kind == VertexKind::nvswitch) return boost::target(*e, g);
      }
    }
    return ClusterGraph::null_vertex();
  };
  EXPECT_EQ(switch_of(0), switch_of(71));
  EXPECT_NE(switch_of(0), switch_of(72));
  // Per-node things stay per node: 4 GPUs x 2 NVLink + 4 NICs x 2 links per tray.
  EXPECT_EQ(c.platform().links().size(), 36u * 16u);
}

TEST(NvlinkDomain, AllToAllInsideTheDomainIsNvlinkOnly) {
  const Cluster c = sealed(tray(), 16);
  const double s = 64 * kMiB;  // 1 MiB to each of 64 members: the >= 1 MiB bands of both curves
  const CollectiveEstimate e = estimate_collective(
      c, CollectiveRequest{CollectiveKind::all_to_all, CollectiveAlgorithm::pairwise, s, iota(0, 64)});
  EXPECT_EQ(e.domains, 1);
  EXPECT_EQ(e.nodes, 16);
  EXPECT_EQ(e.ranks_per_domain, 64);
  EXPECT_EQ(e.ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(e.network_bytes_per_rank, 0.0);
  EXPECT_DOUBLE_EQ(e.nvlink_bytes_per_rank, 63.0 / 64.0 * s);
  // Hand value: one NVLink step (1 us) + 63 MiB / (900 GB/s x 0.8).
  const double nvl = 900e9 * 0.8;
  EXPECT_NEAR(e.time_s, 1e-6 + 63.0 * kMiB / nvl, 1e-12);
  EXPECT_EQ(e.bottleneck, "nvlink");
  // The flows: 64 x 63 GPU pairs, all on NVLink ports, none on a NIC.
  const CollectiveFlows f = build_collective_flows(
      c, CollectiveRequest{CollectiveKind::all_to_all, CollectiveAlgorithm::pairwise, s, iota(0, 64)});
  EXPECT_EQ(f.flows.size(), 64u * 63u);
  for (const FlowSpec& flow : f.flows) {
    ASSERT_EQ(flow.route.size(), 2u);
    EXPECT_EQ(flow.route[0], c.nvlink_tx(flow.src));
  }
  // The same 16 trays with the domain cut to the tray: 60 of 64 peers are on other trays, over one
  // 400 Gb/s NIC per GPU: network 60 MiB / (50 GB/s x 0.9) + one EFA step (10 us).
  InstanceSpec node_domain = tray();
  node_domain.nvlink_domain_gpus = 4;
  const CollectiveEstimate n = estimate_collective(
      sealed(node_domain, 16),
      CollectiveRequest{CollectiveKind::all_to_all, CollectiveAlgorithm::pairwise, s, iota(0, 64)});
  EXPECT_EQ(n.domains, 16);
  EXPECT_DOUBLE_EQ(n.network_bytes_per_rank, 60.0 / 64.0 * s);
  EXPECT_NEAR(n.time_s, 10e-6 + 60.0 * kMiB / (50e9 * 0.9), 1e-12);
  EXPECT_GT(n.time_s / e.time_s, 10.0);
}

TEST(NvlinkDomain, CollectivesAcrossTwoDomainsPayTheNetworkOnlyBetweenThem) {
  const Cluster c = sealed(tray(), 36);
  // All-to-all over both domains, 1 MiB per peer: 72 peers in the own domain (71 others), 72 in the other.
  const double s = 144 * kMiB;
  const CollectiveEstimate a2a = estimate_collective(
      c, CollectiveRequest{CollectiveKind::all_to_all, CollectiveAlgorithm::pairwise, s, iota(0, 144)});
  EXPECT_EQ(a2a.domains, 2);
  EXPECT_DOUBLE_EQ(a2a.nvlink_bytes_per_rank, 71.0 * kMiB);
  EXPECT_DOUBLE_EQ(a2a.network_bytes_per_rank, 72.0 * kMiB);
  EXPECT_NEAR(a2a.network_s, 72.0 * kMiB / (50e9 * 0.9), 1e-12);
  EXPECT_NEAR(a2a.time_s, 10e-6 + 72.0 * kMiB / (50e9 * 0.9), 1e-12);
  EXPECT_EQ(a2a.bottleneck, "efa");
  // Flows between the domains leave through NICs only: each crosses exactly one NIC pair.
  const CollectiveFlows f = build_collective_flows(
      c, CollectiveRequest{CollectiveKind::all_to_all, CollectiveAlgorithm::pairwise, s, iota(0, 144)});
  int nic_flows = 0;
  for (const FlowSpec& flow : f.flows) {
    const bool cross = c.domain_of(flow.src) != c.domain_of(flow.dst);
    EXPECT_EQ(flow.route[0] == c.nvlink_tx(flow.src), !cross);
    nic_flows += cross ? 1 : 0;
  }
  EXPECT_EQ(nic_flows, 2 * 72);  // one per (domain pair, member rail), each direction
  // Ring all-reduce of 1 GiB over a 64-GPU group inside one domain: 2 x 63 NVLink steps of 1 us, bus bytes
  // 2 x 63/64 GiB at 0.8 of 900 GB/s (16 MiB steps).
  const double gib = static_cast<double>(kGiB);
  const CollectiveEstimate ar = estimate_collective(
      c, CollectiveRequest{CollectiveKind::all_reduce, CollectiveAlgorithm::ring, gib, iota(0, 64)});
  EXPECT_NEAR(ar.time_s, 2 * 63 * 1e-6 + 2 * 63.0 / 64.0 * gib / (900e9 * 0.8), 1e-12);
  EXPECT_DOUBLE_EQ(ar.network_bytes_per_rank, 0.0);
  // The same all-reduce over ranks 40..103 (32 in each domain): 2 x (2 - 1) EFA steps, 2 x 62 NVLink steps;
  // each domain's 32 members send v / 32 over their rails, v = 2 x 63/64 GiB.
  const CollectiveEstimate ar2 = estimate_collective(
      c, CollectiveRequest{CollectiveKind::all_reduce, CollectiveAlgorithm::ring, gib, iota(40, 64)});
  EXPECT_EQ(ar2.domains, 2);
  const double v = 2 * 63.0 / 64.0 * gib;
  EXPECT_NEAR(ar2.latency_s, 2 * 10e-6 + 124 * 1e-6, 1e-12);
  EXPECT_NEAR(ar2.time_s, ar2.latency_s + std::max(v * 31 / 32 / (900e9 * 0.8), v / 32 / (50e9 * 0.9)),
              1e-12);
}

}  // namespace
}  // namespace moetwin
