// Hand-built platforms and flow sets for the network model tests and benchmark (independent of the
// cluster graph, so the models are tested on their own).
//
// p6-b300-like numbers (catalog/data/instances.toml, gpus.toml): 8 GPUs per node, NVLink 5 at
// 1800 GB/s bidirectional = 900e9 B/s per direction per GPU; 16 EFA NICs per node (2 rails per GPU) at
// 400 Gb/s = 50e9 B/s per direction. Link latencies are round test values, not calibrated: 0.5 us per
// NVLink direction, 2 us per NIC direction (so a cross-node route carries 4 us).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/topology/network_model.hpp"

namespace moetwin::nettest {

inline constexpr double kNvlinkBandwidth = 900e9;  // bytes/s per direction per GPU
inline constexpr double kNvlinkLatency = 0.5e-6;   // s
inline constexpr double kNicBandwidth = 50e9;      // bytes/s per direction per NIC (400 Gb/s)
inline constexpr double kNicLatency = 2e-6;        // s

struct TestCluster {
  int nodes = 0;
  int gpus_per_node = 8;
  int rails_per_gpu = 2;
  NetPlatform platform;
  std::vector<int> nvl_tx, nvl_rx;  // by global GPU id (node * gpus_per_node + local)
  std::vector<int> nic_tx, nic_rx;  // by global NIC id (node * rails per node + rail)

  int rails_per_node() const { return gpus_per_node * rails_per_gpu; }
  int gpu(int node, int local) const { return node * gpus_per_node + local; }
  int node_of(int gpu_id) const { return gpu_id / gpus_per_node; }
  int local_of(int gpu_id) const { return gpu_id % gpus_per_node; }
  int nic(int node, int rail) const { return node * rails_per_node() + rail; }

  // Route between two GPUs: NVLink tx + rx inside a node; otherwise the source NIC's tx and the
  // destination NIC's rx on the given rails (non-blocking fabric in between).
  std::vector<int> route(int src, int dst, int src_rail, int dst_rail) const {
    if (node_of(src) == node_of(dst)) {
      return {nvl_tx[static_cast<std::size_t>(src)], nvl_rx[static_cast<std::size_t>(dst)]};
    }
    return {nic_tx[static_cast<std::size_t>(nic(node_of(src), src_rail))],
            nic_rx[static_cast<std::size_t>(nic(node_of(dst), dst_rail))]};
  }
  // The first rail of a GPU.
  int rail_of(int gpu_id) const { return local_of(gpu_id) * rails_per_gpu; }
};

inline TestCluster make_cluster(int nodes, int gpus_per_node = 8, int rails_per_gpu = 2) {
  TestCluster c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.rails_per_gpu = rails_per_gpu;
  for (int n = 0; n < nodes; ++n) {
    for (int g = 0; g < gpus_per_node; ++g) {
      const std::string name = concat({"n", std::to_string(n), ".gpu", std::to_string(g), ".nvl."});
      c.nvl_tx.push_back(c.platform.add_link({name + "tx", kNvlinkBandwidth, kNvlinkLatency}));
      c.nvl_rx.push_back(c.platform.add_link({name + "rx", kNvlinkBandwidth, kNvlinkLatency}));
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (int r = 0; r < c.rails_per_node(); ++r) {
      const std::string name = concat({"n", std::to_string(n), ".nic", std::to_string(r), "."});
      c.nic_tx.push_back(c.platform.add_link({name + "tx", kNicBandwidth, kNicLatency}));
      c.nic_rx.push_back(c.platform.add_link({name + "rx", kNicBandwidth, kNicLatency}));
    }
  }
  c.platform.seal();
  return c;
}

// All-to-all among `nodes` (all GPUs of each), `pair_bytes` from every GPU to every other GPU, scaled by
// recv_scale(destination node). Aggregated as NCCL's rail-aligned all-to-all would put it on the wire:
// one flow per (source node, destination node, rail) carrying what the rail's GPU sends to the
// destination node's GPUs, split evenly over the GPU's rails; one flow per GPU pair inside a node.
inline void add_all_to_all(const TestCluster& c, const std::vector<int>& nodes, double pair_bytes,
                           TimeNs start, std::vector<FlowSpec>& flows,
                           const std::function<double(int)>& recv_scale = nullptr) {
  for (const int a : nodes) {
    for (const int b : nodes) {
      const double scale = recv_scale ? recv_scale(b) : 1.0;
      if (a == b) {
        for (int i = 0; i < c.gpus_per_node; ++i) {
          for (int j = 0; j < c.gpus_per_node; ++j) {
            if (i != j) {
              const int src = c.gpu(a, i), dst = c.gpu(b, j);
              flows.push_back({src, dst, pair_bytes * scale, start, c.route(src, dst, 0, 0)});
            }
          }
        }
        continue;
      }
      for (int r = 0; r < c.rails_per_node(); ++r) {
        const int local = r / c.rails_per_gpu;
        const int src = c.gpu(a, local), dst = c.gpu(b, local);
        const double bytes = pair_bytes * scale * c.gpus_per_node / c.rails_per_gpu;
        flows.push_back({src, dst, bytes, start, c.route(src, dst, r, r)});
      }
    }
  }
}

// One step of a ring over `ranks` (global GPU ids, in ring order): every rank sends `bytes` to the next.
// A cross-node hop leaves on the sender's first rail and arrives on the receiver's first rail.
inline void add_ring_step(const TestCluster& c, const std::vector<int>& ranks, double bytes, TimeNs start,
                          std::vector<FlowSpec>& flows) {
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const int src = ranks[k], dst = ranks[(k + 1) % ranks.size()];
    flows.push_back({src, dst, bytes, start, c.route(src, dst, c.rail_of(src), c.rail_of(dst))});
  }
}

// Every GPU of `from_node` sends `bytes` to the same local GPU of `to_node`, split over its rails.
inline void add_pp_send(const TestCluster& c, int from_node, int to_node, double bytes, TimeNs start,
                        std::vector<FlowSpec>& flows) {
  for (int g = 0; g < c.gpus_per_node; ++g) {
    for (int k = 0; k < c.rails_per_gpu; ++k) {
      const int rail = g * c.rails_per_gpu + k;
      const int src = c.gpu(from_node, g), dst = c.gpu(to_node, g);
      flows.push_back({src, dst, bytes / c.rails_per_gpu, start, c.route(src, dst, rail, rail)});
    }
  }
}

}  // namespace moetwin::nettest
