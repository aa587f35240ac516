// Placement: Megatron-Core's rank order, mapping every parallel coordinate to a global rank (= GPU id,
// torchrun order: node * gpus_per_node + local index) and every process group to its members.
//
// NVLink domains: ranks r1, r2 share NVLink iff r1 / domain_gpus == r2 / domain_gpus (consecutive blocks of
// domain_gpus GPUs in torchrun order; a job smaller than a domain uses part of one). On an 8-GPU node the
// domain is the node; on an NVL72 rack (InstanceSpec::nvlink_domain_gpus = 72) it is 18 trays of 4 GPUs
// (Megatron-Bridge's NVLINK_DOMAIN_SIZE=72, USE_MNNVL=1 on GB200/GB300: shared/design/
// nvl72-and-infiniband.md A2). What crosses a domain boundary goes over the NICs; per-node things (NICs,
// host CPU) stay per node.
//
// Megatron-Core 0.17 (megatron/core/parallel_state.py, initialize_model_parallel) builds two
// RankGenerators with the default order "tp-cp-ep-dp-pp", the first token varying fastest:
//   dense/attention side: RankGenerator(tp, ep=1, dp, pp, cp)
//       rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
//   expert side:          RankGenerator(tp=etp, ep, dp=edp, pp, cp=1), edp = tp*cp*dp / (etp*ep)
//       rank = etp_rank + etp * (ep_rank + ep * (edp_rank + edp * pp_rank))
// Both sides share pp_rank (the same pipeline stages). Groups are generated the way
// generate_masked_orthogonal_rank_groups does: members ascending, groups ordered by the linear index of
// the remaining coordinates (fastest first). The embedding group of a pipeline is its first and last
// stage (only the first when pp == 1).
#pragma once

#include <string>
#include <vector>

#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

enum class GroupKind { tp, cp, dp, pp, ep, etp, edp, embedding };

const char* to_string(GroupKind kind);
// "tp", "cp", "dp", "pp", "ep", "etp", "edp", "embedding"; throws InputError (listing them) otherwise.
GroupKind parse_group_kind(const std::string& text, const InputLocation& where);
inline constexpr GroupKind kAllGroupKinds[] = {GroupKind::tp,  GroupKind::cp,       GroupKind::dp,
                                               GroupKind::pp,  GroupKind::ep,       GroupKind::etp,
                                               GroupKind::edp, GroupKind::embedding};

// Coordinates of one rank on both sides.
struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;  // dense side
  int etp = 0, ep = 0, edp = 0;        // expert side (pp shared)
  friend bool operator==(const RankCoord&, const RankCoord&) = default;
};

struct GroupRef {
  GroupKind kind = GroupKind::tp;
  int index = 0;  // index into Placement::groups(kind)
  friend bool operator==(const GroupRef&, const GroupRef&) = default;
};

class Placement {
 public:
  // Throws InputError for sizes < 1, when etp * ep does not divide tp * cp * dp, or for a domain that is
  // not a multiple of the node. domain_gpus 0: the node is the NVLink domain.
  Placement(const ParallelLayout& layout, int gpus_per_node, int domain_gpus = 0);
  // The scenario's layout on its cluster (its instance's NVLink domain); also checks layout.world() ==
  // scenario.gpus().
  explicit Placement(const Scenario& scenario);

  const ParallelLayout& layout() const { return layout_; }
  int world() const { return world_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int nodes() const { return (world_ + gpus_per_node_ - 1) / gpus_per_node_; }
  int node_of(int rank) const;
  int domain_gpus() const { return domain_gpus_; }
  // NVLink domain of `rank` (rank / domain_gpus).
  int domain_of(int rank) const;
  // Whether two ranks share NVLink (same domain).
  bool same_domain(int a, int b) const { return domain_of(a) == domain_of(b); }

  RankCoord coord(int rank) const;
  int dense_rank(int tp, int cp, int dp, int pp) const;
  int expert_rank(int etp, int ep, int edp, int pp) const;

  // All groups of a kind, in Megatron's generation order; members ascending.
  const std::vector<std::vector<int>>& groups(GroupKind kind) const;
  // Index of the group of `kind` containing `rank` (embedding: -1 when the rank is in none).
  int group_index(GroupKind kind, int rank) const;
  // Members of the group of `kind` containing `rank` (std::out_of_range for embedding non-members).
  const std::vector<int>& group_of(GroupKind kind, int rank) const;
  const std::vector<int>& ep_group_of(int rank) const { return group_of(GroupKind::ep, rank); }

  // Distinct nodes of `ranks`, ascending.
  std::vector<int> nodes_of(const std::vector<int>& ranks) const;
  // Nodes the group of `kind` containing `rank` spans.
  int nodes_spanned(GroupKind kind, int rank) const;
  // Largest span over all groups of `kind`.
  int max_nodes_spanned(GroupKind kind) const;
  // The same in NVLink domains: what decides NVLink vs network legs.
  std::vector<int> domains_of(const std::vector<int>& ranks) const;
  int domains_spanned(GroupKind kind, int rank) const;
  int max_domains_spanned(GroupKind kind) const;

  // Groups whose network (inter-domain) traffic crosses NIC `nic` (node-level index) of `node`: the NIC
  // belongs to exactly one GPU (rail affinity, nics_per_gpu per GPU), so these are the groups that
  // contain that GPU's rank and span more than one NVLink domain. Ordered by kind then index.
  std::vector<GroupRef> groups_on_nic(int node, int nic, int nics_per_gpu) const;
  // Whether some NIC carries network traffic of a group of kind `a` and of a group of kind `b`
  // (e.g. EP all-to-all and DP reduce-scatter contending for the same rails).
  bool kinds_share_nics(GroupKind a, GroupKind b) const;

 private:
  void build();
  void check_rank(int rank) const;

  ParallelLayout layout_;
  int gpus_per_node_ = 0;
  int domain_gpus_ = 0;  // GPUs per NVLink domain, a multiple of gpus_per_node_
  int world_ = 0;
  int edp_ = 0;
  std::vector<std::vector<std::vector<int>>> groups_;  // by GroupKind
  std::vector<std::vector<int>> index_;                // by GroupKind, by rank -> group index or -1
};

}  // namespace moetwin
