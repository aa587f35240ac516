// Plackett-Luce top-k inclusion probabilities by quadrature. See plackett_luce.hpp for the method.
#include "moetwin/models/plackett_luce.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace moetwin {
namespace {

// Trapezoidal step in ln t: the error is about exp(-pi^2 / h) (see the header).
constexpr double kStep = 0.25;
// Where the grid starts and ends: an integrand (or a block's remaining mass) below this is dropped.
constexpr double kNegligible = 1e-15;
// Grid points at most: the right end is reached long before this for any weights a double can hold
// (every point multiplies t by e^(1/4); 10^5 points would pass 10^10000).
constexpr int kMaxPoints = 100000;

}  // namespace

std::vector<double> plackett_luce_hit_probabilities(const std::vector<double>& weights, int top_k,
                                                    const std::vector<std::pair<int, int>>& blocks) {
  const int n = static_cast<int>(weights.size());
  if (top_k < 1 || top_k > n)
    throw std::invalid_argument("plackett_luce_hit_probabilities: top_k outside [1, n]");
  double total = 0;
  int positive = 0;
  for (const double w : weights) {
    if (!(w >= 0.0) || !std::isfinite(w))
      throw std::invalid_argument("plackett_luce_hit_probabilities: bad weight");
    total += w;
    positive += w > 0 ? 1 : 0;
  }
  if (positive < top_k)
    throw std::invalid_argument("plackett_luce_hit_probabilities: fewer than top_k positive weights");
  const auto k = static_cast<std::size_t>(top_k);
  std::vector<double> w(weights.size());
  for (std::size_t j = 0; j < w.size(); ++j) w[j] = weights[j] / total;  // the model is scale-free
  std::vector<double> block_weight(blocks.size(), 0.0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto [first, last] = blocks[b];
    if (first < 0 || last > n || first >= last)
      throw std::invalid_argument("plackett_luce_hit_probabilities: block outside the experts or empty");
    for (int j = first; j < last; ++j) block_weight[b] += w[static_cast<std::size_t>(j)];
  }
  // before[i * k + c] = P(c of experts [0, i) fired by t), after[i * k + c] the same for [i, n); c < k.
  const std::size_t rows = static_cast<std::size_t>(n) + 1;
  std::vector<double> before(rows * k), after(rows * k), fired(weights.size());
  std::vector<double> sum(blocks.size(), 0.0);
  double x = std::log(kNegligible);  // sum w = 1, so every integrand is below t there
  double log_factorial = 0;
  for (int i = 2; i <= top_k; ++i) log_factorial += std::log(static_cast<double>(i));
  const double settled = std::exp((std::log(kNegligible * 1e-2) + log_factorial) / top_k);
  for (int point = 0;; ++point) {
    if (point == kMaxPoints)
      throw std::logic_error("plackett_luce_hit_probabilities: quadrature did not end");
    const double t = std::exp(x);
    // Below `settled`, P(top_k or more fired) <= t^top_k / top_k! (sum w = 1) is negligible: F = 1.
    if (t < settled) {
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const double wb = block_weight[b];
        sum[b] += kStep * wb * t * std::exp(-wb * t);
      }
      x += kStep;
      continue;
    }
    for (std::size_t j = 0; j < w.size(); ++j) fired[j] = -std::expm1(-w[j] * t);
    // One more expert, fired with probability p: the count distribution `from` shifts into `to`.
    const auto add_expert = [k](const double* from, double* to, double p) {
      to[0] = from[0] * (1.0 - p);
      for (std::size_t c = 1; c < k; ++c) to[c] = from[c] * (1.0 - p) + from[c - 1] * p;
    };
    std::fill(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(k), 0.0);
    before[0] = 1.0;
    for (std::size_t i = 0; i < w.size(); ++i) add_expert(&before[i * k], &before[(i + 1) * k], fired[i]);
    std::fill(after.begin() + static_cast<std::ptrdiff_t>((rows - 1) * k), after.end(), 0.0);
    after[(rows - 1) * k] = 1.0;
    for (std::size_t i = w.size(); i-- > 0;) add_expert(&after[(i + 1) * k], &after[i * k], fired[i]);
    double tail = 0;  // largest remaining mass over the blocks: integral_t^inf <= F(t) exp(-W t)
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const double* left = &before[static_cast<std::size_t>(blocks[b].first) * k];
      const double* right = &after[static_cast<std::size_t>(blocks[b].second) * k];
      double others_below_k = 0;  // P(fewer than top_k others fired by t)
      for (std::size_t c = 0; c < k; ++c)
        for (std::size_t a = 0; a <= c; ++a) others_below_k += left[a] * right[c - a];
      const double wb = block_weight[b];
      const double first_fire = std::exp(-wb * t);
      sum[b] += kStep * wb * t * first_fire * others_below_k;
      tail = std::max(tail, first_fire * others_below_k);
    }
    if (tail < kNegligible && t > 1.0) break;
    x += kStep;
  }
  for (double& s : sum) s = std::clamp(s, 0.0, 1.0);
  return sum;
}

}  // namespace moetwin
