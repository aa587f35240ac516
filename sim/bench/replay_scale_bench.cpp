// Prediction cost against scale and routing: one DeepSeek-V3 iteration (TP8/PP8/EP32, mb 1, 64
// microbatches, full recompute, NCCL all-to-all) predicted as `moetwin predict` does (the shipped fitted
// profile, routing plans + dispatcher model), build and replay together, on 256 GPUs (DP4) and 4096 GPUs
// (DP64), with balanced and zipf 1.0 routing. Targets on the 2-core CI box: balanced 4096 <= 2x balanced
// 256 and balanced 256 <= 0.1 s; zipf 256 <= 3x balanced 256 and <= 0.3 s; zipf 4096 <= 5 s.
// Run: build/sim/sim_replay_scale_bench [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

Scenario dsv3(int nodes, int dp, bool zipf) {
  static const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const std::string toml = concat(
      {"name = \"dsv3-scale\"\n[model]\nname = \"deepseek-v3\"\n[cluster]\ninstance = \"p6-b300.48xlarge\"\n",
       "nodes = ", std::to_string(nodes),
       "\n[parallelism]\ntp = 8\npp = 8\nvpp = 1\nep = 32\netp = 1\ncp = 1\n", "dp = ", std::to_string(dp),
       "\n[training]\nmicro_batch = 1\nglobal_batch = ", std::to_string(64 * dp),
       "\nseq_length = 4096\nrecompute = \"full\"\n[dispatcher]\nname = \"nccl-alltoall\"\n[routing]\n",
       zipf ? "kind = \"zipf\"\nzipf_exponent = 1.0\n" : "kind = \"balanced\"\n", "seed = 1\n"});
  return parse_scenario(toml, "bench.toml", catalog);
}

void run(benchmark::State& state, int nodes, int dp, bool zipf) {
  const Scenario s = dsv3(nodes, dp, zipf);
  const FittedProfile profile = resolve_fitted_profile("");
  // As `moetwin predict` runs it: skewed routing plans priced on the cores (PredictOptions::threads).
  PredictOptions options = predict_options_for(s, profile);
  options.threads = thread_count(0);
  Prediction p;
  for (auto _ : state) {
    p = predict(s, options);
    // Through a const: benchmark 1.7's DoNotOptimize(T&) ("+r,m") lets GCC 12 hand a double to a general
    // register and write garbage back into it.
    const double iteration_s = p.iteration_s;
    benchmark::DoNotOptimize(iteration_s);
  }
  state.counters["events"] = static_cast<double>(p.events);
  state.counters["ops"] = static_cast<double>(p.ops);
  state.counters["lane_groups"] = p.engine.lane_groups;
  state.counters["lane_splits"] = p.engine.lane_splits;
  if (!p.engine.lane_divergence.empty())
    state.SetLabel((p.engine.lane_groups > 0 ? "lanes, last split: " : "per rank, lanes gave up: ") +
                   p.engine.lane_divergence);
}

void BM_Dsv3Balanced256(benchmark::State& state) {
  run(state, 32, 4, false);
}
BENCHMARK(BM_Dsv3Balanced256)->Unit(benchmark::kMillisecond);

void BM_Dsv3Balanced4096(benchmark::State& state) {
  run(state, 512, 64, false);
}
BENCHMARK(BM_Dsv3Balanced4096)->Unit(benchmark::kMillisecond);

void BM_Dsv3Zipf256(benchmark::State& state) {
  run(state, 32, 4, true);
}
BENCHMARK(BM_Dsv3Zipf256)->Unit(benchmark::kMillisecond);

void BM_Dsv3Zipf4096(benchmark::State& state) {
  run(state, 512, 64, true);
}
BENCHMARK(BM_Dsv3Zipf4096)->Unit(benchmark::kMillisecond)->Iterations(1);

// Replays the case's workload, as `predict` builds it (outside the timed loop), alone with `eo` in the
// timed loop; returns the last replay's result.
EngineResult replay_loop(benchmark::State& state, int nodes, int dp, bool zipf, const EngineOptions& eo) {
  const Scenario s = dsv3(nodes, dp, zipf);
  const FittedProfile profile = resolve_fitted_profile("");
  PredictOptions options = predict_options_for(s, profile);
  options.threads = thread_count(0);
  const Prediction p = predict(s, options);
  EngineResult r;
  for (auto _ : state) {
    r = run_engine(p.built.workload, eo);
    const TimeNs iteration = r.iteration;
    benchmark::DoNotOptimize(iteration);
  }
  state.counters["events"] = static_cast<double>(r.events);
  return r;
}

// The replay alone: lockstep lanes (EngineOptions::lanes) against the per-rank engine, argument 1 / 0.
// The skewed cases are where lanes apply (docs/2026-12-04-skew-lanes.md).
void replay_only(benchmark::State& state, int nodes, int dp, bool zipf) {
  EngineOptions eo;
  eo.lanes = state.range(0) != 0 ? LaneMode::always : LaneMode::off;
  const EngineResult r = replay_loop(state, nodes, dp, zipf, eo);
  state.counters["lane_groups"] = r.lane_groups;
  state.counters["lane_splits"] = r.lane_splits;
  if (!r.lane_divergence.empty())
    state.SetLabel((r.lane_groups > 0 ? "lanes, last split: " : "per rank, lanes gave up: ") +
                   r.lane_divergence);
}

void BM_ReplayZipf256(benchmark::State& state) {
  replay_only(state, 32, 4, true);
}
BENCHMARK(BM_ReplayZipf256)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_ReplayZipf4096(benchmark::State& state) {
  replay_only(state, 512, 64, true);
}
BENCHMARK(BM_ReplayZipf4096)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

// The periodic steady state (EngineOptions::periodic; docs/2026-12-04-periodic-steady-state.md): the
// balanced 256-GPU replay (64 microbatches on 8 stages) stepping through every microbatch / jumping the
// repeating ones, argument 0 / 1.
void BM_ReplayBalanced256Periodic(benchmark::State& state) {
  EngineOptions eo;
  eo.periodic = state.range(0) != 0;
  const EngineResult r = replay_loop(state, 32, 4, false, eo);
  state.counters["periods_skipped"] = static_cast<double>(r.periods_skipped);
}
BENCHMARK(BM_ReplayBalanced256Periodic)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
