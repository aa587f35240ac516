// Routing plans: conservation, hand-computed balanced counts, the dedup closed form, skew monotonicity,
// group limits, histogram files, determinism.
#include "moetwin/models/routing_plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

#include "moetwin/common/input_error.hpp"
#include "moetwin/models/traffic_matrix.hpp"
#include "moetwin/test_support/routing_spec.hpp"

namespace moetwin {
namespace {

RoutingSpec dsv3_like(RoutingKind kind, RoutingSampling sampling) {
  RoutingSpec s = test_support::routing_spec(kind, 256, 8, 32, 8, 4096);
  s.sampling = sampling;
  return s;
}

void expect_conserved(const LayerRouting& p) {
  std::int64_t copies = 0;
  for (int src = 0; src < p.ep_ranks; ++src) {
    std::int64_t row = 0;
    for (int dst = 0; dst < p.ep_ranks; ++dst) {
      row += p.copy(src, dst);
      EXPECT_LE(p.rank_dedup(src, dst), p.copy(src, dst));
      EXPECT_LE(p.rank_dedup(src, dst), p.tokens_per_rank);
    }
    EXPECT_EQ(row, p.tokens_per_rank * p.top_k) << "src " << src;
    copies += row;
    for (int n = 0; n < p.nodes; ++n) {
      std::int64_t sum = 0;
      std::int64_t mx = 0;
      for (int r = n * p.ranks_per_node; r < (n + 1) * p.ranks_per_node; ++r) {
        sum += p.rank_dedup(src, r);
        mx = std::max(mx, p.rank_dedup(src, r));
      }
      EXPECT_LE(p.node_dedup(src, n), sum);
      EXPECT_GE(p.node_dedup(src, n), mx);
    }
  }
  std::int64_t experts = 0;
  for (const auto t : p.expert_tokens) experts += t;
  EXPECT_EQ(experts, copies);
}

TEST(RoutingPlan, BalancedCountsAreHandComputed) {
  RoutingSpec s = test_support::routing_spec(RoutingKind::balanced, 16, 4, 4, 2, 10);
  const LayerRouting p = RoutingPlanner(s).plan(0, 0);
  // 40 copies per source over 16 experts: 2 each plus 8 remainders, rotated by source (offset src * 8):
  // source 0 adds one to experts 0..7 (ranks 0, 1), source 1 to experts 8..15 (ranks 2, 3).
  EXPECT_EQ(p.copy(0, 0), 12);
  EXPECT_EQ(p.copy(0, 2), 8);
  EXPECT_EQ(p.copy(1, 0), 8);
  EXPECT_EQ(p.copy(1, 3), 12);
  for (const auto t : p.expert_tokens) EXPECT_EQ(t, 10);  // 4 sources x 2 + two remainders each
  // Distinct tokens per rank: 10 x (1 - C(12,4)/C(16,4)) = 10 x (1 - 495/1820) = 7.28 -> 7.
  EXPECT_EQ(p.rank_dedup(0, 2), 7);
  // Per node (8 experts): 10 x (1 - C(8,4)/C(16,4)) = 10 x (1 - 70/1820) = 9.6 -> 10.
  EXPECT_EQ(p.node_dedup(0, 1), 10);
  expect_conserved(p);
}

TEST(RoutingPlan, TotalsConservedInEveryKindAndSampler) {
  for (const auto sampling : {RoutingSampling::counts, RoutingSampling::per_token}) {
    for (const auto kind : {RoutingKind::balanced, RoutingKind::zipf, RoutingKind::group_limited}) {
      RoutingSpec s = dsv3_like(kind, sampling);
      s.tokens_per_rank = 512;
      s.zipf_exponent = 1.0;
      s.groups = 8;
      s.topk_groups = 4;
      const LayerRouting p = RoutingPlanner(s).plan(3, 2);
      expect_conserved(p);
    }
  }
}

// E[distinct remote nodes] / E[remote expert copies] for a uniform top-k over `nodes` equal nodes.
double dedup_ratio_closed_form(int experts, int top_k, int nodes) {
  double miss = 1;
  const int per_node = experts / nodes;
  for (int i = 0; i < top_k; ++i) miss *= static_cast<double>(experts - per_node - i) / (experts - i);
  const double distinct_remote = (nodes - 1) * (1 - miss);
  const double remote_copies = top_k * static_cast<double>(nodes - 1) / nodes;
  return distinct_remote / remote_copies;
}

double measured_dedup_ratio(const LayerRouting& p) {
  double dedup = 0;
  double copies = 0;
  for (int src = 0; src < p.ep_ranks; ++src) {
    for (int n = 0; n < p.nodes; ++n)
      if (n != p.node_of(src)) dedup += static_cast<double>(p.node_dedup(src, n));
    for (int dst = 0; dst < p.ep_ranks; ++dst)
      if (p.node_of(dst) != p.node_of(src)) copies += static_cast<double>(p.copy(src, dst));
  }
  return dedup / copies;
}

TEST(RoutingPlan, DedupRatioMatchesClosedFormTop8Over4Nodes) {
  const double expected = dedup_ratio_closed_form(256, 8, 4);
  EXPECT_NEAR(expected, 0.4518, 1e-4);  // 2.711 distinct remote nodes per 6 remote copies
  // Uniform random top-8 sampled per token (zipf s = 0), and the balanced counts path.
  const LayerRouting sampled =
      RoutingPlanner(dsv3_like(RoutingKind::zipf, RoutingSampling::per_token)).plan(0, 0);
  EXPECT_NEAR(measured_dedup_ratio(sampled) / expected, 1.0, 0.01);
  const LayerRouting balanced =
      RoutingPlanner(dsv3_like(RoutingKind::balanced, RoutingSampling::counts)).plan(0, 0);
  EXPECT_NEAR(measured_dedup_ratio(balanced) / expected, 1.0, 0.01);
  const LayerRouting counts =
      RoutingPlanner(dsv3_like(RoutingKind::zipf, RoutingSampling::counts)).plan(0, 0);
  EXPECT_NEAR(measured_dedup_ratio(counts) / expected, 1.0, 0.01);
}

TEST(RoutingPlan, ZipfSkewNeverShortensA2aOrHottestRank) {
  for (const auto sampling : {RoutingSampling::counts, RoutingSampling::per_token}) {
    RoutingSpec bs = dsv3_like(RoutingKind::balanced, sampling);
    bs.tokens_per_rank = sampling == RoutingSampling::per_token ? 1024 : 4096;
    for (const double s : {0.3, 0.8, 1.2}) {
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        bs.seed = seed;
        RoutingSpec zs = bs;
        zs.kind = RoutingKind::zipf;
        zs.zipf_exponent = s;
        const LayerRouting b = RoutingPlanner(bs).plan(1, 0);
        const LayerRouting z = RoutingPlanner(zs).plan(1, 0);
        EXPECT_GE(z.hottest_rank_tokens(), b.hottest_rank_tokens()) << "s " << s << " seed " << seed;
        EXPECT_GE(per_copy_traffic(z, 1.0).max_network_bytes(), per_copy_traffic(b, 1.0).max_network_bytes());
        EXPECT_GE(node_dedup_traffic(z, 1.0).max_network_bytes(),
                  node_dedup_traffic(b, 1.0).max_network_bytes());
      }
    }
  }
}

TEST(RoutingPlan, DeterministicPerSeedLayerAndMicrobatch) {
  RoutingSpec s = dsv3_like(RoutingKind::zipf, RoutingSampling::counts);
  s.zipf_exponent = 1.0;
  const RoutingPlanner a(s);
  const RoutingPlanner b(s);
  const LayerRouting p1 = a.plan(5, 7);
  const LayerRouting p2 = b.plan(5, 7);
  EXPECT_EQ(p1.copies, p2.copies);
  EXPECT_EQ(p1.node_tokens, p2.node_tokens);
  EXPECT_EQ(p1.expert_tokens, p2.expert_tokens);
  EXPECT_EQ(p1.stream_seed, p2.stream_seed);
  EXPECT_NE(a.plan(5, 8).copies, p1.copies);
  s.seed = 2;
  EXPECT_NE(RoutingPlanner(s).plan(5, 7).copies, p1.copies);
}

// prepare_stats computes the per-layer statistics ahead on several threads: the plans are those of a
// planner that computes them on demand, for zipf (quadrature) and group-limited (Monte Carlo) routing,
// whatever the thread count, and layers asked twice or already cached are computed once.
TEST(RoutingPlan, PreparedStatisticsGiveTheSamePlans) {
  for (const RoutingKind kind : {RoutingKind::zipf, RoutingKind::group_limited}) {
    RoutingSpec s = dsv3_like(kind, RoutingSampling::counts);
    s.zipf_exponent = 1.0;
    s.groups = 8;
    s.topk_groups = 4;
    s.dedup_counts = true;
    const RoutingPlanner lazy(s);
    for (const int threads : {1, 3}) {
      const RoutingPlanner prepared(s);
      (void)prepared.plan(2, 0);  // layer 2 cached before prepare_stats
      prepared.prepare_stats({4, 2, 7, 4, 9}, threads);
      for (const int layer : {2, 4, 7, 9}) {
        for (const int mb : {0, 3}) {
          const LayerRouting p = prepared.plan(layer, mb);
          const LayerRouting q = lazy.plan(layer, mb);
          EXPECT_EQ(p.copies, q.copies) << layer << " " << mb;
          EXPECT_EQ(p.expert_tokens, q.expert_tokens);
          EXPECT_EQ(p.rank_tokens, q.rank_tokens);
          EXPECT_EQ(p.node_tokens, q.node_tokens);
        }
      }
    }
  }
}

// count_class: equal keys give plans equal in every count; the key separates plans whose remainder
// copies rotate differently, and only deterministic (balanced, counts) plans get one.
TEST(RoutingPlan, CountClassKeysEqualPlans) {
  const auto counts_equal = [](const LayerRouting& a, const LayerRouting& b) {
    return a.copies == b.copies && a.rank_tokens == b.rank_tokens && a.node_tokens == b.node_tokens &&
           a.expert_tokens == b.expert_tokens;
  };
  // Remainder 0, and remainders whose rotation is a multiple of the experts at EP 32 (one class: ranks x
  // remainder = 32 x 8k copies) or not at EP 8 (several classes).
  for (const auto& [ranks, tokens] : std::vector<std::pair<int, std::int64_t>>{
           {32, 4096}, {32, 4097}, {32, 1000}, {8, 4097}, {8, 4099}, {8, 1001}}) {
    RoutingSpec s = dsv3_like(RoutingKind::balanced, RoutingSampling::counts);
    s.ep_ranks = ranks;
    s.tokens_per_rank = tokens;
    const RoutingPlanner planner(s);
    std::map<std::int64_t, LayerRouting> first;
    int distinct = 0;
    for (int layer = 0; layer < 12; ++layer) {
      for (int mb = 0; mb < 300; mb += 7) {
        const std::int64_t key = planner.count_class(layer, mb);
        ASSERT_GE(key, 0);
        const LayerRouting p = planner.plan(layer, mb);
        const auto [it, fresh] = first.emplace(key, p);
        if (fresh) {
          ++distinct;
          for (const auto& [other_key, other] : first) {
            if (other_key != key) {
              EXPECT_FALSE(counts_equal(other, p)) << "keys " << key << ", " << other_key;
            }
          }
        } else {
          EXPECT_TRUE(counts_equal(it->second, p)) << "layer " << layer << " mb " << mb;
        }
      }
    }
    if (ranks == 32) {
      EXPECT_EQ(distinct, 1) << tokens;
    } else {
      EXPECT_GT(distinct, 1) << tokens;
    }
  }
  RoutingSpec z = dsv3_like(RoutingKind::zipf, RoutingSampling::counts);
  z.zipf_exponent = 1.0;
  EXPECT_EQ(RoutingPlanner(z).count_class(0, 0), -1);
  EXPECT_EQ(RoutingPlanner(dsv3_like(RoutingKind::balanced, RoutingSampling::per_token)).count_class(0, 0),
            -1);
}

TEST(RoutingPlan, GroupLimitedTokensStayInTheirGroups) {
  // Groups = nodes, one group per token: every token reaches exactly one node.
  RoutingSpec s = dsv3_like(RoutingKind::group_limited, RoutingSampling::per_token);
  s.tokens_per_rank = 256;
  s.groups = 4;
  s.topk_groups = 1;
  const LayerRouting p = RoutingPlanner(s).plan(0, 0);
  for (int src = 0; src < p.ep_ranks; ++src) {
    std::int64_t sum = 0;
    for (int n = 0; n < p.nodes; ++n) sum += p.node_dedup(src, n);
    EXPECT_EQ(sum, s.tokens_per_rank);
  }
  // topk_group 2 of 4: at most two nodes per token, and with 8 experts in 128, nearly always two.
  s.topk_groups = 2;
  const LayerRouting q = RoutingPlanner(s).plan(0, 0);
  std::int64_t sum = 0;
  for (int n = 0; n < q.nodes; ++n) sum += q.node_dedup(0, n);
  EXPECT_LE(sum, 2 * s.tokens_per_rank);
  EXPECT_GE(sum, 2 * s.tokens_per_rank - 5);
}

// Zipf statistics are computed (plackett_luce.hpp), not sampled: they agree with the per-token sampler's
// frequencies over 32 x 2,000 tokens within 5 standard errors, rank by rank and node by node.
TEST(RoutingPlan, ZipfStatisticsMatchThePerTokenSampler) {
  RoutingSpec s = dsv3_like(RoutingKind::zipf, RoutingSampling::per_token);
  s.zipf_exponent = 1.2;
  s.tokens_per_rank = 2000;
  const LayerRouting sampled = RoutingPlanner(s).plan(3, 0);
  s.sampling = RoutingSampling::counts;
  const LayerRoutingStats st = RoutingPlanner(s).layer_stats(3);
  const double tokens = static_cast<double>(s.ep_ranks) * static_cast<double>(s.tokens_per_rank);
  double shares = 0;
  for (const double x : st.expert_share) shares += x;
  EXPECT_NEAR(shares, s.top_k, 1e-9);
  for (int r = 0; r < s.ep_ranks; ++r) {
    double copies = 0, hits = 0;
    for (int src = 0; src < s.ep_ranks; ++src) {
      copies += static_cast<double>(sampled.copy(src, r));
      hits += static_cast<double>(sampled.rank_dedup(src, r));
    }
    const double p = st.rank_hit[static_cast<std::size_t>(r)];
    EXPECT_NEAR(hits / tokens, p, 5 * std::sqrt(p * (1 - p) / tokens)) << "rank " << r;
    // Copies per token to a rank: at most min(top_k, 8) each, variance below 8 x share.
    EXPECT_NEAR(copies / tokens, st.rank_share[static_cast<std::size_t>(r)],
                5 * std::sqrt(8 * st.rank_share[static_cast<std::size_t>(r)] / tokens))
        << "rank " << r;
  }
  for (int n = 0; n < sampled.nodes; ++n) {
    double hits = 0;
    for (int src = 0; src < s.ep_ranks; ++src) hits += static_cast<double>(sampled.node_dedup(src, n));
    const double p = st.node_hit[static_cast<std::size_t>(n)];
    EXPECT_NEAR(hits / tokens, p, 5 * std::sqrt(p * (1 - p) / tokens) + 1e-12) << "node " << n;
  }
}

// Without distinct-token counts (NCCL's per-copy all-to-all reads none) a plan draws the same copies and
// expert loads, and asking it for dedup counts is a logic error.
TEST(RoutingPlan, DedupCountsAreOptionalAndDoNotMoveTheCopies) {
  RoutingSpec s = dsv3_like(RoutingKind::zipf, RoutingSampling::counts);
  s.zipf_exponent = 1.0;
  const LayerRouting with = RoutingPlanner(s).plan(2, 5);
  s.dedup_counts = false;
  const LayerRouting without = RoutingPlanner(s).plan(2, 5);
  EXPECT_EQ(with.copies, without.copies);
  EXPECT_EQ(with.expert_tokens, without.expert_tokens);
  EXPECT_EQ(with.rank_tokens.size(), static_cast<std::size_t>(32 * 32));
  EXPECT_TRUE(without.rank_tokens.empty());
  EXPECT_THROW(without.rank_dedup(0, 0), std::logic_error);
  EXPECT_THROW(without.node_dedup(0, 0), std::logic_error);
  expect_conserved(with);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = std::string(MOETWIN_BINARY_DIR) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RoutingPlan, HistogramLoadsSetExpertShares) {
  const std::string path =
      write_temp("h6_hist.csv", "# layer,expert,load\nlayer,expert,load\n0,0,3\n0,1,1\n");
  RoutingSpec s = test_support::routing_spec(RoutingKind::histogram, 4, 1, 2, 1, 1000);
  s.histogram = read_expert_histogram(path, 4);
  const RoutingPlanner planner(s);
  const LayerRoutingStats st = planner.layer_stats(0);
  EXPECT_NEAR(st.expert_share[0], 0.75, 1e-9);  // zero loads are floored at 1e-12 x max
  EXPECT_NEAR(st.expert_share[1], 0.25, 1e-9);
  const LayerRouting p = planner.plan(0, 0);
  EXPECT_EQ(p.received(0), 2000);  // experts 0 and 1 live on rank 0
  EXPECT_EQ(p.received(1), 0);
  EXPECT_NEAR(static_cast<double>(p.expert_tokens[0]), 1500.0, 5 * 19.4);  // binomial sd sqrt(2000*.75*.25)
  EXPECT_THROW(planner.plan(1, 0), InputError);                            // layer 1 not in the file
}

TEST(RoutingPlan, BadInputsAreInputErrors) {
  EXPECT_THROW(read_expert_histogram(write_temp("h6_bad1.csv", "layer,expert,load\n0,0,-1\n"), 4),
               InputError);
  EXPECT_THROW(read_expert_histogram(write_temp("h6_bad2.csv", "layer,expert,load\n0,9,1\n"), 4), InputError);
  EXPECT_THROW(read_expert_histogram(write_temp("h6_bad3.csv", "layer,expert,load\n0,1,1\n0,1,2\n"), 4),
               InputError);
  EXPECT_THROW(read_expert_histogram(write_temp("h6_bad4.csv", "layer,expert,load\n0,1,0\n"), 4), InputError);
  RoutingSpec s = dsv3_like(RoutingKind::balanced, RoutingSampling::counts);
  s.ep_ranks = 48;  // does not divide 256
  EXPECT_THROW(RoutingPlanner{s}, InputError);
  s = dsv3_like(RoutingKind::group_limited, RoutingSampling::counts);
  s.groups = 8;
  s.topk_groups = 0;
  EXPECT_THROW(RoutingPlanner{s}, InputError);
  s = dsv3_like(RoutingKind::zipf, RoutingSampling::counts);
  s.zipf_exponent = -1;
  EXPECT_THROW(RoutingPlanner{s}, InputError);
}

}  // namespace
}  // namespace moetwin
