// Live-run records: every row of shared/data/live-runs.csv (fixture copy in tests/data) becomes a valid
// Scenario with the documented name, source and settings.
#include "moetwin/scenario/live_runs.hpp"

#include <gtest/gtest.h>

#include "moetwin/test_support/parallel_layout.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

std::string live_runs_path() {
  return std::string(MOETWIN_SOURCE_DIR) + "/scenarios/tests/data/live-runs.csv";
}

TEST(LiveRuns, EveryRowOfTheSharedTableParses) {
  const LiveRunTable t = read_live_runs(live_runs_path(), catalog());
  ASSERT_EQ(t.runs.size(), 51u);
  EXPECT_EQ(t.header.size(), 21u);
  EXPECT_EQ(t.header.front(), "campaign");
  EXPECT_EQ(t.header.back(), "source");
}

TEST(LiveRuns, FirstRow) {
  const LiveRunTable t = read_live_runs(live_runs_path(), catalog());
  const LiveRun& r = t.runs.front();
  EXPECT_EQ(r.campaign, "dsv3-b300-32n-20260601");
  EXPECT_DOUBLE_EQ(r.iter_s, 12.538);
  EXPECT_DOUBLE_EQ(r.tflops_gpu, 85.1);
  EXPECT_EQ(r.source, "megatron-bridge/dsv3/benchmarks/RESULTS.md");
  EXPECT_EQ(r.row.line, 16);  // 14 comment lines, then the header
  EXPECT_EQ(r.row.fields.size(), 21u);
  const Scenario& s = r.scenario;
  EXPECT_EQ(s.name, "dsv3-b300-32n-20260601/mb1/nccl-alltoall");
  EXPECT_EQ(s.source, live_runs_path() + ":16");
  EXPECT_EQ(s.model.name, "deepseek-v3");
  EXPECT_EQ(s.model.layers, 61);
  EXPECT_EQ(s.gpus(), 256);
  EXPECT_EQ(s.parallel, test_support::parallel_layout(8, 8, 32, 4));  // vpp, etp, cp 1
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.training.global_batch, 256);
  EXPECT_EQ(s.training.seq_length, 4096);
  EXPECT_EQ(s.training.recompute, Recompute::full);
  EXPECT_FALSE(s.training.overlap_moe_a2a);
  EXPECT_EQ(s.routing.kind, RoutingKind::balanced);
  EXPECT_EQ(s.routing.seed, 1u);
}

TEST(LiveRuns, OverlapCellsNameAndLayers) {
  const LiveRunTable t = read_live_runs(live_runs_path(), catalog());
  int overlap = 0;
  int padded = 0;
  for (const LiveRun& r : t.runs) {
    if (r.scenario.training.overlap_moe_a2a) {
      ++overlap;
      EXPECT_EQ(r.scenario.parallel.vpp, 2);
      EXPECT_EQ(r.scenario.training.recompute, Recompute::none);
      EXPECT_EQ(r.scenario.name.substr(r.scenario.name.size() - 8), "/overlap");
    }
    if (r.scenario.model.name == "qwen3-235b-a22b" && r.scenario.model.layers == 96) ++padded;
  }
  EXPECT_EQ(overlap, 14);
  EXPECT_EQ(padded, 6);
  EXPECT_EQ(t.runs[4].scenario.name, "dsv3-b300-32n-20260601/mb4/nccl-alltoall/overlap");
}

TEST(LiveRuns, OptionalColumnsCpAndSeed) {
  const std::string csv =
      "campaign,model,instance,nodes,gpus,tp,pp,vpp,ep,etp,dp,cp,mb,gbs,seq,layers,recompute,overlap,"
      "dispatcher,iter_s,tflops_gpu,seed\n"
      "c1,qwen3-30b-a3b,p5en.48xlarge,2,16,2,1,1,8,1,4,2,2,64,4096,48,selective,off,deepep-uccl,1.5,100,7\n";
  const LiveRunTable t = parse_live_runs(parse_csv(csv, "mem.csv"), catalog());
  ASSERT_EQ(t.runs.size(), 1u);
  const Scenario& s = t.runs[0].scenario;
  EXPECT_EQ(s.parallel.cp, 2);
  EXPECT_EQ(s.parallel.dp, 4);
  EXPECT_EQ(s.routing.seed, 7u);
  EXPECT_EQ(s.training.recompute, Recompute::selective);
  EXPECT_EQ(s.name, "c1/mb2/deepep-uccl");
  EXPECT_EQ(s.source, "mem.csv:2");
  EXPECT_EQ(t.runs[0].source, "");
}

// The verbatim published table (validate/data) carries dp=2 on the seven kimik2-b300-16n rows, where 16
// nodes at TP8/PP4 give dp=4: the reader repairs them and says so, once per row.
TEST(LiveRuns, PublishedTableRepairsContradictingDpWithWarnings) {
  const std::string path = std::string(MOETWIN_SOURCE_DIR) + "/validate/data/live-runs.csv";
  const LiveRunTable t = read_live_runs(path, catalog());
  ASSERT_EQ(t.runs.size(), 51u);
  int warned = 0;
  for (const LiveRun& r : t.runs) {
    if (r.warnings.empty()) continue;
    ++warned;
    EXPECT_EQ(r.campaign, "kimik2-b300-16n-20260604");
    EXPECT_EQ(r.scenario.parallel.dp, 4);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0], path + ":" + std::to_string(r.row.line) +
                                 ": dp: 2: contradicts gpus / (tp * cp * pp) = 128 / 32; using dp = 4");
  }
  EXPECT_EQ(warned, 7);
}

}  // namespace
}  // namespace moetwin
