// Routing-plan speed: a whole DeepSeek-V3 iteration (58 MoE layers x 64 microbatches x EP32, 4096 tokens
// per rank and microbatch) in counts mode must plan in well under a second.
#include <benchmark/benchmark.h>

#include "moetwin/models/routing_plan.hpp"

namespace moetwin {
namespace {

void plan_dsv3_iteration(benchmark::State& state, RoutingKind kind, double exponent) {
  RoutingSpec s;
  s.kind = kind;
  s.zipf_exponent = exponent;
  s.experts = 256;
  s.top_k = 8;
  s.ep_ranks = 32;
  s.ranks_per_node = 8;
  s.tokens_per_rank = 4096;
  s.groups = 8;
  s.topk_groups = 4;
  for (auto _ : state) {
    const RoutingPlanner planner(s);
    std::int64_t hottest = 0;
    for (int layer = 0; layer < 58; ++layer)
      for (int mb = 0; mb < 64; ++mb) hottest += planner.plan(layer, mb).hottest_rank_tokens();
    benchmark::DoNotOptimize(hottest);
  }
}

void BM_Dsv3IterationBalanced(benchmark::State& state) {
  plan_dsv3_iteration(state, RoutingKind::balanced, 0);
}
void BM_Dsv3IterationZipf1(benchmark::State& state) {
  plan_dsv3_iteration(state, RoutingKind::zipf, 1.0);
}
void BM_Dsv3IterationGroupLimited(benchmark::State& state) {
  plan_dsv3_iteration(state, RoutingKind::group_limited, 0);
}
// The per-layer statistics a skewed plan reads (Plackett-Luce quadrature over 256 experts, 32 ranks and
// 4 nodes, top 8), all 58 MoE layers: computed once per layer and prediction.
void BM_Dsv3LayerStatsZipf1(benchmark::State& state) {
  RoutingSpec s;
  s.kind = RoutingKind::zipf;
  s.zipf_exponent = 1.0;
  s.experts = 256;
  s.top_k = 8;
  s.ep_ranks = 32;
  s.ranks_per_node = 8;
  s.tokens_per_rank = 4096;
  const RoutingPlanner planner(s);
  for (auto _ : state) {
    double hit = 0;
    for (int layer = 0; layer < 58; ++layer) hit += planner.layer_stats(layer).rank_hit[0];
    benchmark::DoNotOptimize(hit);
  }
}

BENCHMARK(BM_Dsv3IterationBalanced)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dsv3IterationZipf1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dsv3IterationGroupLimited)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dsv3LayerStatsZipf1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
