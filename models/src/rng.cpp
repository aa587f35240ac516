// Own PRNG and distributions; see rng.hpp for the algorithms and their references.
#include "moetwin/models/rng.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace moetwin {
namespace {

constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;  // SplitMix64 increment (2^64 / phi)

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// Below this mean (of the smaller tail) Rng::binomial inverts the CDF exactly; above, normal approx.
constexpr double kBinomialExactMean = 30.0;

}  // namespace

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += kGoldenGamma;
  return mix64(state);
}

std::uint64_t derive_stream(std::uint64_t seed, std::initializer_list<std::uint64_t> ids) {
  std::uint64_t h = mix64(seed ^ kGoldenGamma);
  std::uint64_t position = 0;
  for (const std::uint64_t id : ids) {
    // Mixing the position in makes (a, b) and (b, a) different streams.
    ++position;
    h = mix64(h ^ mix64(id + position * kGoldenGamma));
  }
  return h;
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (auto& word : s_) word = splitmix64_next(state);
}

Rng Rng::from_state(const std::array<std::uint64_t, 4>& state) {
  if (state[0] == 0 && state[1] == 0 && state[2] == 0 && state[3] == 0)
    throw std::invalid_argument("xoshiro256** state must not be all zero");
  Rng rng;
  rng.s_ = state;
  return rng;
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::below(0)");
  // Reject the last partial interval so every residue is equally likely.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % n;
  }
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  // 1 - uniform() is in (0, 1], so the log is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * 3.14159265358979323846 * u2;
  spare_normal_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

namespace {

// Ziggurat tables of the standard normal: 128 layers of equal area, R = 3.442619855899 (the base strip's
// right edge), V = 9.91256303526217e-3 (each layer's area), as in Marsaglia and Tsang, "The Ziggurat
// Method for Generating Random Variables", J. Stat. Softw. 5(8), 2000, laid out as Doornik's ZIGNOR
// ("An Improved Ziggurat Method to Generate Normal Random Samples", 2005): x[i] is layer i's right edge,
// ratio[i] = x[i + 1] / x[i] the fraction of the layer inside the density. Built once, from the same
// libm calls on every run.
struct ZigguratTables {
  static constexpr int kLayers = 128;
  static constexpr double kR = 3.442619855899;
  static constexpr double kV = 9.91256303526217e-3;
  double x[kLayers + 1] = {};
  double ratio[kLayers] = {};
  ZigguratTables() {
    double f = std::exp(-0.5 * kR * kR);
    x[0] = kV / f;  // the base layer: the rectangle plus the tail, as a wider rectangle
    x[1] = kR;
    x[kLayers] = 0;
    for (int i = 2; i < kLayers; ++i) {
      x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
      f = std::exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i < kLayers; ++i) ratio[i] = x[i + 1] / x[i];
  }
};

const ZigguratTables& ziggurat() {
  static const ZigguratTables tables;
  return tables;
}

}  // namespace

double Rng::normal_ziggurat() {
  const ZigguratTables& z = ziggurat();
  for (;;) {
    // One draw: the top 53 bits make u in [-1, 1), the low 7 bits (not among them) the layer.
    const std::uint64_t bits = next();
    const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;
    const auto i = static_cast<int>(bits & 0x7f);
    if (std::fabs(u) < z.ratio[i]) return u * z.x[i];  // inside the layer's core rectangle (~99%)
    if (i == 0) {
      // The tail beyond R (Marsaglia 1964): x = -ln(U1) / R, accepted when -2 ln(U2) >= x^2.
      double x = 0, y = 0;
      do {
        x = std::log(1.0 - uniform()) / ZigguratTables::kR;
        y = std::log(1.0 - uniform());
      } while (-2.0 * y < x * x);
      return u < 0 ? x - ZigguratTables::kR : ZigguratTables::kR - x;
    }
    // The wedge between the core and the density: accept under the curve.
    const double x = u * z.x[i];
    const double f0 = std::exp(-0.5 * (z.x[i] * z.x[i] - x * x));
    const double f1 = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x));
    if (f1 + uniform() * (f0 - f1) < 1.0) return x;
  }
}

