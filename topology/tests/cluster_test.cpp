#include "moetwin/topology/cluster.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <thread>

#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/shipped_cluster.hpp"
#include "moetwin/topology/cluster_graph.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

TEST(Cluster, P5LinkLayoutNamesAndCapacities) {
  Cluster c = test_support::cluster_of("p5.48xlarge", 2);
  c.seal();
  // Per node: 8 GPUs x (nvl tx, rx) + 32 NICs x (tx, rx) = 80 links.
  ASSERT_EQ(c.platform().links().size(), 160u);
  EXPECT_TRUE(c.platform().sealed());
  EXPECT_EQ(c.nvlink_tx(9), 82);
  EXPECT_EQ(c.nvlink_rx(9), 83);
  EXPECT_EQ(c.nic_tx(0, 3), 22);
  EXPECT_EQ(c.nic_rx(1, 7), 80 + 16 + 14 + 1);
  const auto& links = c.platform().links();
  EXPECT_EQ(links[82].name, "n1.gpu1.nvl.tx");
  EXPECT_EQ(links[22].name, "n0.nic3.tx");
  EXPECT_EQ(links[111].name, "n1.nic7.rx");
  EXPECT_DOUBLE_EQ(links[82].bandwidth, 450e9);   // H100 NVLink 4: 900 GB/s bidirectional
  EXPECT_DOUBLE_EQ(links[22].bandwidth, 12.5e9);  // 100 Gb/s EFA
  EXPECT_DOUBLE_EQ(links[82].latency, kNvlinkHopLatencyS);
  EXPECT_DOUBLE_EQ(links[83].latency, 0.0);
  EXPECT_EQ(links[22].latency, 10.0e-6);  // EFA one way (catalog/fabric_latency.cpp)
  EXPECT_DOUBLE_EQ(c.gpu_network_bandwidth(), 50e9);
  EXPECT_EQ(c.nic_of(9, 3), 7);
}

TEST(Cluster, RoutesSameNodeOverNvlinkOtherNodeOverRails) {
  Cluster c = test_support::cluster_of("p5.48xlarge", 2);
  c.seal();
  EXPECT_EQ(c.route(0, 1), (std::vector<int>{0, 3}));
  EXPECT_EQ(c.route(3, 3), std::vector<int>{});
  // GPU 0 rail 3 = node 0 NIC 3; GPU 9 rail 3 = node 1 NIC 7.
  EXPECT_EQ(c.route(0, 9, 3), (std::vector<int>{22, 111}));
  EXPECT_THROW(c.route(0, 9, 4), std::out_of_range);
  EXPECT_THROW(c.route(0, 16), std::out_of_range);
}

TEST(Cluster, RoutesAreGraphPaths) {
  Cluster c = test_support::cluster_of("p6-b300.48xlarge", 3, ClusterOptions{2.0});
  c.seal();
  const ClusterGraph& g = c.graph();
  // Vertices: per node 8 GPUs + NVSwitch + 16 NICs + uplink, then the fabric.
  EXPECT_EQ(boost::num_vertices(g), 3u * 26u + 1u);
  // Edges: per node 16 NVLink + 16 x (2 PCIe + 2 NIC) + 2 uplink.
  EXPECT_EQ(boost::num_edges(g), 3u * (16u + 64u + 2u));
  std::map<int, ClusterGraph::edge_descriptor> by_link;
  auto [it, end] = boost::edges(g);
  for (; it != end; ++it) {
    if (g[*it].link >= 0) by_link[g[*it].link] = *it;
  }
  EXPECT_EQ(by_link.size(), c.platform().links().size());
  for (int src : {0, 5, 13, 23}) {
    for (int dst : {1, 7, 8, 22}) {
      for (int rail = 0; rail < 2; ++rail) {
        const std::vector<int> r = c.route(src, dst, rail);
        if (src == dst) continue;
        ASSERT_FALSE(r.empty());
        // Consecutive links share a vertex; the first leaves the source side, the last reaches dst side.
        for (std::size_t i = 0; i + 1 < r.size(); ++i) {
          EXPECT_EQ(boost::target(by_link.at(r[i]), g), boost::source(by_link.at(r[i + 1]), g));
        }
        const ClusterVertex first = g[boost::source(by_link.at(r.front()), g)];
        const ClusterVertex last = g[boost::target(by_link.at(r.back()), g)];
        if (c.node_of(src) == c.node_of(dst)) {
          EXPECT_EQ(first.kind, VertexKind::gpu);
          EXPECT_EQ(first.index, src);
          EXPECT_EQ(last.index, dst);
        } else {
          ASSERT_EQ(r.size(), 4u);  // NIC tx, uplink tx, uplink rx, NIC rx
          EXPECT_EQ(first.kind, VertexKind::nic);
          EXPECT_EQ(first.node, c.node_of(src));
          EXPECT_EQ(first.index, c.nic_of(src, rail));
          EXPECT_EQ(last.kind, VertexKind::nic);
          EXPECT_EQ(last.index, c.nic_of(dst, rail));
        }
      }
    }
  }
}

