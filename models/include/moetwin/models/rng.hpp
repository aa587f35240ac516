// Own pseudo-random numbers and distributions (ARCHITECTURE.md "Determinism"; STYLE.md #5): std::
// distributions differ across standard libraries, so every draw the simulator makes goes through this
// file and gives the same numbers on every platform.
//   - SplitMix64 (Steele, Lea, Flood 2014; Vigna's reference splitmix64.c) seeds generators and hashes
//     stream ids.
//   - xoshiro256** 1.0 (Blackman, Vigna 2018; reference xoshiro256starstar.c) is the generator.
//   - Streams: derive_stream(seed, {ids...}) hashes a root seed and a list of stream ids (e.g. a component
//     tag, layer, microbatch) into an independent 64-bit stream seed; outputs record seed and ids.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace moetwin {

// One SplitMix64 step: advances `state` by the golden-ratio increment and returns the mixed value.
std::uint64_t splitmix64_next(std::uint64_t& state);
// The SplitMix64 finaliser alone (a bijective 64-bit mix).
std::uint64_t mix64(std::uint64_t value);
// Stream seed for (seed, ids...): order-sensitive, collision-resistant hash of the ids.
std::uint64_t derive_stream(std::uint64_t seed, std::initializer_list<std::uint64_t> ids);

// Stream tags: the first id of each component's stream, so components never share draws.
namespace stream_tag {
inline constexpr std::uint64_t routing_layer = 0x726f7574'696e6701ULL;  // per-layer expert permutation
inline constexpr std::uint64_t routing_stats = 0x726f7574'696e6702ULL;  // per-layer Monte Carlo stats
inline constexpr std::uint64_t routing_batch = 0x726f7574'696e6703ULL;  // per (layer, microbatch) draws
inline constexpr std::uint64_t routing_dedup = 0x726f7574'696e6704ULL;  // their distinct-token counts
}  // namespace stream_tag

// xoshiro256** 1.0: 256-bit state, period 2^256 - 1, seeded by four SplitMix64 outputs of `seed`.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  // Raw state (for the reference-vector test); must not be all zero.
  static Rng from_state(const std::array<std::uint64_t, 4>& state);

  std::uint64_t next();
  // Uniform double in [0, 1) from the top 53 bits.
  double uniform();
  // Uniform integer in [0, n), n > 0, unbiased (rejection of the short last interval).
  std::uint64_t below(std::uint64_t n);
  // Standard normal, Box-Muller (both values of a pair are used; the spare is cached).
  double normal();
  // Standard normal by the ziggurat (Marsaglia and Tsang 2000, Doornik's ZIGNOR layout): one 64-bit draw
  // and a table lookup for ~99% of values, no trigonometry; a few times cheaper than normal(). Its own
  // sequence: it neither uses nor refills normal()'s cached spare.
  double normal_ziggurat();
  // Binomial(n, p). Exact inversion (CDF recurrence) when min(np, n(1-p)) < 30; otherwise the normal
  // approximation N(np, np(1-p)) with continuity correction from normal_ziggurat(), clamped to [0, n]
  // (Berry-Esseen error <= 0.5/sqrt(np(1-p)) < 0.1 in CDF distance there; fine for traffic volumes,
  // documented where used).
  std::int64_t binomial(std::int64_t n, double p);

 private:
  Rng() = default;
  std::array<std::uint64_t, 4> s_{};
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

// Multinomial(n, weights) by conditional binomials (weights need not be normalised; all >= 0, sum > 0).
// std::invalid_argument for a negative or non-finite weight or a zero total.
std::vector<std::int64_t> sample_multinomial(Rng& rng, std::int64_t n, const std::vector<double>& weights);

// Multinomial draws of several independent rows at once: row l (of `rows`) gets Multinomial(n[l], its
// m weights, weights[l * weight_stride ...]; stride 0: one set for all) drawn from rngs[l] into
// counts[l * m ...]: the same draws as sample_multinomial(rngs[l], n[l], those weights) row after row
// (which is this with one row).
// The rows' conditional-binomial chains (each draw waits for the count the previous one left: a sqrt,
// a ziggurat normal, a rounding in a row) advance step by step together, so the CPU overlaps their
// latencies.
void sample_multinomial_rows(Rng* rngs, const std::int64_t* n, int rows, const double* weights, std::size_t m,
                             std::size_t weight_stride, std::int64_t* counts);

// Fisher-Yates shuffle of `items` with Rng::below.
template <typename T>
void shuffle(Rng& rng, std::vector<T>& items) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    std::swap(items[i - 1], items[j]);
  }
}

// Walker/Vose alias table: O(1) draws from a discrete distribution given by non-negative weights.
class AliasTable {
 public:
  // Throws std::invalid_argument for an empty list, a negative or non-finite weight, or zero sum.
  explicit AliasTable(const std::vector<double>& weights);
  std::size_t sample(Rng& rng) const;
  std::size_t size() const { return prob_.size(); }
  // Probability of outcome i (the normalised weight), for tests.
  double probability(std::size_t i) const { return normalised_[i]; }

 private:
  std::vector<double> prob_;
  std::vector<std::size_t> alias_;
  std::vector<double> normalised_;
  // Rng::below(size()) unrolled with its per-call divisions done once: the rejection threshold, and
  // the column as a mask when the size is a power of two (experts usually are). Same draws, same column.
  std::uint64_t threshold_ = 0;
  std::uint64_t mask_ = 0;  // size() - 1 for a power of two, else 0
};

// Zipf popularity weights w_i = 1 / (i + 1)^s for i in [0, n), s >= 0 (s = 0: uniform). Not normalised.
std::vector<double> zipf_weights(int n, double exponent);

}  // namespace moetwin
