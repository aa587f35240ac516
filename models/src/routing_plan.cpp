// Routing plans: samplers and the counts-mode fast path. See routing_plan.hpp for the model.
#include "moetwin/models/routing_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/models/plackett_luce.hpp"
#include "moetwin/models/rng.hpp"

namespace moetwin {
namespace {

std::size_t idx(int i) {
  return static_cast<std::size_t>(i);
}

// Weights below this fraction of the largest are raised to it so a token can always find top_k experts
// (a histogram may list fewer than top_k loaded experts); 1e-12 changes no count at realistic token counts.
constexpr double kWeightFloor = 1e-12;

// Draws after which the token sampler stops rejecting already-drawn experts and scans the remainder.
constexpr int kMaxRejections = 64;

// Per-token Plackett-Luce sampler (with the group-limited walk).
class TokenSampler {
 public:
  TokenSampler(const std::vector<double>& weights, int top_k, int groups, int topk_groups)
      : alias_(weights), weights_(weights), top_k_(top_k), groups_(groups), topk_groups_(topk_groups) {
    experts_per_group_ = groups > 0 ? static_cast<int>(weights.size()) / groups : 0;
    seen_.assign(weights.size(), 0);
    group_state_.assign(static_cast<std::size_t>(std::max(groups, 1)), 0);
  }

  // Fills `out` with top_k distinct experts.
  void sample(Rng& rng, std::vector<int>& out) {
    out.clear();
    touched_.clear();
    int selected_groups = 0;
    int rejections = 0;
    while (static_cast<int>(out.size()) < top_k_) {
      int e;
      if (rejections < kMaxRejections) {
        e = static_cast<int>(alias_.sample(rng));
        if (seen_[idx(e)]) {
          ++rejections;
          continue;
        }
      } else {
        e = scan_draw(rng, selected_groups);
      }
      seen_[idx(e)] = 1;
      touched_.push_back(e);
      if (groups_ > 0) {
        const auto g = idx(e / experts_per_group_);
        if (group_state_[g] == 0) {
          if (selected_groups >= topk_groups_) {
            group_state_[g] = 2;  // rejected group: remembered so the scan skips it
            touched_groups_.push_back(static_cast<int>(g));
            continue;
          }
          group_state_[g] = 1;
          touched_groups_.push_back(static_cast<int>(g));
          ++selected_groups;
        } else if (group_state_[g] == 2) {
          continue;
        }
      }
      out.push_back(e);
    }
    for (const int e : touched_) seen_[idx(e)] = 0;
    for (const int g : touched_groups_) group_state_[idx(g)] = 0;
    touched_groups_.clear();
  }

 private:
  // Weighted draw among experts not yet drawn and not in a rejected group (exact fallback).
  int scan_draw(Rng& rng, int selected_groups) const {
    auto allowed = [&](std::size_t e) {
      if (seen_[e]) return false;
      if (groups_ == 0) return true;
      const int state = group_state_[e / static_cast<std::size_t>(experts_per_group_)];
      return state == 1 || (state == 0 && selected_groups < topk_groups_);
    };
    double total = 0;
    for (std::size_t e = 0; e < weights_.size(); ++e)
      if (allowed(e)) total += weights_[e];
    double u = rng.uniform() * total;
    int last = -1;
    for (std::size_t e = 0; e < weights_.size(); ++e) {
      if (!allowed(e)) continue;
      last = static_cast<int>(e);
      if (u < weights_[e]) return last;
      u -= weights_[e];
    }
    if (last < 0) throw std::logic_error("TokenSampler: no expert left to draw");
    return last;
  }

