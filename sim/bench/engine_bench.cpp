// Engine speed: raw event throughput, and one DeepSeek-V3 iteration on 256 and 4096
// GPUs with skewed per-rank expert loads. Run: build/sim/sim_engine_bench [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/engine/engine.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/pipeline_program.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

// Raw future-event-list throughput: push/pop with a standing population of 1024 events.
void BM_EventQueue(benchmark::State& state) {
  EventQueue q;
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 1024; ++i) q.push(static_cast<TimeNs>(i), 0, 0, 0, 0);
  for (auto _ : state) {
    const SimEvent e = q.pop();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    q.push(e.time + static_cast<TimeNs>(x % 10000), 0, e.a, e.b, e.c);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueue);

// The engine on a synthetic pipeline (pp 8, vpp 2, 512 microbatches, one op per step, P2P with host
// syncs): events per second of the whole engine, not just the queue.
class UnitEmitter : public StageEmitter {
 public:
  int forward(Program& p, const StepContext& s) override { return add(p, s, 100); }
  int backward(Program& p, const StepContext& s) override { return add(p, s, 200); }
  OpSpec p2p(bool, int, int) override {
    OpSpec op;
    op.duration = 5;
    op.host_ns = 1;
    return op;
  }

 private:
  static int add(Program& p, const StepContext& s, TimeNs d) {
    OpSpec op;
    op.duration = d;
    op.host_ns = 1;
    op.deps[0] = s.input_dep;
    return p.add(op);
  }
};

void BM_EngineSyntheticPipeline(benchmark::State& state) {
  const int pp = 8, vpp = 2, m = 512;
  Workload w;
  w.init_ranks(pp);
  std::vector<int> ranks;
  for (int s = 0; s < pp; ++s) {
    Program p;
    UnitEmitter e;
    emit_pipeline(p, pipeline_schedule(pp, vpp, m, s), vpp, m, e, {});
    p.seal(kStreams);
    w.programs.push_back(std::move(p));
    w.rank_program[static_cast<std::size_t>(s)] = s;
    ranks.push_back(s);
  }
  w.add_pipeline_channels(ranks);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const EngineResult r = run_engine(w);
    events += r.events;
    benchmark::DoNotOptimize(r.iteration);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_iteration"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_EngineSyntheticPipeline)->Unit(benchmark::kMillisecond);

// Zipf-skewed expert loads: per (layer, microbatch, EP group) a seeded permutation of ranks gets load
// factors ~ 1 / rank^1.1 normalised to the balanced mean, so every rank and microbatch differs. A stand-in
// for the routing plans (routing_plan.hpp) until they are wired in; the engine cost is the same.
class SkewedMoe : public MoeCostModel {
 public:
  SkewedMoe(const Scenario& s, std::shared_ptr<const CommCostModel> comm, const ComputeProfile& cp)
      : base_(s, std::move(comm), cp, 16) {}
  std::string name() const override { return "zipf-bench"; }
  void layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                   std::vector<MoeRankCost>& out) const override {
    base_.layer_costs(layer, microbatch, ep_group, ep_ranks, out);
    const std::size_t n = out.size();
    double norm = 0;
    for (std::size_t i = 0; i < n; ++i) norm += 1.0 / std::pow(static_cast<double>(i + 1), 1.1);
    std::uint64_t x = 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(layer) << 40) ^
                      (static_cast<std::uint64_t>(microbatch) << 20) ^ static_cast<std::uint64_t>(ep_group);
    for (std::size_t i = 0; i < n; ++i) {
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      const std::size_t rank_in_order = (x * 0x2545F4914F6CDD1Dull) % n;
      const double f = static_cast<double>(n) / norm / std::pow(static_cast<double>(rank_in_order + 1), 1.1);
      out[i].tokens = static_cast<std::int64_t>(static_cast<double>(out[i].tokens) * f);
      out[i].dispatch_ns = static_cast<TimeNs>(static_cast<double>(out[i].dispatch_ns) * std::max(1.0, f));
      out[i].combine_ns = out[i].dispatch_ns;
    }
  }

 private:
  BalancedMoeCost base_;
};

Scenario dsv3(int nodes, int dp) {
  static const Catalog catalog = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const std::string toml =
      "name = \"dsv3-bench\"\n[model]\nname = \"deepseek-v3\"\n[cluster]\ninstance = "
      "\"p6-b300.48xlarge\"\nnodes = " +
      std::to_string(nodes) +
      "\n[parallelism]\ntp = 8\npp = 8\nvpp = 1\nep = 32\netp = 1\ncp = 1\ndp = " + std::to_string(dp) +
      "\n[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(64 * dp) +
      "\nseq_length = 4096\nrecompute = \"full\"\n" + "[dispatcher]\nname = \"nccl-alltoall\"\n";
  return parse_scenario(toml, "bench.toml", catalog);
}

void run_dsv3(benchmark::State& state, int nodes, int dp) {
  const Scenario s = dsv3(nodes, dp);
  std::uint64_t events = 0;
  std::size_t ops = 0;
  for (auto _ : state) {
    PredictOptions o;
    const ComputeProfile cp = ComputeProfile::from_gpu(s.gpu);
    auto comm = std::make_shared<AlphaBetaComm>(s.instance, s.gpu);
    o.seams.comm = comm;
    o.seams.moe = std::make_shared<SkewedMoe>(s, comm, cp);
    const Prediction p = predict(s, o);
    events += p.events;
    ops = p.ops;
    // Through a const: benchmark 1.7's DoNotOptimize(T&) ("+r,m") lets GCC 12 hand a double to a general
    // register and write garbage back into it.
    const double iteration_s = p.iteration_s;
    benchmark::DoNotOptimize(iteration_s);
  }
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["ops"] = static_cast<double>(ops);
}

// DeepSeek-V3 on 32 p6-b300 nodes: TP8/PP8/EP32/DP4, mb 1, 64 microbatches (target <= 1 s).
void BM_DeepSeekV3_256Gpus(benchmark::State& state) {
  run_dsv3(state, 32, 4);
}
BENCHMARK(BM_DeepSeekV3_256Gpus)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same layout on 512 nodes, DP64 (4096 GPUs; target <= 20 s, <= 4 GiB).
void BM_DeepSeekV3_4096Gpus(benchmark::State& state) {
  run_dsv3(state, 512, 64);
}
BENCHMARK(BM_DeepSeekV3_4096Gpus)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace moetwin

BENCHMARK_MAIN();
