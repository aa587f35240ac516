// Routing plans: per MoE layer, microbatch and EP rank, how many tokens go to which expert — the input of
// the A2A traffic matrices (traffic_matrix.hpp) and of the expert grouped-GEMM sizes on each rank.
//
// Model. Tokens of one layer are i.i.d.: each token picks top_k distinct experts. Expert popularity per
// layer is a weight vector w (balanced: uniform; zipf: 1/rank^s over a per-layer random permutation of the
// experts; histogram: measured loads). A token's experts are the first top_k experts of a Plackett-Luce
// ordering by w (= successive weighted sampling without replacement). group-limited (DeepSeek
// n_group/topk_group, as in DeepEP tests/test_internode.py where groups are nodes): experts are split into
// `groups` contiguous groups; walking the same ordering, the first `topk_groups` groups to appear are the
// token's groups (a group's score is its best expert) and its experts are the first top_k experts of the
// ordering inside those groups. DeepSeek-V3 scores a group by its top-2 sum; that refinement is not modelled.
//
// Expert e lives on EP rank e / (experts / ep_ranks); EP rank r on node r / ranks_per_node (EP groups are
// consecutive ranks in every live-run layout; the placement can renumber ranks later).
//
// Two samplers (RoutingSampling):
//  - per_token: samples every token (exact under the model). Cost ~ top_k draws per token: used for
//    standalone kernel benchmarks and tests.
//  - counts (default): per layer, inclusion statistics (expected copies per token to each rank, probability
//    that a token reaches a rank / a node) come from closed forms (uniform: balanced, zipf s=0), from
//    quadrature of the Plackett-Luce model (zipf and histogram: plackett_luce.hpp, exact to ~1e-10), or
//    from a Monte Carlo of `stats_tokens` tokens of the per-token sampler (group-limited, whose group
//    walk has no such integral here). Per (layer,
//    microbatch, source rank): copies per destination rank ~ Multinomial(T*top_k, share of each rank),
//    distinct tokens per destination rank ~ Binomial(T, p_rank), per destination node ~ Binomial(T, p_node),
//    each clamped into the range the copies allow (dedup <= copies, node >= max of its ranks, ...), and the
//    copies a rank receives are split over its experts by a multinomial. This keeps every marginal of the
//    per-token model (sampling copies as a multinomial ignores the "distinct experts" cap per token, a
//    variance-only difference) at a cost independent of T: a DeepSeek-V3 iteration (58 layers x 64
//    microbatches x 32 ranks) plans in well under a second (bench: sim_routing_bench).
//  - balanced in counts mode is deterministic: every expert gets T*top_k/experts copies from every source
//    rank (remainders rotate over experts by source rank, layer and microbatch) and distinct counts are the
//    rounded expectations of uniform routing. In per_token mode it is uniform random top-k (what Megatron's
//    moe_router_force_load_balancing does: random router logits).
//
// Histogram file (CSV, '#' comments allowed): columns layer,expert,load — one row per (layer, expert) that
// has load; load = tokens (or any non-negative weight) the expert received in that layer; experts missing
// from a listed layer have load 0. A plan for a layer absent from the file is an InputError. In counts mode
// a rank's share of copies is exactly proportional to the loads; the dedup probabilities come from the
// Plackett-Luce model with the loads as weights.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

enum class RoutingSampling { counts, per_token };

// Measured expert loads per layer (histogram routing).
struct ExpertHistogram {
  std::string path;
  std::map<int, std::vector<double>> loads;  // layer -> load per expert (size = experts)
};

// Reads a layer,expert,load CSV. Throws InputError (file:line: column: value: expected ...) for bad rows,
// experts outside [0, experts), negative or non-finite loads, duplicate (layer, expert), or a layer whose
// loads sum to zero.
ExpertHistogram read_expert_histogram(const std::string& path, int experts);

struct RoutingSpec {
  RoutingKind kind = RoutingKind::balanced;
  double zipf_exponent = 0;          // zipf and group-limited popularity exponent s >= 0
  std::uint64_t seed = 1;            // root seed
  int experts = 0;                   // routed experts E
  int top_k = 0;                     // experts per token k <= E
  int ep_ranks = 0;                  // EP group size; divides E
  int ranks_per_node = 8;            // consecutive EP ranks per node; divides ep_ranks (or >= ep_ranks)
  std::int64_t tokens_per_rank = 0;  // tokens each EP rank routes per microbatch (seq*mb/tp with SP)
  int groups = 0;                    // group-limited: n_group (divides E)
  int topk_groups = 0;               // group-limited: topk_group in [1, groups]
  ExpertHistogram histogram;         // histogram kind
  RoutingSampling sampling = RoutingSampling::counts;
  int stats_tokens = 16384;  // counts mode: Monte Carlo tokens per layer for non-closed-form kinds
  // Counts mode: draw the distinct-token counts (LayerRouting::rank_tokens, node_tokens). The node-dedup
  // dispatchers (DeepEP) read them; NCCL's per-copy all-to-all does not, and skipping them halves a
  // skewed plan's draws. They come from their own stream, so the copies do not depend on this.
  bool dedup_counts = true;