  AliasTable alias_;
  std::vector<double> weights_;
  int top_k_;
  int groups_;
  int topk_groups_;
  int experts_per_group_ = 0;
  std::vector<char> seen_;
  std::vector<int> group_state_;  // 0 unseen, 1 selected, 2 rejected
  std::vector<int> touched_;
  std::vector<int> touched_groups_;
};

// P(a uniform k-subset of E items misses a set of m items) = C(E-m, k) / C(E, k).
double uniform_miss_probability(int experts, int members, int top_k) {
  double p = 1.0;
  for (int i = 0; i < top_k; ++i) {
    const double num = static_cast<double>(experts - members - i);
    if (num <= 0) return 0.0;
    p *= num / static_cast<double>(experts - i);
  }
  return p;
}

std::int64_t round_count(double x) {
  return static_cast<std::int64_t>(std::floor(x + 0.5));
}

}  // namespace

ExpertHistogram read_expert_histogram(const std::string& path, int experts) {
  const CsvTable table = read_csv_file(path);
  const std::size_t c_layer = table.column("layer");
  const std::size_t c_expert = table.column("expert");
  const std::size_t c_load = table.column("load");
  ExpertHistogram h;
  h.path = path;
  auto parse_int = [&](const CsvRow& row, std::size_t c, const std::string& key) {
    const std::string& v = row.fields[c];
    std::size_t used = 0;
    int out = 0;
    try {
      out = std::stoi(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size() || out < 0)
      throw InputError({path, row.line}, key, v, "a non-negative integer");
    return out;
  };
  for (const CsvRow& row : table.rows) {
    const int layer = parse_int(row, c_layer, "layer");
    const int expert = parse_int(row, c_expert, "expert");
    if (expert >= experts)
      throw InputError({path, row.line}, "expert", row.fields[c_expert],
                       "an expert id below the model's " + std::to_string(experts) + " experts");
    double load = 0;
    std::size_t used = 0;
    try {
      load = std::stod(row.fields[c_load], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != row.fields[c_load].size() || !std::isfinite(load) || load < 0)
      throw InputError({path, row.line}, "load", row.fields[c_load], "a finite load >= 0");
    auto& loads = h.loads[layer];
    if (loads.empty()) loads.assign(idx(experts), -1.0);
    if (loads[idx(expert)] >= 0)
      throw InputError({path, row.line}, "expert", row.fields[c_expert],
                       "one row per (layer, expert); this pair is repeated");
    loads[idx(expert)] = load;
  }
  for (auto& [layer, loads] : h.loads) {
    double total = 0;
    for (auto& l : loads) {
      if (l < 0) l = 0;
      total += l;
    }
    if (!(total > 0))
      throw InputError({path, 0}, "layer", std::to_string(layer), "a layer with a positive total load");
  }
  if (h.loads.empty()) throw InputError({path, 0}, "no (layer, expert, load) rows");
  return h;
}

int RoutingSpec::nodes() const {
  if (ranks_per_node <= 0) return 0;
  return std::max(1, (ep_ranks + ranks_per_node - 1) / ranks_per_node);
}

void RoutingSpec::validate() const {
  const InputLocation here{"routing", 0};
  if (experts <= 0) throw InputError(here, "experts", std::to_string(experts), "> 0");
  if (top_k <= 0 || top_k > experts)
    throw InputError(here, "top_k", std::to_string(top_k), "in [1, experts]");
  if (ep_ranks <= 0 || experts % ep_ranks != 0)
    throw InputError(here, "ep", std::to_string(ep_ranks),
                     "a divisor of the expert count " + std::to_string(experts));
  if (ranks_per_node <= 0 || (ep_ranks > ranks_per_node && ep_ranks % ranks_per_node != 0))
    throw InputError(here, "ranks_per_node", std::to_string(ranks_per_node), "> 0 and dividing the EP size");
  if (tokens_per_rank < 0) throw InputError(here, "tokens_per_rank", std::to_string(tokens_per_rank), ">= 0");
  if (!(zipf_exponent >= 0) || !std::isfinite(zipf_exponent))
    throw InputError(here, "zipf_exponent", format_exact(zipf_exponent), "a finite exponent >= 0");
  if (stats_tokens <= 0) throw InputError(here, "stats_tokens", std::to_string(stats_tokens), "> 0");
  if (kind == RoutingKind::group_limited) {
    if (groups <= 0 || experts % groups != 0)
      throw InputError(here, "n_group", std::to_string(groups), "a divisor of the expert count");
    if (topk_groups <= 0 || topk_groups > groups)
      throw InputError(here, "topk_group", std::to_string(topk_groups), "in [1, n_group]");
    if (topk_groups * (experts / groups) < top_k)
      throw InputError(here, "topk_group", std::to_string(topk_groups),
                       "enough groups to hold top_k experts (topk_group * experts / n_group >= top_k)");
  }
  if (kind == RoutingKind::histogram) {
    if (histogram.loads.empty())
      throw InputError(here, "histogram", histogram.path, "a loaded expert histogram");
    for (const auto& [layer, loads] : histogram.loads)
      if (static_cast<int>(loads.size()) != experts)
        throw InputError({histogram.path, 0}, "layer", std::to_string(layer), "one load per expert");
  }
}

std::int64_t LayerRouting::rank_dedup(int src, int dst) const {
  if (rank_tokens.empty()) throw std::logic_error("LayerRouting: plan drawn without distinct-token counts");
  return rank_tokens[idx(src * ep_ranks + dst)];
}
std::int64_t LayerRouting::node_dedup(int src, int node) const {
  if (node_tokens.empty()) throw std::logic_error("LayerRouting: plan drawn without distinct-token counts");
  return node_tokens[idx(src * nodes + node)];
}

std::int64_t LayerRouting::received(int rank) const {
  std::int64_t sum = 0;
  for (int src = 0; src < ep_ranks; ++src) sum += copy(src, rank);
  return sum;
}

std::int64_t LayerRouting::hottest_rank_tokens() const {
  std::int64_t best = 0;
  for (int r = 0; r < ep_ranks; ++r) best = std::max(best, received(r));
  return best;
}

std::int64_t LayerRouting::hottest_expert_tokens() const {
  std::int64_t best = 0;
  for (const auto t : expert_tokens) best = std::max(best, t);
  return best;
}

RoutingPlanner::RoutingPlanner(RoutingSpec spec) : spec_(std::move(spec)) {
  spec_.validate();
}

std::vector<double> RoutingPlanner::expert_weights(int layer) const {
  const int e_count = spec_.experts;
  std::vector<double> w;
  switch (spec_.kind) {
    case RoutingKind::balanced:
      w.assign(idx(e_count), 1.0);
      break;
    case RoutingKind::zipf:
    case RoutingKind::group_limited: {
      const std::vector<double> z = zipf_weights(e_count, spec_.zipf_exponent);
      std::vector<int> perm(idx(e_count));
      for (int i = 0; i < e_count; ++i) perm[idx(i)] = i;
      Rng rng(derive_stream(spec_.seed, {stream_tag::routing_layer, static_cast<std::uint64_t>(layer)}));
      shuffle(rng, perm);
      // Expert perm[i] gets the i-th most popular weight.
      w.assign(idx(e_count), 0.0);
      for (int i = 0; i < e_count; ++i) w[idx(perm[idx(i)])] = z[idx(i)];
      break;
    }
    case RoutingKind::histogram: {
      const auto it = spec_.histogram.loads.find(layer);
      if (it == spec_.histogram.loads.end())
        throw InputError({spec_.histogram.path, 0}, "layer", std::to_string(layer),
                         "a layer listed in the expert histogram");
      w = it->second;
      break;
    }
  }
  const double top = *std::max_element(w.begin(), w.end());
  for (auto& x : w) x = std::max(x, top * kWeightFloor);
  return w;
}

LayerRoutingStats RoutingPlanner::layer_stats(int layer) const {
  const RoutingSpec& s = spec_;
  const int ranks = s.ep_ranks;
  const int nodes = s.nodes();
  const int per_rank = s.experts / ranks;
  const int per_node_ranks = std::min(s.ranks_per_node, ranks);
  LayerRoutingStats st;
  st.expert_share.assign(idx(s.experts), 0.0);
  st.rank_share.assign(idx(ranks), 0.0);
  st.rank_hit.assign(idx(ranks), 0.0);
  st.node_hit.assign(idx(nodes), 0.0);
  const bool uniform =
      s.kind == RoutingKind::balanced || (s.kind == RoutingKind::zipf && s.zipf_exponent == 0.0);
  if (uniform) {
    const double k = static_cast<double>(s.top_k);
    for (auto& x : st.expert_share) x = k / static_cast<double>(s.experts);
    for (int r = 0; r < ranks; ++r) {
      st.rank_share[idx(r)] = k * per_rank / static_cast<double>(s.experts);
      st.rank_hit[idx(r)] = 1.0 - uniform_miss_probability(s.experts, per_rank, s.top_k);
    }
    for (int n = 0; n < nodes; ++n) {
      const int members = std::min(per_node_ranks, ranks - n * per_node_ranks) * per_rank;
      st.node_hit[idx(n)] = 1.0 - uniform_miss_probability(s.experts, members, s.top_k);
    }
    return st;
  }
  const std::vector<double> w = expert_weights(layer);
  if (s.kind == RoutingKind::zipf || s.kind == RoutingKind::histogram) {
    // Plackett-Luce without groups: computed (plackett_luce.hpp), not sampled.
    std::vector<std::pair<int, int>> blocks;
    blocks.reserve(idx(s.experts + ranks + nodes));
    for (int e = 0; e < s.experts; ++e) blocks.emplace_back(e, e + 1);
    for (int r = 0; r < ranks; ++r) blocks.emplace_back(r * per_rank, (r + 1) * per_rank);
    for (int n = 0; n < nodes; ++n)
      blocks.emplace_back(n * per_node_ranks * per_rank,
                          std::min(ranks, (n + 1) * per_node_ranks) * per_rank);
    const std::vector<double> hit = plackett_luce_hit_probabilities(w, s.top_k, blocks);
    double total = 0;
    for (const double x : w) total += x;
    for (int e = 0; e < s.experts; ++e) {
      // A histogram's copies are proportional to its measured loads (the file is the ground truth for
      // GEMM sizes); its distinct-token chances follow Plackett-Luce with the loads as weights.
      st.expert_share[idx(e)] = s.kind == RoutingKind::histogram ? s.top_k * w[idx(e)] / total : hit[idx(e)];
      st.rank_share[idx(e / per_rank)] += st.expert_share[idx(e)];
    }
    for (int r = 0; r < ranks; ++r) st.rank_hit[idx(r)] = hit[idx(s.experts + r)];
    for (int n = 0; n < nodes; ++n) st.node_hit[idx(n)] = hit[idx(s.experts + ranks + n)];
    return st;
  }
  // Group-limited routing: a Monte Carlo of the per-token sampler's group walk.
  TokenSampler sampler(w, s.top_k, s.groups, s.topk_groups);
  Rng rng(derive_stream(s.seed, {stream_tag::routing_stats, static_cast<std::uint64_t>(layer)}));
  std::vector<int> chosen;
  std::vector<int> rank_mark(idx(ranks), -1);
  std::vector<int> node_mark(idx(nodes), -1);
  std::vector<double> rank_hits(idx(ranks), 0.0);
  std::vector<double> node_hits(idx(nodes), 0.0);
  for (int t = 0; t < s.stats_tokens; ++t) {
    sampler.sample(rng, chosen);
    for (const int e : chosen) {
      st.expert_share[idx(e)] += 1.0;
      const int r = e / per_rank;
      const int n = r / s.ranks_per_node;
      if (rank_mark[idx(r)] != t) rank_mark[idx(r)] = t, rank_hits[idx(r)] += 1.0;
      if (node_mark[idx(n)] != t) node_mark[idx(n)] = t, node_hits[idx(n)] += 1.0;
    }
  }
  const double inv = 1.0 / static_cast<double>(s.stats_tokens);
  for (auto& x : st.expert_share) x *= inv;
  for (int e = 0; e < s.experts; ++e) st.rank_share[idx(e / per_rank)] += st.expert_share[idx(e)];
  for (int r = 0; r < ranks; ++r) st.rank_hit[idx(r)] = rank_hits[idx(r)] * inv;
  for (int n = 0; n < nodes; ++n) st.node_hit[idx(n)] = node_hits[idx(n)] * inv;
  return st;
}

void RoutingPlanner::prepare_stats(const std::vector<int>& layers, int threads) const {
  // plan() reads no statistics when sampling per token, and balanced ones cost next to nothing.
  if (spec_.sampling == RoutingSampling::per_token || spec_.kind == RoutingKind::balanced) return;
  std::vector<int> todo;
  {
    const std::lock_guard<std::mutex> lock(stats_mutex_);
    for (const int layer : layers) {
      if (layer >= 0 && stats_cache_.find(layer) == stats_cache_.end() &&
          std::find(todo.begin(), todo.end(), layer) == todo.end())
        todo.push_back(layer);
    }
  }
  std::vector<LayerRoutingStats> stats(todo.size());
  parallel_for(todo.size(), threads, [&](std::size_t k) { stats[k] = layer_stats(todo[k]); });
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  for (std::size_t k = 0; k < todo.size(); ++k) stats_cache_.emplace(todo[k], std::move(stats[k]));
}

const LayerRoutingStats& RoutingPlanner::cached_stats(int layer) const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  auto it = stats_cache_.find(layer);
  if (it == stats_cache_.end()) it = stats_cache_.emplace(layer, layer_stats(layer)).first;
  return it->second;
}

std::int64_t RoutingPlanner::count_class(int layer, int microbatch) const {
  const RoutingSpec& s = spec_;
  if (layer < 0 || microbatch < 0 || s.kind != RoutingKind::balanced || s.sampling != RoutingSampling::counts)
    return -1;
  const auto experts = static_cast<std::uint64_t>(s.experts);
  const auto rem = static_cast<std::uint64_t>(s.tokens_per_rank * s.top_k) % experts;
  if (rem == 0) return 0;
  // plan() rotates source src's remainder copies by (src + ranks x (layer + microbatch)) x rem mod E in
  // uint64: without overflow that is (src x rem + key) mod E with key = ranks x (layer + microbatch) x
  // rem mod E, the same for every source. Plans that would wrap are not classed.
  const auto ranks = static_cast<std::uint64_t>(s.ep_ranks);
  const std::uint64_t x = static_cast<std::uint64_t>(layer) + static_cast<std::uint64_t>(microbatch);
  std::uint64_t rotation = 0;
  std::uint64_t bound = 0;
  if (__builtin_mul_overflow(ranks, x + 1, &bound) || __builtin_mul_overflow(bound, rem, &bound) ||
      __builtin_mul_overflow(ranks * x, rem, &rotation))
    return -1;
  return static_cast<std::int64_t>(1 + rotation % experts);
}

LayerRouting RoutingPlanner::plan(int layer, int microbatch) const {
  if (layer < 0 || microbatch < 0)
    throw std::invalid_argument("RoutingPlanner::plan: negative layer or microbatch");
  const RoutingSpec& s = spec_;
  LayerRouting out;
  out.layer = layer;
  out.microbatch = microbatch;
  out.stream_seed = derive_stream(s.seed, {stream_tag::routing_batch, static_cast<std::uint64_t>(layer),
                                           static_cast<std::uint64_t>(microbatch)});
  out.ep_ranks = s.ep_ranks;
  out.ranks_per_node = std::min(s.ranks_per_node, s.ep_ranks);
  out.nodes = s.nodes();
  out.experts = s.experts;
  out.top_k = s.top_k;
  out.tokens_per_rank = s.tokens_per_rank;
  const int ranks = s.ep_ranks;
  const int nodes = out.nodes;
  const int per_rank = s.experts / ranks;
  const int rpn = out.ranks_per_node;
  const std::int64_t T = s.tokens_per_rank;
  out.copies.assign(idx(ranks * ranks), 0);
  out.expert_tokens.assign(idx(s.experts), 0);
  Rng rng(out.stream_seed);

  if (s.sampling == RoutingSampling::per_token) {
    out.rank_tokens.assign(idx(ranks * ranks), 0);
    out.node_tokens.assign(idx(ranks * nodes), 0);
    const std::vector<double> w = expert_weights(layer);
    TokenSampler sampler(w, s.top_k, s.kind == RoutingKind::group_limited ? s.groups : 0, s.topk_groups);
    std::vector<int> chosen;
    std::vector<std::int64_t> rank_mark(idx(ranks), -1);
    std::vector<std::int64_t> node_mark(idx(nodes), -1);
    for (int src = 0; src < ranks; ++src) {
      for (std::int64_t t = 0; t < T; ++t) {
        sampler.sample(rng, chosen);
        for (const int e : chosen) {
          const int r = e / per_rank;
          const int n = r / rpn;
          ++out.expert_tokens[idx(e)];
          ++out.copies[idx(src * ranks + r)];
          if (rank_mark[idx(r)] != t) rank_mark[idx(r)] = t, ++out.rank_tokens[idx(src * ranks + r)];
          if (node_mark[idx(n)] != t) node_mark[idx(n)] = t, ++out.node_tokens[idx(src * nodes + n)];
        }
      }
      std::fill(rank_mark.begin(), rank_mark.end(), -1);
      std::fill(node_mark.begin(), node_mark.end(), -1);
    }
    return out;
  }

  const LayerRoutingStats& st = cached_stats(layer);
  const bool balanced = s.kind == RoutingKind::balanced;
  const std::int64_t copies_per_src = T * s.top_k;
  // Copies per destination rank: balanced, every expert's even share (remainders rotated).
  for (int src = 0; balanced && src < ranks; ++src) {
    const std::int64_t base = copies_per_src / s.experts;
    const std::int64_t rem = copies_per_src % s.experts;
    const auto offset = static_cast<std::int64_t>(
        (static_cast<std::uint64_t>(src) +
         static_cast<std::uint64_t>(ranks) *
             (static_cast<std::uint64_t>(layer) + static_cast<std::uint64_t>(microbatch))) *
        static_cast<std::uint64_t>(rem) % static_cast<std::uint64_t>(s.experts));
    for (int e = 0; e < s.experts; ++e) {
      const std::int64_t c = base + (((e + offset) % s.experts) < rem ? 1 : 0);
      out.expert_tokens[idx(e)] += c;
      out.copies[idx(src * ranks + e / per_rank)] += c;
    }
  }
  if (!balanced) {
    // Each source's copies over the ranks, then each rank's received copies over its experts: one
    // multinomial per row, each row from a stream of its own (sources {0, src}, ranks {1, r} under the
    // plan's stream), all rows drawn together (sample_multinomial_rows).
    std::vector<Rng> rngs;
    rngs.reserve(idx(ranks));
    for (int src = 0; src < ranks; ++src)
      rngs.emplace_back(derive_stream(out.stream_seed, {0, static_cast<std::uint64_t>(src)}));
    const std::vector<std::int64_t> per_src(idx(ranks), copies_per_src);
    sample_multinomial_rows(rngs.data(), per_src.data(), ranks, st.rank_share.data(), idx(ranks), 0,
                            out.copies.data());
    std::vector<std::int64_t> received(idx(ranks));
    for (int r = 0; r < ranks; ++r) {
      received[idx(r)] = out.received(r);
      rngs[idx(r)] = Rng(derive_stream(out.stream_seed, {1, static_cast<std::uint64_t>(r)}));
    }
    sample_multinomial_rows(rngs.data(), received.data(), ranks, st.expert_share.data(), idx(per_rank),
                            idx(per_rank), out.expert_tokens.data());
  }
  if (!s.dedup_counts) return out;
  // Distinct tokens per destination rank, then per node, clamped into what the copies allow. Their own
  // stream: the copies are the same whether or not these are drawn.
  out.rank_tokens.assign(idx(ranks * ranks), 0);
  out.node_tokens.assign(idx(ranks * nodes), 0);
  Rng dedup_rng(derive_stream(s.seed, {stream_tag::routing_dedup, static_cast<std::uint64_t>(layer),
                                       static_cast<std::uint64_t>(microbatch)}));
  const std::int64_t cap_per_token = std::min(s.top_k, per_rank);
  for (int src = 0; src < ranks; ++src) {
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t c = out.copies[idx(src * ranks + r)];
      const double p = st.rank_hit[idx(r)];
      std::int64_t d = balanced ? round_count(static_cast<double>(T) * p) : dedup_rng.binomial(T, p);
      const std::int64_t hi = std::min(c, T);
      // The multinomial can exceed T * cap (it ignores the per-token cap): then hi bounds lo.
      const std::int64_t lo = std::min(hi, (c + cap_per_token - 1) / cap_per_token);
      d = std::clamp(d, lo, hi);
      out.rank_tokens[idx(src * ranks + r)] = d;
    }
    for (int n = 0; n < nodes; ++n) {
      std::int64_t lo = 0;
      std::int64_t sum = 0;
      for (int r = n * rpn; r < std::min(ranks, (n + 1) * rpn); ++r) {
        lo = std::max(lo, out.rank_tokens[idx(src * ranks + r)]);
        sum += out.rank_tokens[idx(src * ranks + r)];
      }
      const double p = st.node_hit[idx(n)];
      std::int64_t d = balanced ? round_count(static_cast<double>(T) * p) : dedup_rng.binomial(T, p);
      out.node_tokens[idx(src * nodes + n)] = std::clamp(d, lo, std::min(sum, T));
    }
  }
  return out;
}

}  // namespace moetwin
