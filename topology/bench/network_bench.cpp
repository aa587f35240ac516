// Analytical vs SimGrid network models on a 32-node EP all-to-all (the analytical model is the default
// because it must be >= 100x faster at the same answer). Flow set: 32 p6-b300-like nodes, 8 GPUs each, 2
// rails per GPU, 64 MiB per GPU spread evenly over the 256 GPUs, aggregated per (node pair, rail) = 32 * 31 *
// 16 = 15872 inter-node flows plus 32 * 56 = 1792 intra-node NVLink flows. The SimGrid model simulates in a
// forked child, so the CPU column misses its work: compare wall times on an idle machine, or the counter
// cpu_ms = this process's CPU + its children's (getrusage), per run.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>

#include "../tests/net_test_platforms.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/topology/network_models.hpp"

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

// Every flow's bytes scaled by a factor in [0.5, 1.5) from splitmix64(flow index) (own PRNG, STYLE.md
// #5): distinct completion times, so one event per flow — the analytical model's worst case.
Workload make_jittered_workload(int nodes) {
  Workload w = make_workload(nodes, 1.0);
  for (std::size_t i = 0; i < w.flows.size(); ++i) {
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    w.flows[i].bytes *= 0.5 + static_cast<double>(z >> 11) * 0x1.0p-53;
  }
  return w;
}

// CPU seconds used so far by this process and by its reaped children (user + system).
double cpu_seconds() {
  double total = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    total += static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
             static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

// skew < 0: the jittered workload.
void run_model(benchmark::State& state, const std::string& name, double skew) {
  const auto nodes = static_cast<int>(state.range(0));
  const Workload w = skew < 0 ? make_jittered_workload(nodes) : make_workload(nodes, skew);
  const auto model = make_network_model(name);
  TimeNs makespan = 0;
  const double cpu_before = cpu_seconds();
  for (auto _ : state) {
    const NetworkRun run = model->run(w.cluster.platform, w.flows);
    makespan = run.makespan;
    benchmark::DoNotOptimize(makespan);
  }
  state.counters["cpu_ms"] = (cpu_seconds() - cpu_before) * 1e3 / static_cast<double>(state.iterations());
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
void BM_Analytical_JitteredEpAllToAll(benchmark::State& state) {
  run_model(state, "analytical", -1.0);
}
void BM_Simgrid_JitteredEpAllToAll(benchmark::State& state) {
  run_model(state, "simgrid", -1.0);
}

BENCHMARK(BM_Analytical_EpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simgrid_EpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Analytical_SkewedEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simgrid_SkewedEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Analytical_JitteredEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simgrid_JitteredEpAllToAll)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
