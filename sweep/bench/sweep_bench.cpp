// Sweep throughput: points of the shipped 1,008-point sweep (scenarios/sweeps/dsv3-kimi-b300-1000.toml)
// evaluated as `moetwin sweep` evaluates them (the shipped fitted profile, its uncertainty band and
// novelty), one thread. A slice of 18 consecutive points (one model, node count and layout: 3 micro-batches
// x 2 overlap settings x 3 dispatchers) per case; the whole sweep's target is <= 60 s on 2 threads.
// Run: build/sweep/sweep_bench [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/sweep/point_result.hpp"
#include "moetwin/sweep/profile_predictor.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {
namespace {

// Points [first, first + 18) of the shipped sweep per iteration.
void BM_ShippedSweepSlice(benchmark::State& state) {
  const std::string root = MOETWIN_SOURCE_DIR;
  const Catalog catalog = Catalog::load(root + "/catalog/data");
  const SweepSpec spec = load_sweep_file(root + "/scenarios/sweeps/dsv3-kimi-b300-1000.toml", catalog);
  ProfileInfo info;
  const auto predictor = make_profile_predictor("", info);
  const auto first = static_cast<std::size_t>(state.range(0));
  std::size_t ok = 0;
  for (auto _ : state) {
    for (std::size_t id = first; id < first + 18 && id < spec.point_count(); ++id) {
      const PointRow row = evaluate_point(spec, id, *predictor);
      ok += row.cells[sweep_column("status")] == "ok" ? 1 : 0;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 18);
  state.counters["ok_points"] = static_cast<double>(ok) / static_cast<double>(state.iterations());
}
// DeepSeek-V3 at 32 nodes, the live runs' layout (TP8/PP8/EP32), and Kimi-K2 at 64 nodes, TP8/PP4/EP64.
BENCHMARK(BM_ShippedSweepSlice)
    ->Arg(2 * 7 * 18)
    ->Arg(504 + 3 * 7 * 18 + 5 * 18)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
