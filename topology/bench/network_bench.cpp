// Analytical vs SimGrid network models on a 32-node EP all-to-all (issue 3 acceptance: the analytical
// model must be >= 100x faster). Flow set: 32 p6-b300-like nodes, 8 GPUs each, 2 rails per GPU, 64 MiB
// per GPU spread evenly over the 256 GPUs, aggregated per (node pair, rail) = 32 * 31 * 16 = 15872
// inter-node flows plus 32 * 56 = 1792 intra-node NVLink flows.
// Run: network_bench --benchmark_min_time=... ; the ratio is SimGrid time / analytical time.
#include <benchmark/benchmark.h>

#include "../tests/net_test_platforms.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/topology/network_model.hpp"

namespace moetwin {
namespace {

struct Workload {
  nettest::TestCluster cluster;
  std::vector<FlowSpec> flows;
};

// skew: the receive multiplier of node 0 (1 = uniform; 3 = one node receives 3x, which adds events).
Workload make_workload(int nodes, double skew) {
  Workload w{nettest::make_cluster(nodes), {}};
  std::vector<int> members;
  for (int n = 0; n < nodes; ++n) {
    members.push_back(n);
  }
  const double pair_bytes = 64 * kMiB / (8.0 * nodes);
  nettest::add_all_to_all(w.cluster, members, pair_bytes, 0, w.flows,
                          [skew](int node) { return node == 0 ? skew : 1.0; });
  return w;
}

void run_model(benchmark::State& state, const std::string& name, double skew) {
  const Workload w = make_workload(static_cast<int>(state.range(0)), skew);
  const auto model = make_network_model(name);
  TimeNs makespan = 0;
  for (auto _ : state) {
    const NetworkRun run = model->run(w.cluster.platform, w.flows);
    makespan = run.makespan;
    benchmark::DoNotOptimize(makespan);
  }
  state.counters["flows"] = static_cast<double>(w.flows.size());
  state.counters["links"] = static_cast<double>(w.cluster.platform.links().size());
  state.counters["makespan_us"] = static_cast<double>(makespan) * 1e-3;
}

void BM_Analytical_EpAllToAll(benchmark::State& state) {
  run_model(state, "analytical", 1.0);
}
void BM_Simgrid_EpAllToAll(benchmark::State& state) {
  run_model(state, "simgrid", 1.0);
}
void BM_Analytical_SkewedEpAllToAll(benchmark::State& state) {
  run_model(state, "analytical", 3.0);
}
void BM_Simgrid_SkewedEpAllToAll(benchmark::State& state) {
  run_model(state, "simgrid", 3.0);
}

BENCHMARK(BM_Analytical_EpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simgrid_EpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Analytical_SkewedEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simgrid_SkewedEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
