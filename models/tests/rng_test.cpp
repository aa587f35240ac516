// Own PRNG and distributions: published reference vectors and golden values, so any change to the
// generators or distributions (which would change every seeded prediction) is caught.
#include "moetwin/models/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace moetwin {
namespace {

TEST(Rng, SplitMix64MatchesReferenceVector) {
  // Vigna's splitmix64.c seeded with 1234567.
  std::uint64_t state = 1234567;
  EXPECT_EQ(splitmix64_next(state), 6457827717110365317ULL);
  EXPECT_EQ(splitmix64_next(state), 3203168211198807973ULL);
  EXPECT_EQ(splitmix64_next(state), 9817491932198370423ULL);
  EXPECT_EQ(splitmix64_next(state), 4593380528125082431ULL);
  EXPECT_EQ(splitmix64_next(state), 16408922859458223821ULL);
}

TEST(Rng, Xoshiro256StarStarMatchesReferenceVector) {
  // xoshiro256starstar.c with state {1, 2, 3, 4}.
  Rng rng = Rng::from_state({1, 2, 3, 4});
  EXPECT_EQ(rng.next(), 11520ULL);
  EXPECT_EQ(rng.next(), 0ULL);
  EXPECT_EQ(rng.next(), 1509978240ULL);
  EXPECT_EQ(rng.next(), 1215971899390074240ULL);
  EXPECT_EQ(rng.next(), 1216172134540287360ULL);
  EXPECT_THROW(Rng::from_state({0, 0, 0, 0}), std::invalid_argument);
}

TEST(Rng, GoldenValuesOfSeedingAndDistributions) {
  Rng r(42);
  EXPECT_EQ(r.next(), 1546998764402558742ULL);
  EXPECT_EQ(r.next(), 6990951692964543102ULL);
  Rng u(7);
  EXPECT_DOUBLE_EQ(u.uniform(), 0.7005764821796896);
  EXPECT_DOUBLE_EQ(u.uniform(), 0.27875122947378428);
  Rng b(7);
  EXPECT_EQ(b.below(10), 4u);
  EXPECT_EQ(b.below(10), 4u);
  EXPECT_EQ(b.below(10), 8u);
  Rng bn(9);
  EXPECT_EQ(bn.binomial(100, 0.1), 3);  // exact inversion branch
  EXPECT_EQ(bn.binomial(100, 0.1), 8);
  EXPECT_EQ(bn.binomial(100000, 0.3), 29764);  // normal-approximation branch (ziggurat normal)
  EXPECT_EQ(bn.binomial(50, 0.9), 44);         // flipped tail
  Rng m(11);
  const auto counts = sample_multinomial(m, 1000, {1, 1, 2});
  EXPECT_EQ(counts, (std::vector<std::int64_t>{242, 216, 542}));
  Rng n(3);
  EXPECT_NEAR(n.normal(), -0.97210685145616649, 1e-12);
  EXPECT_NEAR(n.normal(), -1.1838481789289437, 1e-12);
}

TEST(Rng, StreamsDependOnSeedAndOrderedIds) {
  EXPECT_EQ(derive_stream(1, {1, 2}), 12125678553709898705ULL);
  EXPECT_EQ(derive_stream(1, {2, 1}), 2408645381451771559ULL);
  EXPECT_EQ(derive_stream(2, {1, 2}), 186205227182824722ULL);
  EXPECT_NE(derive_stream(1, {1}), derive_stream(1, {1, 0}));
}

TEST(Rng, BelowStaysInRangeAndUniformIsHalfOpen) {
  Rng r(123);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_LT(r.below(3), 3u);
    const double x = r.uniform();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
  EXPECT_THROW(r.below(0), std::invalid_argument);
}

TEST(Rng, BinomialMeanMatches) {
  Rng r(5);
  double sum = 0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) sum += static_cast<double>(r.binomial(200, 0.05));  // mean 10, sd 3.08
  EXPECT_NEAR(sum / kDraws, 10.0, 0.1);  // 4.6 standard errors (3.08 / sqrt(20000) = 0.022)
  // The normal-approximation branch: mean 300, variance 210.
  double wide_sum = 0, wide_squares = 0;
  for (int i = 0; i < kDraws; ++i) {
    const auto x = static_cast<double>(r.binomial(1000, 0.3));
    wide_sum += x;
    wide_squares += x * x;
  }
  const double mean = wide_sum / kDraws;
  EXPECT_NEAR(mean, 300.0, 5 * std::sqrt(210.0 / kDraws));
  EXPECT_NEAR(wide_squares / kDraws - mean * mean, 210.0 + 1.0 / 12, 5 * 210.0 * std::sqrt(2.0 / kDraws));
  EXPECT_EQ(r.binomial(0, 0.5), 0);
  EXPECT_EQ(r.binomial(7, 1.0), 7);
  EXPECT_THROW(r.binomial(5, 1.5), std::invalid_argument);
}

