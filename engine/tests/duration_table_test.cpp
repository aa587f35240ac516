// DurationTable: 32-bit storage until a value needs 64, the values unchanged either way.
#include "moetwin/engine/duration_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "moetwin/engine/engine.hpp"

namespace moetwin {
namespace {

TEST(DurationTable, NarrowUntilAValueNeedsSixtyFourBits) {
  DurationTable t = {0, 5, 2'000'000'000};
  EXPECT_FALSE(t.wide());
  EXPECT_EQ(t.with_data([](const auto* d) { return sizeof(*d); }), sizeof(std::int32_t));
  const TimeNs big = std::int64_t{std::numeric_limits<std::int32_t>::max()} + 1;  // 2.147 s
  t.push_back(big);
  EXPECT_TRUE(t.wide());
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 5);
  EXPECT_EQ(t[2], 2'000'000'000);
  EXPECT_EQ(t[3], big);
  EXPECT_EQ(t.with_data([](const auto* d) { return static_cast<TimeNs>(d[3]); }), big);
  EXPECT_THROW(t.push_back(-1), std::logic_error);
}

TEST(DurationTable, EngineReadsWideDurations) {
  // One rank, one compute op whose duration (3 s) lives in a var slot: the wide table replays it exactly.
  Program p;
  OpSpec op;
  op.var_slot = p.new_var_slot();
  p.add(op);
  p.seal(1);
  Workload w;
  w.programs.push_back(std::move(p));
  w.init_ranks(2);
  w.var_durations = {3'000'000'000, 7};
  w.var_offset = {0, 1};
  const EngineResult r = run_engine(w);
  EXPECT_EQ(r.ranks[0].finish, 3'000'000'000);
  EXPECT_EQ(r.ranks[1].finish, 7);
  w.var_durations = {3, 7};
  EXPECT_EQ(run_engine(w).iteration, 7);
}

}  // namespace
}  // namespace moetwin
