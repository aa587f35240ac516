// Per-fabric one-way message latency (catalog/fabric_latency.hpp): the sourced values, inside their bounds,
// and EFA's equal to the 10 us topology has always charged (so EFA predictions do not move).
#include "moetwin/catalog/fabric_latency.hpp"

#include <gtest/gtest.h>

#include <string>

namespace moetwin {
namespace {

TEST(FabricLatency, ValuesByHandInsideTheirBounds) {
  // EFA: half the UCCL blog's ~15-25 us round trip; InfiniBand: half its ~10 us.
  EXPECT_DOUBLE_EQ(fabric_latency(Fabric::efa).one_way_s, 20e-6 / 2);
  EXPECT_DOUBLE_EQ(fabric_latency(Fabric::infiniband).one_way_s, 10e-6 / 2);
  for (const Fabric f : {Fabric::efa, Fabric::infiniband}) {
    const FabricLatency& l = fabric_latency(f);
    EXPECT_GT(l.min_s, 0) << to_string(f);
    EXPECT_LE(l.min_s, l.one_way_s) << to_string(f);
    EXPECT_LE(l.one_way_s, l.max_s) << to_string(f);
    EXPECT_NE(std::string(l.source).find("hardware.csv"), std::string::npos) << to_string(f);
  }
  // Bounds: EFA's the quoted range halved; InfiniBand below EFA's lower bound (the same source ranks them).
  EXPECT_DOUBLE_EQ(fabric_latency(Fabric::efa).min_s, 15e-6 / 2);
  EXPECT_DOUBLE_EQ(fabric_latency(Fabric::efa).max_s, 25e-6 / 2);
  EXPECT_LE(fabric_latency(Fabric::infiniband).max_s, fabric_latency(Fabric::efa).min_s);
}

}  // namespace
}  // namespace moetwin