// The ziggurat's normals against the normal distribution: moments, and the frequency of 24 bins from -6
// to 6 against the normal CDF (bins below 6 expected counts pooled with their neighbour), chi-square.
TEST(Rng, ZigguratNormalFollowsTheNormalDistribution) {
  Rng r(17);
  constexpr int kDraws = 2000000;
  constexpr int kBins = 24;
  const double lo = -6.0, width = 0.5;
  std::vector<double> count(kBins + 2, 0.0);  // [0] below lo, [kBins + 1] above
  double sum = 0, squares = 0, fourth = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = r.normal_ziggurat();
    sum += x;
    squares += x * x;
    fourth += x * x * x * x;
    const double bin = std::floor((x - lo) / width);
    count[static_cast<std::size_t>(std::clamp(bin + 1.0, 0.0, kBins + 1.0))] += 1.0;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 5.0 / std::sqrt(kDraws));
  EXPECT_NEAR(squares / kDraws, 1.0, 5.0 * std::sqrt(2.0 / kDraws));
  EXPECT_NEAR(fourth / kDraws, 3.0, 5.0 * std::sqrt(96.0 / kDraws));
  auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  double chi2 = 0;
  int dof = -1;
  double pooled_observed = 0, pooled_expected = 0;
  for (int b = 0; b < kBins + 2; ++b) {
    const double left = b == 0 ? -INFINITY : lo + (b - 1) * width;
    const double right = b == kBins + 1 ? INFINITY : lo + b * width;
    pooled_expected += kDraws * (cdf(right) - cdf(left));
    pooled_observed += count[static_cast<std::size_t>(b)];
    if (pooled_expected < 6.0 && b < kBins + 1) continue;
    chi2 += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++dof;
    pooled_observed = pooled_expected = 0;
  }
  // 99.99th percentile of chi-square with ~20 degrees of freedom is about 52.
  EXPECT_LT(chi2, 52.0) << "dof " << dof;
  EXPECT_GT(dof, 15);
}

// Rows drawn together draw what each row drawn alone (sample_multinomial: one row; its golden values
// above pin the recurrence) draws from the same stream: shared and per-row weights, zero weights (also
// the last), rows with nothing to draw, a weight left at zero early.
TEST(Rng, MultinomialRowsEqualRowByRowDraws) {
  const std::vector<double> shared{0.5, 0.0, 2.0, 1e-9, 3.0, 0.0};
  const std::vector<double> strided{1, 2, 0, 0, 0, 5, 1e-12, 1e-12, 4, 3, 2, 1};  // 4 rows of 3
  const std::vector<std::int64_t> n{1000, 0, 37, 250000};
  for (const bool per_row : {false, true}) {
    const std::size_t m = per_row ? 3 : shared.size();
    std::vector<Rng> rows, alone;
    for (std::uint64_t l = 0; l < n.size(); ++l) {
      rows.emplace_back(derive_stream(5, {l}));
      alone.emplace_back(derive_stream(5, {l}));
    }
    std::vector<std::int64_t> counts(n.size() * m, -1);
    sample_multinomial_rows(rows.data(), n.data(), static_cast<int>(n.size()),
                            per_row ? strided.data() : shared.data(), m, per_row ? m : 0, counts.data());
    for (std::size_t l = 0; l < n.size(); ++l) {
      const std::vector<double> w =
          per_row ? std::vector<double>(strided.begin() + static_cast<std::ptrdiff_t>(l * m),
                                        strided.begin() + static_cast<std::ptrdiff_t>((l + 1) * m))
                  : shared;
      const std::vector<std::int64_t> want = sample_multinomial(alone[l], n[l], w);
      for (std::size_t i = 0; i < m; ++i) EXPECT_EQ(counts[l * m + i], want[i]) << per_row << " row " << l;
      EXPECT_EQ(rows[l].next(), alone[l].next()) << "row " << l << " used a different number of draws";
    }
  }
  Rng r(1);
  const std::int64_t one = 5;
  std::int64_t out[2];
  const double bad[] = {1.0, -1.0};
  EXPECT_THROW(sample_multinomial_rows(&r, &one, 1, bad, 2, 0, out), std::invalid_argument);
}

TEST(AliasTable, FrequenciesFollowWeights) {
  const AliasTable t({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(t.probability(3), 0.4);
  Rng r(5);
  int c[4] = {0, 0, 0, 0};
  for (int i = 0; i < 100000; ++i) ++c[t.sample(r)];
  // Golden counts for seed 5 (expected 10000, 20000, 30000, 40000).
  EXPECT_EQ(c[0], 9989);
  EXPECT_EQ(c[1], 19791);
  EXPECT_EQ(c[2], 29822);
  EXPECT_EQ(c[3], 40398);
  EXPECT_THROW(AliasTable({}), std::invalid_argument);
  EXPECT_THROW(AliasTable({0, 0}), std::invalid_argument);
  EXPECT_THROW(AliasTable({1, -1}), std::invalid_argument);
}

TEST(Zipf, WeightsAreInverseRankPowers) {
  const auto w = zipf_weights(4, 1.0);
  EXPECT_DOUBLE_EQ(w[0], 1.0);
  EXPECT_DOUBLE_EQ(w[1], 0.5);
  EXPECT_DOUBLE_EQ(w[3], 0.25);
  const auto flat = zipf_weights(3, 0.0);
  EXPECT_DOUBLE_EQ(flat[2], 1.0);
  EXPECT_THROW(zipf_weights(0, 1.0), std::invalid_argument);
  EXPECT_THROW(zipf_weights(3, -1.0), std::invalid_argument);
}

TEST(Shuffle, IsAPermutationAndDeterministic) {
  std::vector<int> a = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int> b = a;
  Rng r1(99);
  Rng r2(99);
  shuffle(r1, a);
  shuffle(r2, b);
  EXPECT_EQ(a, b);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

}  // namespace
}  // namespace moetwin
