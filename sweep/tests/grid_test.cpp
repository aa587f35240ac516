// Grid expansion: the order of points (last axis fastest), counts, and what each point's scenario is,
// including points that break a rule (recorded, not thrown).
#include "moetwin/sweep/grid.hpp"

#include <gtest/gtest.h>

#include "moetwin/test_support/shipped_catalog.hpp"
#include "tiny_sweep.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

using sweep_test::tiny;

TEST(SweepGrid, CountsAndAxisSizes) {
  // nodes 2 x layouts 3 x micro_batch 2 x dispatcher 2; every other axis holds the base's value.
  EXPECT_EQ(tiny().point_count(), 24u);
  EXPECT_EQ(tiny().axis_sizes(), (std::vector<std::size_t>{1, 1, 2, 3, 2, 1, 1, 1, 1, 2}));
  EXPECT_EQ(sweep_axis_names().size(), tiny().axis_sizes().size());
}

TEST(SweepGrid, ExpansionOrderIsMixedRadixWithTheDispatcherFastest) {
  const SweepSpec& s = tiny();
  // id = ((nodes * 3 + layout) * 2 + micro_batch) * 2 + dispatcher
  const PointCoords c = point_coords(s, 1 * 12 + 2 * 4 + 1 * 2 + 1);  // 23
  EXPECT_EQ(c.nodes, 1u);
  EXPECT_EQ(c.layout, 2u);
  EXPECT_EQ(c.micro_batch, 1u);
  EXPECT_EQ(c.dispatcher, 1u);
  EXPECT_EQ(c.model, 0u);
  for (std::size_t id = 0; id < s.point_count(); ++id) EXPECT_EQ(point_id(s, point_coords(s, id)), id);
  EXPECT_THROW(point_coords(s, 24), std::out_of_range);

  const std::vector<std::pair<int, std::string>> first = {
      {1, "nccl-alltoall"}, {1, "deepep-uccl"}, {2, "nccl-alltoall"}, {2, "deepep-uccl"}};
  for (std::size_t id = 0; id < first.size(); ++id) {
    const SweepPoint p = make_point(s, id);
    EXPECT_EQ(p.scenario.training.micro_batch, first[id].first) << id;
    EXPECT_EQ(p.scenario.dispatcher.name, first[id].second) << id;
    EXPECT_EQ(p.scenario.nodes, 1) << id;
  }
  EXPECT_EQ(make_point(s, 4).scenario.parallel.tp, 2);   // next layout
  EXPECT_EQ(make_point(s, 12).scenario.nodes, 2);        // next node count
  EXPECT_EQ(make_point(s, 12).scenario.parallel.tp, 1);  // first layout again
}

TEST(SweepGrid, PointScenario) {
  const SweepPoint p = make_point(tiny(), 12 + 4 + 1);  // 2 nodes, tp2 pp2 ep4, mb 1, deepep-uccl
  ASSERT_TRUE(p.valid()) << p.error;
  const Scenario& s = p.scenario;
  EXPECT_EQ(s.name, "tiny/17");
  EXPECT_EQ(s.gpus(), 16);
  EXPECT_EQ(s.parallel.dp, 4);  // 16 / (2 * 2 * 1)
  EXPECT_EQ(s.parallel.ep, 4);
  EXPECT_EQ(s.training.microbatches(s.parallel), 4);  // 16 / (1 * 4)
  EXPECT_EQ(s.model.layers, 4);                       // the base's override
  EXPECT_EQ(s.routing.seed, 7u);
  EXPECT_EQ(s.dispatcher.name, "deepep-uccl");
  EXPECT_EQ(s.gpu.name, "H100-SXM");
}

TEST(SweepGrid, InvalidPointsCarryTheirRule) {
  // 1 node, ep 16: ep * etp must divide tp * cp * dp = 8.
  const SweepPoint p = make_point(tiny(), 8);
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(p.scenario.parallel.dp, 8);
  EXPECT_EQ(p.error,
            "parallelism.ep: 16: ep * etp = 16 * 1 dividing tp * cp * dp = 1 * 1 * 8 = 8 (Megatron-Core "
            "carves ep * "
            "etp * edp = tp * cp * dp from the ranks of a pipeline stage)");
  // The same layout on 2 nodes is fine.
  EXPECT_TRUE(make_point(tiny(), 12 + 8).valid());
}

TEST(SweepGrid, UnderivableDpAndOverlapSettings) {
  const std::string text = sweep_test::inline_base(6, 48, "recompute = \"full\"\n") +
                           R"(layouts = [{ tp = 1, pp = 3 }, { tp = 1, pp = 2, ep = 4 }]
overlap_moe_a2a = [false, true]
[grid.overlap_on]
vpp = 3
recompute = "none"
)";
  const SweepSpec s = parse_sweep(text, "o.toml", catalog());
  ASSERT_EQ(s.point_count(), 4u);
  const SweepPoint bad = make_point(s, 0);
  EXPECT_EQ(bad.scenario.parallel.dp, 0);
  EXPECT_EQ(
      bad.error,
      "parallelism.dp: not derivable: world / (tp * cp * pp) an integer, but the world size 8 (1 nodes * 8 "
      "GPUs) is not a multiple of tp * cp * pp = 3");
  const SweepPoint off = make_point(s, 2);
  EXPECT_EQ(off.scenario.parallel.vpp, 1);
  EXPECT_EQ(off.scenario.training.recompute, Recompute::full);
  const SweepPoint on = make_point(s, 3);
  EXPECT_TRUE(on.valid()) << on.error;
  EXPECT_EQ(on.scenario.parallel.vpp, 3);  // 6 layers over pp 2 x vpp 3 chunks
  EXPECT_EQ(on.scenario.training.recompute, Recompute::none);
  EXPECT_TRUE(on.scenario.training.overlap_moe_a2a);
}

}  // namespace
}  // namespace moetwin
