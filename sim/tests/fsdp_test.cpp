// Megatron-FSDP (fsdp.hpp): the units' gathers and reduce-scatters per microbatch, a unit's gather priced by
// hand through a comm seam of known rate, the data-parallel stream's serial order bounding the iteration,
// the double buffer's wait, the sharded memory, and the scenario rules.
#include "moetwin/sim/fsdp.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"
#include "moetwin/test_support/workload_ops.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// Llama 3 8B cut to 2 layers on one DGX B200, DP8, `gbs` / 8 microbatches.
std::string text(bool fsdp, int gbs = 8, const std::string& extra = "") {
  return "name = \"t\"\n[model]\nname = \"llama3-8b\"\nlayers = 2\ndense_layers = 2\n[cluster]\n"
         "instance = \"dgx-b200\"\nnodes = 1\n[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = 1\netp = 1\n"
         "cp = 1\ndp = 8\n" +
         extra + "[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(gbs) +
         "\nseq_length = 8192\nmegatron_fsdp = " + (fsdp ? "true" : "false") + "\n";
}
Scenario llama(bool fsdp, int gbs = 8) {
  return parse_scenario(text(fsdp, gbs), "test.toml", catalog());
}

// Every collective at 1 TB/s (1 ps per byte), send/recv too.
class TerabytePerSecond : public CommCostModel {
 public:
  std::string name() const override { return "1 TB/s"; }
  double seconds(CollectiveOp, double bytes, const std::vector<int>&) const override { return bytes * 1e-12; }
};
// Every collective 10 ms.
class TenMs : public CommCostModel {
 public:
  std::string name() const override { return "10 ms"; }
  double seconds(CollectiveOp, double, const std::vector<int>&) const override { return 10e-3; }
};

TEST(Fsdp, BufferWaitIsTheUnitTwoBefore) {
  EXPECT_EQ(fsdp_buffer_wait(0), -1);
  EXPECT_EQ(fsdp_buffer_wait(1), -1);
  EXPECT_EQ(fsdp_buffer_wait(2), 0);
  EXPECT_EQ(fsdp_buffer_wait(7), 5);
}

