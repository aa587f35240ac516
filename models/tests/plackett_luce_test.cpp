// plackett_luce_hit_probabilities against exhaustive enumeration of the Plackett-Luce model.
#include "moetwin/models/plackett_luce.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

#include "moetwin/models/rng.hpp"

namespace moetwin {
namespace {

using Blocks = std::vector<std::pair<int, int>>;

// P(block hit) by walking every ordered top_k sequence of successive weighted draws without replacement.
std::vector<double> enumerate_hits(const std::vector<double>& w, int top_k, const Blocks& blocks) {
  std::vector<double> hits(blocks.size(), 0.0);
  std::vector<int> chosen;
  std::vector<char> used(w.size(), 0);
  // The weight left is summed afresh at every step: subtracting drawn weights from the total loses the
  // tiny ones (4 + 1.2e-11 - 3 - 1 keeps 5 digits).
  std::function<void(double)> walk = [&](double prob) {
    if (static_cast<int>(chosen.size()) == top_k) {
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        for (const int e : chosen) {
          if (e >= blocks[b].first && e < blocks[b].second) {
            hits[b] += prob;
            break;
          }
        }
      }
      return;
    }
    double left = 0;
    for (std::size_t e = 0; e < w.size(); ++e) left += used[e] ? 0.0 : w[e];
    for (std::size_t e = 0; e < w.size(); ++e) {
      if (used[e] || w[e] == 0) continue;
      used[e] = 1;
      chosen.push_back(static_cast<int>(e));
      walk(prob * w[e] / left);
      chosen.pop_back();
      used[e] = 0;
    }
  };
  walk(1.0);
  return hits;
}

Blocks singletons_and_groups(int n, int group) {
  Blocks b;
  for (int e = 0; e < n; ++e) b.emplace_back(e, e + 1);
  for (int e = 0; e < n; e += group) b.emplace_back(e, std::min(n, e + group));
  b.emplace_back(0, n);
  return b;
}

TEST(PlackettLuce, MatchesEnumerationOfSmallModels) {
  struct Case {
    std::vector<double> weights;
    int top_k;
    int group;
  };
  Rng rng(7);
  std::vector<double> random_weights(9);
  for (double& x : random_weights) x = 0.01 + rng.uniform();
  const std::vector<Case> cases = {
      {zipf_weights(8, 1.0), 3, 2},
      {zipf_weights(8, 2.5), 4, 4},
      {zipf_weights(7, 0.0), 2, 3},
      {random_weights, 3, 3},
      {random_weights, 1, 2},
      {{5, 0, 1, 0, 2, 1e-9}, 3, 2},
      {zipf_weights(10, 1.2), 5, 5},
      {{1, 1e6, 3, 7, 1e-3}, 2, 2},
      // A histogram layer with two loaded experts: the rest floored at 1e-12 of the largest, so top 4
      // must take two of the floored ones (routing_plan.cpp's kWeightFloor).
      {{3e-12, 3, 3e-12, 1, 3e-12, 3e-12}, 4, 2},
  };
  for (const Case& c : cases) {
    const int n = static_cast<int>(c.weights.size());
    const Blocks blocks = singletons_and_groups(n, c.group);
    const std::vector<double> want = enumerate_hits(c.weights, c.top_k, blocks);
    const std::vector<double> got = plackett_luce_hit_probabilities(c.weights, c.top_k, blocks);
    ASSERT_EQ(got.size(), want.size());
    double shares = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      EXPECT_NEAR(got[b], want[b], 1e-10) << "n " << n << " top_k " << c.top_k << " block " << b;
      if (b < static_cast<std::size_t>(n)) shares += got[b];
    }
    EXPECT_NEAR(shares, c.top_k, 1e-9);   // expected copies per token sum to top_k
    EXPECT_NEAR(got.back(), 1.0, 1e-12);  // the whole set is always hit
  }
}

TEST(PlackettLuce, TopOneIsTheNormalisedWeight) {
  const std::vector<double> w = zipf_weights(64, 1.0);
  double total = 0;
  for (const double x : w) total += x;
  const std::vector<double> got = plackett_luce_hit_probabilities(w, 1, {{0, 1}, {10, 20}, {63, 64}});
  double mid = 0;
  for (int e = 10; e < 20; ++e) mid += w[static_cast<std::size_t>(e)];
  EXPECT_NEAR(got[0], w[0] / total, 1e-12);
  EXPECT_NEAR(got[1], mid / total, 1e-12);
  EXPECT_NEAR(got[2], w[63] / total, 1e-12);
}

TEST(PlackettLuce, RejectsWhatItCannotIntegrate) {
  EXPECT_THROW(plackett_luce_hit_probabilities({1, 1}, 3, {{0, 1}}), std::invalid_argument);
  EXPECT_THROW(plackett_luce_hit_probabilities({1, 0, 0}, 2, {{0, 1}}), std::invalid_argument);
  EXPECT_THROW(plackett_luce_hit_probabilities({1, -1, 2}, 1, {{0, 1}}), std::invalid_argument);
  EXPECT_THROW(plackett_luce_hit_probabilities({1, 2, 3}, 1, {{2, 2}}), std::invalid_argument);
  EXPECT_THROW(plackett_luce_hit_probabilities({1, 2, 3}, 1, {{0, 4}}), std::invalid_argument);
}

}  // namespace
}  // namespace moetwin