std::int64_t Rng::binomial(std::int64_t n, double p) {
  if (n < 0 || !(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("Rng::binomial: bad n or p");
  if (n == 0 || p == 0.0) return 0;
  if (p == 1.0) return n;
  // Work on the smaller tail so the inversion loop is short.
  const bool flip = p > 0.5;
  const double q = flip ? 1.0 - p : p;
  const double nd = static_cast<double>(n);
  std::int64_t k = 0;
  if (nd * q < kBinomialExactMean) {
    // CDF inversion with the recurrence P(k+1) = P(k) * (n-k)/(k+1) * q/(1-q).
    const double ratio = q / (1.0 - q);
    double pk = std::pow(1.0 - q, nd);
    double u = uniform();
    while (u >= pk && k < n) {
      u -= pk;
      pk *= static_cast<double>(n - k) / static_cast<double>(k + 1) * ratio;
      ++k;
    }
  } else {
    const double mean = nd * q;
    const double sd = std::sqrt(mean * (1.0 - q));
    const double x = std::floor(mean + sd * normal_ziggurat() + 0.5);
    k = static_cast<std::int64_t>(std::clamp(x, 0.0, nd));
  }
  return flip ? n - k : k;
}

void sample_multinomial_rows(Rng* rngs, const std::int64_t* n, int rows, const double* weights, std::size_t m,
                             std::size_t weight_stride, std::int64_t* counts) {
  const auto nrows = static_cast<std::size_t>(rows);
  // Per row: the weight and the count left.
  std::vector<double> remaining_weight(nrows, 0.0);
  std::vector<std::int64_t> remaining(n, n + nrows);
  for (std::size_t l = 0; l < nrows; ++l) {
    const double* w = weights + l * weight_stride;
    for (std::size_t i = 0; i < m; ++i) {
      if (!(w[i] >= 0.0) || !std::isfinite(w[i]))
        throw std::invalid_argument("sample_multinomial: bad weight");
      remaining_weight[l] += w[i];
    }
    if (!(remaining_weight[l] > 0.0)) throw std::invalid_argument("sample_multinomial: zero total weight");
  }
  std::fill(counts, counts + nrows * m, 0);
  for (std::size_t i = 0; i < m; ++i) {
    bool any = false;
    for (std::size_t l = 0; l < nrows; ++l) {
      if (remaining[l] <= 0 || !(remaining_weight[l] > 0.0)) continue;
      const double w = weights[l * weight_stride + i];
      if (i + 1 == m) {
        counts[l * m + i] = remaining[l];
        remaining[l] = 0;
        continue;
      }
      const std::int64_t k = rngs[l].binomial(remaining[l], std::clamp(w / remaining_weight[l], 0.0, 1.0));
      counts[l * m + i] = k;
      remaining[l] -= k;
      remaining_weight[l] -= w;
      any = any || (remaining[l] > 0 && remaining_weight[l] > 0.0);
    }
    if (!any) break;
  }
}

std::vector<std::int64_t> sample_multinomial(Rng& rng, std::int64_t n, const std::vector<double>& weights) {
  std::vector<std::int64_t> counts(weights.size());
  sample_multinomial_rows(&rng, &n, 1, weights.data(), weights.size(), 0, counts.data());
  return counts;
}

AliasTable::AliasTable(const std::vector<double>& weights) {
  if (weights.empty()) throw std::invalid_argument("AliasTable: no weights");
  double total = 0;
  for (const double w : weights) {
    if (!(w >= 0.0) || !std::isfinite(w)) throw std::invalid_argument("AliasTable: bad weight");
    total += w;
  }
  if (!(total > 0.0)) throw std::invalid_argument("AliasTable: zero total weight");
  const std::size_t n = weights.size();
  normalised_.resize(n);
  prob_.assign(n, 1.0);
  alias_.resize(n);
  std::vector<double> scaled(n);
  std::vector<std::size_t> small;
  std::vector<std::size_t> large;
  for (std::size_t i = 0; i < n; ++i) {
    normalised_[i] = weights[i] / total;
    scaled[i] = normalised_[i] * static_cast<double>(n);
    alias_[i] = i;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  // Vose's method; index order is fixed, so the table is deterministic.
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back();
    small.pop_back();
    const std::size_t l = large.back();
    prob_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers (rounding) keep probability 1 and alias themselves.
  threshold_ = (0 - static_cast<std::uint64_t>(n)) % n;
  mask_ = (n & (n - 1)) == 0 ? n - 1 : 0;
}

std::size_t AliasTable::sample(Rng& rng) const {
  std::uint64_t r = rng.next();
  while (r < threshold_) r = rng.next();
  const auto column = static_cast<std::size_t>(mask_ != 0 ? r & mask_ : r % prob_.size());
  return rng.uniform() < prob_[column] ? column : alias_[column];
}

std::vector<double> zipf_weights(int n, double exponent) {
  if (n <= 0 || !(exponent >= 0.0) || !std::isfinite(exponent))
    throw std::invalid_argument("zipf_weights: need n > 0 and a finite exponent >= 0");
  std::vector<double> w(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    w[static_cast<std::size_t>(i)] = 1.0 / std::pow(static_cast<double>(i + 1), exponent);
  return w;
}

}  // namespace moetwin