TEST(Fsdp, EveryUnitGatheredTwiceAndReducedOncePerMicrobatch) {
  WorkloadSeams seams;
  seams.comm = std::make_shared<TerabytePerSecond>();
  const BuiltWorkload b = build_workload(llama(true, 16), {}, seams);  // 2 microbatches
  // Units: embedding, 2 layers, output layer: 4 gathers forward + 4 backward, 4 reduce-scatters, per
  // microbatch; the distributed optimizer's per-iteration collectives are gone.
  const std::vector<TimeNs> ag = test_support::rank0_durations(b, "fsdp.param_all_gather");
  const std::vector<TimeNs> rs = test_support::rank0_durations(b, "fsdp.grad_reduce_scatter");
  EXPECT_EQ(ag.size(), 2u * 8);
  EXPECT_EQ(rs.size(), 2u * 4);
  EXPECT_TRUE(test_support::rank0_durations(b, "dp.param_all_gather").empty());
  EXPECT_TRUE(test_support::rank0_durations(b, "dp.grad_reduce_scatter").empty());
  // A decoder layer of Llama 3 8B (h 4096, q 4096, kv 1024, f 14336): attention 4096 x 6144 + 4096 x 4096,
  // MLP 3 x 4096 x 14336, two norms of 4096: 218,112,000 parameters x 2 B (bf16 gather) at 1 ps/B =
  // 436.224 us; its gradients x 4 B (fp32 reduce) 872.448 us. Forward order: embedding, layer 0 ...
  EXPECT_EQ(ag[1], 436'224);
  EXPECT_EQ(ag[2], 436'224);
  // Embedding: 128256 x 4096 = 525,336,576 parameters x 2 B = 1,050,673.152 ns, rounded up to whole ns.
  EXPECT_EQ(ag[0], 1'050'674);
  // Backward: output layer first, then layer 1, layer 0, embedding; the layers' reduce-scatters.
  EXPECT_EQ(rs[1], 872'448);
  EXPECT_EQ(rs[2], 872'448);
  // The off switch leaves the distributed optimizer's collectives.
  const BuiltWorkload off = build_workload(llama(false, 16), {}, seams);
  EXPECT_TRUE(test_support::rank0_durations(off, "fsdp.param_all_gather").empty());
  EXPECT_FALSE(test_support::rank0_durations(off, "dp.grad_reduce_scatter").empty());
}

TEST(Fsdp, OneDataParallelStreamBoundsTheIteration) {
  // Every collective 10 ms and one microbatch: the DP stream runs 8 gathers and 4 reduce-scatters in
  // series, 120 ms, and the compute of two small layers (a few ms) hides under it but for the exposed
  // first gather of each pass (counted in the 120 ms) and what follows the last reduce-scatter (the
  // optimizer step).
  WorkloadSeams seams;
  seams.comm = std::make_shared<TenMs>();
  const BuiltWorkload b = build_workload(llama(true, 8), {}, seams);
  const EngineResult r = run_engine(b.workload);
  EXPECT_GE(r.iteration, 120'000'000);
  EXPECT_LT(r.iteration, 140'000'000);
}

TEST(Fsdp, MemoryShardsTheStatesAndAddsTwoUnitBuffers) {
  const Scenario on = llama(true), off = llama(false);
  const MemoryEstimate a = estimate_memory(on, make_pipeline_layout(on.model, on.parallel, {"t", 0}));
  const MemoryEstimate b = estimate_memory(off, make_pipeline_layout(off.model, off.parallel, {"t", 0}));
  const StageMemory& f = a.stages.front();
  const StageMemory& d = b.stages.front();
  ASSERT_EQ(f.dense_params, d.dense_params);
  const double params = static_cast<double>(f.dense_params);
  // The largest unit on a stage with the embedding: the 128256 x 4096 table.
  const double unit = 128256.0 * 4096;
  EXPECT_DOUBLE_EQ(f.weights, 2.0 * (params / 8 + 2 * unit));
  EXPECT_DOUBLE_EQ(f.gradients, 4.0 * (params / 8 + unit));
  EXPECT_DOUBLE_EQ(f.optimizer, d.optimizer);  // the distributed optimizer shards it over dp x cp already
  EXPECT_DOUBLE_EQ(d.weights, 2.0 * params);
  EXPECT_LT(f.total(), d.total());
}

TEST(Fsdp, ScenarioRules) {
  EXPECT_TRUE(llama(true).training.megatron_fsdp);
  EXPECT_FALSE(parse_scenario(text(false), "t.toml", catalog()).training.megatron_fsdp);
  const std::string pp2 =
      "name = \"t\"\n[model]\nname = \"llama3-8b\"\n[cluster]\ninstance = \"dgx-b200\"\nnodes = 1\n"
      "[parallelism]\ntp = 1\npp = 2\nvpp = 1\nep = 1\netp = 1\ncp = 1\ndp = 4\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 8192\nmegatron_fsdp = true\n";
  try {
    parse_scenario(pp2, "bad.toml", catalog());
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.toml:"), std::string::npos) << what;
    EXPECT_NE(what.find("training.megatron_fsdp: true: off with pp = 2 (Megatron-FSDP with a pipeline is "
                        "not modelled)"),
              std::string::npos)
        << what;
  }
  const std::string moe =
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\n[cluster]\ninstance = \"dgx-b200\"\nnodes = 1\n"
      "[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = 8\netp = 1\ncp = 1\ndp = 8\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 8\nseq_length = 4096\nmegatron_fsdp = true\n";
  try {
    parse_scenario(moe, "bad.toml", catalog());
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Megatron-FSDP of expert parameters is not modelled"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moetwin
