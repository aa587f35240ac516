// The flow model's cost (issue 27): `moetwin predict` of the shipped default scenario (DeepSeek-V3 on 256
// B300 GPUs, balanced routing) and of the 256-GPU zipf 1.0 scenario of replay_scale_bench (every rank its
// own class, no symmetry to lean on), each under the closed form and the flow model, build and replay
// together. Target: the flow replay within 5x the closed form's time on the default scenario.
// Run: build/sim/sim_network_mode_bench [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  return c;
}

Scenario default_scenario() {
  return load_scenario_file(std::string(MOETWIN_SOURCE_DIR) + "/scenarios/default.toml", catalog());
}

Scenario zipf256() {
  const std::string toml = concat(
      {"name = \"dsv3-zipf\"\n[model]\nname = \"deepseek-v3\"\n[cluster]\ninstance = \"p6-b300.48xlarge\"\n",
       "nodes = 32\n[parallelism]\ntp = 8\npp = 8\nvpp = 1\nep = 32\netp = 1\ncp = 1\ndp = 4\n",
       "[training]\nmicro_batch = 1\nglobal_batch = 256\nseq_length = 4096\nrecompute = \"full\"\n",
       "[dispatcher]\nname = \"nccl-alltoall\"\n[routing]\nkind = \"zipf\"\nzipf_exponent = 1.0\nseed = "
       "1\n"});
  return parse_scenario(toml, "bench.toml", catalog());
}

void run(benchmark::State& state, const Scenario& s, NetworkMode mode) {
  const FittedProfile profile = resolve_fitted_profile("");
  PredictOptions options = predict_options_for(s, profile);
  options.profile.network = mode;
  Prediction p;
  for (auto _ : state) {
    p = predict(s, options);
    // Through a const: benchmark 1.7's DoNotOptimize(T&) ("+r,m") lets GCC 12 hand a double to a general
    // register and write garbage back into it.
    const double iteration_s = p.iteration_s;
    benchmark::DoNotOptimize(iteration_s);
  }
  state.counters["iteration_s"] = p.iteration_s;
  state.counters["events"] = static_cast<double>(p.events);
  state.counters["rate_solves"] = static_cast<double>(p.engine.rate_solves);
  state.counters["shared_transfers"] = static_cast<double>(p.engine.shared_transfers);
}

void BM_DefaultClosedForm(benchmark::State& state) {
  run(state, default_scenario(), NetworkMode::closed_form);
}
BENCHMARK(BM_DefaultClosedForm)->Unit(benchmark::kMillisecond);

void BM_DefaultFlow(benchmark::State& state) {
  run(state, default_scenario(), NetworkMode::flow);
}
BENCHMARK(BM_DefaultFlow)->Unit(benchmark::kMillisecond);

void BM_Zipf256ClosedForm(benchmark::State& state) {
  run(state, zipf256(), NetworkMode::closed_form);
}
BENCHMARK(BM_Zipf256ClosedForm)->Unit(benchmark::kMillisecond);

void BM_Zipf256Flow(benchmark::State& state) {
  run(state, zipf256(), NetworkMode::flow);
}
BENCHMARK(BM_Zipf256Flow)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
