// A scenario at another node count, pipeline size and micro-batch: what changes, what is kept, and dp
// derived as Megatron derives it (0 when the GPUs do not divide).
#include "moetwin/scenario/rescale.hpp"

#include <gtest/gtest.h>

#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {
namespace {

Scenario default_scenario() {
  static const Catalog catalog = Catalog::load(Catalog::default_dir());
  return load_scenario_file(std::string(MOETWIN_SOURCE_DIR) + "/scenarios/default.toml", catalog);
}

TEST(Rescale, KeepsTheLayoutAndDerivesDp) {
  const Scenario base = default_scenario();  // 32 nodes x 8 B300, tp8 pp8 ep32 dp4, mb 4, gbs 256
  const Scenario s = rescale(base, 16, 4, 1);
  EXPECT_EQ(s.nodes, 16);
  EXPECT_EQ(s.parallel.pp, 4);
  EXPECT_EQ(s.training.micro_batch, 1);
  EXPECT_EQ(s.parallel.dp, 4);  // 128 GPUs / (tp 8 x cp 1 x pp 4)
  EXPECT_EQ(s.parallel.tp, base.parallel.tp);
  EXPECT_EQ(s.parallel.ep, base.parallel.ep);
  EXPECT_EQ(s.parallel.etp, base.parallel.etp);
  EXPECT_EQ(s.parallel.vpp, base.parallel.vpp);
  EXPECT_EQ(s.parallel.cp, base.parallel.cp);
  EXPECT_EQ(s.training.global_batch, base.training.global_batch);
  EXPECT_EQ(s.dispatcher.name, base.dispatcher.name);
  EXPECT_EQ(s.name, base.name);
  EXPECT_NO_THROW(validate_scenario(s, {"test", 0}));
}

TEST(Rescale, SameScaleIsTheScenario) {
  const Scenario base = default_scenario();
  const Scenario s = rescale(base, base.nodes, base.parallel.pp, base.training.micro_batch);
  EXPECT_EQ(s.parallel.dp, base.parallel.dp);
  EXPECT_EQ(derived_dp(base), base.parallel.dp);
}

TEST(Rescale, DpZeroWhenTheGpusDoNotDivide) {
  const Scenario base = default_scenario();
  EXPECT_EQ(rescale(base, 3, 16, 4).parallel.dp, 0);  // 24 GPUs, tp x pp = 128
  EXPECT_EQ(rescale(base, 8, 3, 4).parallel.dp, 0);   // 64 GPUs, tp x pp = 24
  EXPECT_EQ(rescale(base, 6, 3, 4).parallel.dp, 2);   // 48 GPUs, tp x pp = 24
}

TEST(Rescale, LargeSizesDoNotOverflow) {
  Scenario s = default_scenario();
  s.parallel.tp = 1 << 20;
  s.parallel.pp = 1 << 20;
  s.parallel.cp = 1 << 20;
  EXPECT_EQ(derived_dp(s), 0);
}

}  // namespace
}  // namespace moetwin