TEST(Cluster, UplinkCapacityIsNodeNicsOverOversubscription) {
  Cluster c = test_support::cluster_of("p6-b300.48xlarge", 2, ClusterOptions{2.0});
  c.seal();
  // 16 x 400 Gb/s = 800 GB/s per direction, / 2.
  EXPECT_EQ(c.uplink_tx(1), 50 + 48);
  EXPECT_EQ(c.platform().links()[static_cast<std::size_t>(c.uplink_tx(1))].name, "n1.uplink.tx");
  EXPECT_DOUBLE_EQ(c.platform().links()[static_cast<std::size_t>(c.uplink_rx(1))].bandwidth, 400e9);
  EXPECT_EQ(c.route(0, 8, 1),
            (std::vector<int>{c.nic_tx(0, 1), c.uplink_tx(0), c.uplink_rx(1), c.nic_rx(1, 1)}));
  Cluster plain = test_support::cluster_of("p6-b300.48xlarge", 2);
  EXPECT_THROW(plain.uplink_tx(0), std::logic_error);
}

TEST(Cluster, SealedIsImmutable) {
  Cluster c = test_support::cluster_of("p6-b200.48xlarge", 1);
  EXPECT_THROW(c.platform(), std::logic_error);
  c.set_link_bandwidth(c.nvlink_tx(2), 100e9);
  c.seal();
  EXPECT_DOUBLE_EQ(c.platform().links()[4].bandwidth, 100e9);
  EXPECT_THROW(c.set_link_bandwidth(0, 1e9), std::logic_error);
  NetPlatform copy = c.platform();
  EXPECT_THROW(copy.add_link(NetLink{"x", 1, 0}), std::logic_error);
}

TEST(Cluster, RejectsBadInput) {
  EXPECT_THROW(test_support::cluster_of("p5.48xlarge", 0), InputError);
  EXPECT_THROW(test_support::cluster_of("p5.48xlarge", 2, ClusterOptions{0.5}), InputError);
  InstanceSpec bad = catalog().instance("p5.48xlarge");
  bad.efa_nics = 30;
  EXPECT_THROW(Cluster(bad, catalog().gpu("H100-SXM"), 1), InputError);
}

// The graph and platform are built on first use (the closed-form estimate never asks for them): the
// lazily built ones are the eager layout, overrides included, and concurrent first calls and copies of a
// sealed Cluster all see one build.
TEST(Cluster, LazyBuildIsSharedAndThreadSafe) {
  Cluster c = test_support::cluster_of("p6-b300.48xlarge", 4, ClusterOptions{2.0});
  EXPECT_EQ(c.link_count(), 4 * 50);
  EXPECT_THROW(c.graph(), std::logic_error);
  c.set_link_bandwidth(c.nic_tx(3, 5), 1e9);
  c.set_link_bandwidth(c.nic_tx(3, 5), 2e9);  // the later override wins
  EXPECT_THROW(c.set_link_bandwidth(c.link_count(), 1e9), std::out_of_range);
  try {
    c.set_link_bandwidth(c.uplink_rx(2), 0);
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("n2.uplink.rx"), std::string::npos) << e.what();
  }
  c.seal();
  const Cluster copy = c;  // shares the (not yet built) graph and platform
  std::vector<const NetPlatform*> platforms(8, nullptr);
  std::vector<const ClusterGraph*> graphs(8, nullptr);
  {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < platforms.size(); ++t) {
      threads.emplace_back([&, t] {
        const Cluster& mine = t % 2 == 0 ? c : copy;
        platforms[t] = &mine.platform();
        graphs[t] = &mine.graph();
      });
    }
    for (std::thread& t : threads) t.join();
  }
  for (std::size_t t = 1; t < platforms.size(); ++t) {
    EXPECT_EQ(platforms[t], platforms[0]);
    EXPECT_EQ(graphs[t], graphs[0]);
  }
  const auto& links = c.platform().links();
  ASSERT_EQ(links.size(), 200u);
  Cluster plain = test_support::cluster_of("p6-b300.48xlarge", 4, ClusterOptions{2.0});
  plain.seal();
  const auto& nominal = plain.platform().links();
  for (std::size_t id = 0; id < links.size(); ++id) {
    EXPECT_EQ(links[id].name, nominal[id].name);
    EXPECT_DOUBLE_EQ(links[id].latency, nominal[id].latency);
    const double expected = static_cast<int>(id) == c.nic_tx(3, 5) ? 2e9 : nominal[id].bandwidth;
    EXPECT_DOUBLE_EQ(links[id].bandwidth, expected);
  }
  EXPECT_EQ(links[static_cast<std::size_t>(c.nic_tx(3, 5))].name, "n3.nic5.tx");
  EXPECT_DOUBLE_EQ(links[static_cast<std::size_t>(c.nic_tx(3, 4))].bandwidth, 50e9);
  const ClusterGraph& g = c.graph();
  int overridden = 0;
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const int link = g[*it].link;
    if (link < 0) continue;
    EXPECT_DOUBLE_EQ(g[*it].capacity, links[static_cast<std::size_t>(link)].bandwidth);
    overridden += link == c.nic_tx(3, 5) ? 1 : 0;
  }
  EXPECT_EQ(overridden, 1);
}

}  // namespace
}  // namespace moetwin
