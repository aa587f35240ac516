// Exact integer-ns results of the analytical model, worked by hand (STYLE.md #14), and the checks and
// registry shared by both models.
#include "moetwin/topology/analytical_network.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/topology/network_models.hpp"

namespace moetwin {
namespace {

// Links of 1e9 B/s move one byte per ns, which keeps the hand arithmetic in ns.
NetPlatform platform_of(const std::vector<NetLink>& links) {
  NetPlatform p;
  for (const NetLink& link : links) {
    p.add_link(link);
  }
  p.seal();
  return p;
}

std::vector<TimeNs> finishes(const NetworkRun& run) {
  std::vector<TimeNs> out;
  for (const FlowResult& r : run.flows) {
    out.push_back(r.finish);
  }
  return out;
}

TEST(AnalyticalNetwork, OneFlowOneLink) {
  const NetPlatform p = platform_of({{"l", 1e9, 0}});
  const NetworkRun run = AnalyticalNetwork().run(p, {{0, 1, 1000, 0, {0}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{1000}));
  EXPECT_EQ(run.makespan, 1000);
  EXPECT_EQ(run.links[0].busy, 1000);
  EXPECT_DOUBLE_EQ(run.links[0].bytes, 1000);
}

TEST(AnalyticalNetwork, ShortFlowFinishesAndTheLongOneSpeedsUp) {
  // 1000 B and 3000 B share 1 B/ns: 0.5 B/ns each until 2000 ns (first done), then the second has
  // 2000 B left at 1 B/ns: done at 4000 ns.
  const NetPlatform p = platform_of({{"l", 1e9, 0}});
  const NetworkRun run = AnalyticalNetwork().run(p, {{0, 1, 1000, 0, {0}}, {2, 3, 3000, 0, {0}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{2000, 4000}));
  EXPECT_EQ(run.links[0].busy, 4000);
  EXPECT_DOUBLE_EQ(run.links[0].bytes, 4000);
}

TEST(AnalyticalNetwork, LatencyComesBeforeTheTransfer) {
  // Route latency 1.5 us + 0.25 us = 1750 ns; then 500 B at min(1, 2) B/ns: finish 2250 ns.
  // The links are busy only while the flow transfers: 500 ns.
  const NetPlatform p = platform_of({{"a", 1e9, 1.5e-6}, {"b", 2e9, 0.25e-6}});
  const NetworkRun run = AnalyticalNetwork().run(p, {{0, 1, 500, 100, {0, 1}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{100 + 1750 + 500}));
  EXPECT_EQ(run.links[0].busy, 500);
  EXPECT_EQ(run.links[1].busy, 500);
}

TEST(AnalyticalNetwork, LateStarterSharesTheRest) {
  // f0: 2000 B from 0; f1: 1000 B from 1000 ns. [0, 1000): f0 alone moves 1000 B. Then 0.5 B/ns each:
  // both have 1000 B left and finish together at 3000 ns.
  const NetPlatform p = platform_of({{"l", 1e9, 0}});
  const NetworkRun run = AnalyticalNetwork().run(p, {{0, 1, 2000, 0, {0}}, {2, 3, 1000, 1000, {0}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{3000, 3000}));
}

TEST(AnalyticalNetwork, RatesAreRecomputedWhenAFlowEnds) {
  // Link A 2 B/ns carries f0, f1; link B 1 B/ns carries f1, f2.
  // [0, 1000): B is the bottleneck, f1 = f2 = 0.5, f0 = 1.5. f2 (500 B) ends at 1000.
  // [1000, 1500): f1 has 500 B left at 1 (A gives 1 each, B 1), f0 1500 B left at 1: f1 ends at 1500.
  // [1500, 2000): f0 has 1000 B left at 2: ends at 2000.
  const NetPlatform p = platform_of({{"A", 2e9, 0}, {"B", 1e9, 0}});
  const NetworkRun run =
      AnalyticalNetwork().run(p, {{0, 1, 3000, 0, {0}}, {2, 3, 1000, 0, {0, 1}}, {4, 5, 500, 0, {1}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{2000, 1500, 1000}));
  EXPECT_DOUBLE_EQ(run.links[0].bytes, 4000);
  EXPECT_DOUBLE_EQ(run.links[1].bytes, 1500);
  EXPECT_EQ(run.links[1].busy, 1500);
}

TEST(AnalyticalNetwork, CompletionRoundsUpToWholeNanoseconds) {
  // 1001 B at 3 B/ns = 333.67 ns -> 334. Three equal flows of 1000 B on 1 B/ns: 1000 / (1/3) is
  // 3000.0000000000005 in doubles; the tolerance keeps it at 3000, not 3001.
  const NetPlatform p = platform_of({{"fast", 3e9, 0}, {"l", 1e9, 0}});
  EXPECT_EQ(AnalyticalNetwork().run(p, {{0, 1, 1001, 0, {0}}}).makespan, 334);
  const NetworkRun run =
      AnalyticalNetwork().run(p, {{0, 1, 1000, 0, {1}}, {2, 3, 1000, 0, {1}}, {4, 5, 1000, 0, {1}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{3000, 3000, 3000}));
}

TEST(AnalyticalNetwork, TrivialFlows) {
  // 0 B: done after the route latency (1 us). src == dst with no route: done at start.
  const NetPlatform p = platform_of({{"l", 1e9, 1e-6}});
  const NetworkRun run = AnalyticalNetwork().run(p, {{0, 1, 0, 10, {0}}, {3, 3, 5000, 20, {}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{1010, 20}));
  EXPECT_EQ(run.links[0].busy, 0);
  EXPECT_EQ(AnalyticalNetwork().run(p, {}).makespan, 0);
}

TEST(AnalyticalNetwork, BusyTimeIsTheUnionOfActiveIntervals) {
  // f0 [0, 1000), f1 [5000, 6000), f2 [5500, 6500) -> f1, f2 share from 5500: f1 has 500 B left at 0.5
  // -> 6500; f2 moves 500 B by 6500 then 500 B alone at 1 -> 7000. Busy: 1000 + (7000 - 5000) = 3000.
  const NetPlatform p = platform_of({{"l", 1e9, 0}, {"idle", 1e9, 0}});
  const NetworkRun run =
      AnalyticalNetwork().run(p, {{0, 1, 1000, 0, {0}}, {0, 1, 1000, 5000, {0}}, {0, 1, 1000, 5500, {0}}});
  EXPECT_EQ(finishes(run), (std::vector<TimeNs>{1000, 6500, 7000}));
  EXPECT_EQ(run.links[0].busy, 3000);
  EXPECT_DOUBLE_EQ(run.links[0].bytes, 3000);
  EXPECT_EQ(run.links[1].busy, 0);
  EXPECT_DOUBLE_EQ(run.links[1].bytes, 0);
}

TEST(AnalyticalNetwork, RepeatedRunsAreIdentical) {
  const NetPlatform p = platform_of({{"A", 2e9, 1e-7}, {"B", 1e9, 3e-7}});
  const std::vector<FlowSpec> flows = {
      {0, 1, 3333, 0, {0}}, {2, 3, 1234.5, 17, {0, 1}}, {4, 5, 777, 5, {1}}, {6, 7, 999, 900, {1, 0}}};
  const NetworkRun a = AnalyticalNetwork().run(p, flows);
  const NetworkRun b = AnalyticalNetwork().run(p, flows);
  EXPECT_EQ(finishes(a), finishes(b));
  for (std::size_t l = 0; l < a.links.size(); ++l) {
    EXPECT_EQ(a.links[l].busy, b.links[l].busy);
  }
}

TEST(NetPlatform, BuildThenSeal) {
  NetPlatform p;
  EXPECT_EQ(p.add_link({"a", 1e9, 0}), 0);
  EXPECT_EQ(p.add_link({"b", 1e9, 1e-6}), 1);
  EXPECT_THROW(p.add_link({"bad", 0, 0}), std::invalid_argument);
  EXPECT_THROW(p.add_link({"bad", 1e9, -1}), std::invalid_argument);
  EXPECT_FALSE(p.sealed());
  p.seal();
  EXPECT_TRUE(p.sealed());
  EXPECT_THROW(p.add_link({"c", 1e9, 0}), std::logic_error);
  EXPECT_EQ(p.links().size(), 2u);
}

TEST(NetworkModelRegistry, NamesAndErrors) {
  EXPECT_EQ(network_model_names(), (std::vector<std::string>{"analytical", "simgrid"}));
  for (const std::string& name : network_model_names()) {
    const auto model = make_network_model(name);
    EXPECT_EQ(model->name(), name);
    EXPECT_FALSE(model->description().empty());
    EXPECT_FALSE(model->reference().empty());
  }
  EXPECT_THROW(make_network_model("ns3"), InputError);
}

TEST(NetworkModelRegistry, BadFlowsAreRejectedByBothModels) {
  NetPlatform unsealed;
  unsealed.add_link({"l", 1e9, 0});
  const NetPlatform p = platform_of({{"l", 1e9, 0}});
  for (const std::string& name : network_model_names()) {
    const auto model = make_network_model(name);
    EXPECT_THROW(model->run(unsealed, {{0, 1, 1, 0, {0}}}), std::logic_error) << name;
    EXPECT_THROW(model->run(p, {{0, 1, -1, 0, {0}}}), std::invalid_argument) << name;
    EXPECT_THROW(model->run(p, {{0, 1, 1, -5, {0}}}), std::invalid_argument) << name;
    EXPECT_THROW(model->run(p, {{0, 1, 1, 0, {1}}}), std::invalid_argument) << name;
    EXPECT_THROW(model->run(p, {{0, 1, 1, 0, {}}}), std::invalid_argument) << name;
  }
}

}  // namespace
}  // namespace moetwin
