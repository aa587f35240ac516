// `moetwin plan` cost (issue 40): DeepSeek-V3 on p6-b300.48xlarge, 1e12 tokens, global batch 256, as
// `moetwin plan --model deepseek-v3 --instance p6-b300.48xlarge --tokens 1e12 --gbs 256` runs it (the
// shipped fitted profile, the search's default screen, window and cap, predictions on the machine's cores
// up to 16), at one node count (32)
// and over the default node range (1-64: 1, 2, 4, 8, 16, 32, 64). Targets on the 2-core CI box: one node
// count <= 1 s, the default range <= 10 s (docs/2026-12-04-plan-speed.md has the measurements).
// Run: build/planning/planning_plan_bench [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/planning/plan.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {
namespace {

void run(benchmark::State& state, int min_nodes, int max_nodes) {
  const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const FittedProfile profile = resolve_fitted_profile("");
  PlanRequest request;
  request.model = "deepseek-v3";
  request.instance = "p6-b300.48xlarge";
  request.tokens = 1e12;
  request.global_batch = 256;
  request.min_nodes = min_nodes;
  request.max_nodes = max_nodes;
  Plan plan;
  for (auto _ : state) {
    plan = make_plan(catalog, request, profile);
    const auto options = plan.options.size();
    benchmark::DoNotOptimize(options);
  }
  state.counters["predictions"] = static_cast<double>(plan.predictions);
  state.counters["options"] = static_cast<double>(plan.options.size());
}

void BM_PlanDsv3OneNodeCount(benchmark::State& state) {
  run(state, 32, 32);
}
BENCHMARK(BM_PlanDsv3OneNodeCount)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlanDsv3DefaultRange(benchmark::State& state) {
  const PlanRequest defaults;
  run(state, defaults.min_nodes, defaults.max_nodes);
}
BENCHMARK(BM_PlanDsv3DefaultRange)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