  int nodes() const;  // nodes the EP group spans
  // Throws InputError naming the field for an inconsistent spec.
  void validate() const;
};

// The routing of one (layer, microbatch): matrices are row-major [src * columns + dst].
struct LayerRouting {
  int layer = 0;
  int microbatch = 0;
  std::uint64_t stream_seed = 0;  // derive_stream(seed, {routing_batch, layer, microbatch})
  int ep_ranks = 0;
  int ranks_per_node = 0;
  int nodes = 0;
  int experts = 0;
  int top_k = 0;
  std::int64_t tokens_per_rank = 0;
  std::vector<std::int64_t> copies;  // [src][dst rank]: (token, expert) copies
  // Empty when the spec's dedup_counts is false (counts mode).
  std::vector<std::int64_t> rank_tokens;    // [src][dst rank]: distinct tokens (rank-level dedup)
  std::vector<std::int64_t> node_tokens;    // [src][dst node]: distinct tokens (node-level dedup)
  std::vector<std::int64_t> expert_tokens;  // [expert]: copies received by each expert

  int node_of(int rank) const { return rank / ranks_per_node; }
  std::int64_t copy(int src, int dst) const {  // inline: the traffic matrices read every cell
    return copies[static_cast<std::size_t>(src * ep_ranks + dst)];
  }
  // logic_error when the plan has no distinct-token counts (RoutingSpec::dedup_counts false).
  std::int64_t rank_dedup(int src, int dst) const;
  std::int64_t node_dedup(int src, int node) const;
  // Copies received by `rank` (sum over sources) = tokens its grouped GEMM processes.
  std::int64_t received(int rank) const;
  std::int64_t hottest_rank_tokens() const;    // max over ranks of received()
  std::int64_t hottest_expert_tokens() const;  // max over experts
};

// Per-layer token statistics (counts mode). Same for every source rank: tokens are i.i.d.
struct LayerRoutingStats {
  std::vector<double> expert_share;  // expected copies per token to each expert (sums to top_k)
  std::vector<double> rank_share;    // expected copies per token to each rank (sums to top_k)
  std::vector<double> rank_hit;      // P(token has >= 1 expert on the rank)
  std::vector<double> node_hit;      // P(token has >= 1 expert on the node)
};

// Per-layer statistics are computed once and cached under a lock, so one planner may plan from several
// threads at once (plans do not depend on which planner or thread made them).
class RoutingPlanner {
 public:
  explicit RoutingPlanner(RoutingSpec spec);  // validates
  const RoutingSpec& spec() const { return spec_; }
  // Deterministic function of (spec, layer, microbatch). layer and microbatch >= 0.
  LayerRouting plan(int layer, int microbatch) const;
  // A key such that two (layer, microbatch) pairs with equal keys get plans equal in every count (copies,
  // rank_tokens, node_tokens, expert_tokens; the metadata layer, microbatch and stream_seed aside), so a
  // caller may reuse what it derived from one plan for the other. Balanced routing in counts mode only
  // (deterministic: the plan depends on (layer, microbatch) through the rotation of the remainder copies
  // alone, and not at all when T x top_k copies divide evenly over the experts); -1 for every other
  // kind or sampler (each plan is its own random draw) and where the rotation would overflow.
  std::int64_t count_class(int layer, int microbatch) const;
  // Expert popularity weights of a layer (before normalisation).
  std::vector<double> expert_weights(int layer) const;
  LayerRoutingStats layer_stats(int layer) const;
  // Computes and caches the statistics plan() reads for `layers` (the ones not cached yet), one layer per
  // task on up to `threads` threads: skewed routing's Plackett-Luce quadrature (zipf, histogram) or Monte
  // Carlo (group-limited) is ~0.5 ms a layer, and plan() computes a missing layer under the cache's lock,
  // so the pricing threads would otherwise take the layers one at a time. Plans are the same either way
  // (layer_stats is a function of the spec and the layer).
  void prepare_stats(const std::vector<int>& layers, int threads) const;

 private:
  const LayerRoutingStats& cached_stats(int layer) const;
  RoutingSpec spec_;
  mutable std::mutex stats_mutex_;  // guards stats_cache_ (std::map nodes do not move: references stay valid)
  mutable std::map<int, LayerRoutingStats> stats_cache_;
};

}  // namespace moetwin
