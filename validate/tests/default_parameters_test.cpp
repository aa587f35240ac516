// The default fit set: a compute or collective time scale joins it only when its time is a visible share
// of the rows; the host and per-dispatcher A2A terms always do.
#include "moetwin/validate/default_parameters.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {
namespace {

RowPrediction row(double iteration_s, double compute_s, double tp_s, double pp_s, double dp_s, double ep_s) {
  RowPrediction r;
  r.ok = true;
  r.iteration_s = iteration_s;
  r.detail.compute.median_s = compute_s;
  r.detail.exposed[static_cast<int>(CommClass::tp)].median_s = tp_s;
  r.detail.exposed[static_cast<int>(CommClass::pp)].median_s = pp_s;
  r.detail.exposed[static_cast<int>(CommClass::dp)].median_s = dp_s;
  r.detail.exposed[static_cast<int>(CommClass::ep)].median_s = ep_s;
  return r;
}

LiveRun run(const std::string& dispatcher, const std::string& stack = "nemo-26.04.01") {
  LiveRun r;
  r.scenario.dispatcher = Catalog::shared_default().dispatcher(dispatcher);
  r.scenario.stack.spec.name = stack;
  return r;
}

bool has(const std::vector<std::string>& keys, const std::string& k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

TEST(MedianTimeShares, ComputeAndNonEpCollectivesOverIteration) {
  RowPrediction failed = row(10, 9, 0, 0, 0, 0);
  failed.ok = false;                                                           // not counted
  const TimeShares s = median_time_shares({row(10, 1, 0.2, 0.1, 0.1, 5),       // 10%, 4% (EP is not counted)
                                           row(10, 3, 0.5, 0.5, 0.5, 2),       // 30%, 15%
                                           row(20, 4, 1, 1, 0, 10), failed});  // 20%, 10%
  EXPECT_EQ(s.rows, 3);
  EXPECT_DOUBLE_EQ(s.compute, 0.2);
  EXPECT_DOUBLE_EQ(s.collectives, 0.1);
  EXPECT_EQ(median_time_shares({}).rows, 0);
  EXPECT_DOUBLE_EQ(median_time_shares({}).compute, 0);
}

TEST(DefaultFitParameters, ScalesOnlyWhenIdentifiable) {
  const std::vector<LiveRun> runs = {run("nccl-alltoall"), run("deepep-uccl"), run("nccl-alltoall")};
  TimeShares small;
  small.compute = 0.09;  // the published B300 runs at their fit
  small.collectives = 0.03;
  const std::vector<std::string> keys = default_fit_parameters(runs, small);
  const std::vector<std::string> expected = {"launch_s",
                                             "layer_host_s",
                                             "nccl-alltoall.a2a_time_scale",
                                             "nccl-alltoall.a2a_latency_s",
                                             "nccl-alltoall.net_chunk_s",
                                             "deepep-uccl.a2a_time_scale",
                                             "deepep-uccl.a2a_latency_s",
                                             "deepep-uccl.a2a_node_latency_s",
                                             "deepep-uccl.a2a_remote_token_s"};
  EXPECT_EQ(keys, expected);

  TimeShares compute_bound = small;
  compute_bound.compute = kMinIdentifiableShare;  // at the threshold: fitted
  const std::vector<std::string> wider = default_fit_parameters(runs, compute_bound);
  EXPECT_TRUE(has(wider, "compute_time_scale"));
  EXPECT_FALSE(has(wider, "collective_time_scale"));
  EXPECT_EQ(wider.size(), keys.size() + 1);

  TimeShares both = compute_bound;
  both.collectives = 0.35;
  EXPECT_TRUE(has(default_fit_parameters(runs, both), "collective_time_scale"));
}

// Rows of two stacks: the one with fewer rows gets its own A2A scale, the reference (most rows) none.
TEST(DefaultFitParameters, StackScaleForEveryStackButTheReference) {
  const std::vector<LiveRun> one = {run("nccl-alltoall"), run("deepep-uccl")};
  TimeShares small;
  EXPECT_FALSE(has(default_fit_parameters(one, small), "nemo-26.04.01.stack_a2a_scale"));
  const std::vector<LiveRun> two = {run("nccl-alltoall"), run("deepep-uccl"), run("nccl-alltoall", "other"),
                                    run("deepep-uccl")};
  const std::vector<std::string> keys = default_fit_parameters(two, small);
  EXPECT_TRUE(has(keys, "other.stack_a2a_scale"));
  EXPECT_FALSE(has(keys, "nemo-26.04.01.stack_a2a_scale"));
}

}  // namespace
}  // namespace moetwin
