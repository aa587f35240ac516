#include "moetwin/topology/placement.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

constexpr std::size_t kKinds = std::size(kAllGroupKinds);

std::size_t slot(GroupKind kind) {
  return static_cast<std::size_t>(kind);
}

// Megatron's generate_masked_orthogonal_rank_groups: `sizes` fastest first; dims with mask[i] vary
// inside a group, the others index the groups. Both enumerations are fastest-first, so members come
// out ascending and groups in Megatron's order.
std::vector<std::vector<int>> masked_groups(const std::array<int, 4>& sizes,
                                            const std::array<bool, 4>& mask) {
  std::array<int, 4> stride{};
  int s = 1;
  for (std::size_t i = 0; i < 4; ++i) {
    stride[i] = s;
    s *= sizes[i];
  }
  std::vector<std::size_t> in, out;
  int group_size = 1, groups = 1;
  for (std::size_t i = 0; i < 4; ++i) {
    if (mask[i]) {
      in.push_back(i);
      group_size *= sizes[i];
    } else {
      out.push_back(i);
      groups *= sizes[i];
    }
  }
  std::vector<std::vector<int>> result(static_cast<std::size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    int base = 0, rem = g;
    for (std::size_t d : out) {
      base += (rem % sizes[d]) * stride[d];
      rem /= sizes[d];
    }
    auto& members = result[static_cast<std::size_t>(g)];
    for (int m = 0; m < group_size; ++m) {
      int r = base, mrem = m;
      for (std::size_t d : in) {
        r += (mrem % sizes[d]) * stride[d];
        mrem /= sizes[d];
      }
      members.push_back(r);
    }
  }
  return result;
}

void require_positive(int value, const char* key) {
  if (value < 1) throw InputError(InputLocation{"layout", 0}, key, std::to_string(value), "expected >= 1");
}

}  // namespace

const char* to_string(GroupKind kind) {
  switch (kind) {
    case GroupKind::tp:
      return "tp";
    case GroupKind::cp:
      return "cp";
    case GroupKind::dp:
      return "dp";
    case GroupKind::pp:
      return "pp";
    case GroupKind::ep:
      return "ep";
    case GroupKind::etp:
      return "etp";
    case GroupKind::edp:
      return "edp";
    case GroupKind::embedding:
      return "embedding";
  }
  return "unknown";
}

GroupKind parse_group_kind(const std::string& text, const InputLocation& where) {
  for (GroupKind k : kAllGroupKinds) {
    if (text == to_string(k)) return k;
  }
  throw InputError(where, "group", text, "expected one of tp, cp, dp, pp, ep, etp, edp, embedding");
}

Placement::Placement(const ParallelLayout& layout, int gpus_per_node, int domain_gpus)
    : layout_(layout),
      gpus_per_node_(gpus_per_node),
      domain_gpus_(domain_gpus > 0 ? domain_gpus : gpus_per_node) {
  require_positive(layout.tp, "tp");
  require_positive(layout.cp, "cp");
  require_positive(layout.dp, "dp");
  require_positive(layout.pp, "pp");
  require_positive(layout.ep, "ep");
  require_positive(layout.etp, "etp");
  require_positive(gpus_per_node, "gpus_per_node");
  if (domain_gpus_ % gpus_per_node != 0) {
    throw InputError(InputLocation{"layout", 0}, "nvlink_domain_gpus", std::to_string(domain_gpus_),
                     "expected a multiple of the GPUs per node (" + std::to_string(gpus_per_node) + ")");
  }
  const int stage = layout.tp * layout.cp * layout.dp;
  if (stage % (layout.ep * layout.etp) != 0) {
    throw InputError(InputLocation{"layout", 0}, "ep*etp", std::to_string(layout.ep * layout.etp),
                     "expected a divisor of tp*cp*dp = " + std::to_string(stage) +
                         " (experts are carved from the ranks of one pipeline stage)");
  }
  world_ = layout.world();
  edp_ = stage / (layout.ep * layout.etp);
  build();
}

Placement::Placement(const Scenario& scenario)
    : Placement(scenario.parallel, scenario.instance.gpus, nvlink_domain_gpus(scenario.instance)) {
  if (world_ != scenario.gpus()) {
    throw InputError(InputLocation{scenario.source, 0}, "parallel", "tp*cp*dp*pp = " + std::to_string(world_),
                     "expected nodes * gpus = " + std::to_string(scenario.gpus()));
  }
}

void Placement::build() {
  const ParallelLayout& l = layout_;
  const std::array<int, 4> dense{l.tp, l.cp, l.dp, l.pp};
  const std::array<int, 4> expert{l.etp, l.ep, edp_, l.pp};
  groups_.assign(kKinds, {});
  groups_[slot(GroupKind::tp)] = masked_groups(dense, {true, false, false, false});
  groups_[slot(GroupKind::cp)] = masked_groups(dense, {false, true, false, false});
  groups_[slot(GroupKind::dp)] = masked_groups(dense, {false, false, true, false});
  groups_[slot(GroupKind::pp)] = masked_groups(dense, {false, false, false, true});
  groups_[slot(GroupKind::etp)] = masked_groups(expert, {true, false, false, false});
  groups_[slot(GroupKind::ep)] = masked_groups(expert, {false, true, false, false});
  groups_[slot(GroupKind::edp)] = masked_groups(expert, {false, false, true, false});
  auto& emb = groups_[slot(GroupKind::embedding)];
  for (const auto& pipe : groups_[slot(GroupKind::pp)]) {
    if (pipe.size() > 1) {
      emb.push_back({pipe.front(), pipe.back()});
    } else {
      emb.push_back({pipe.front()});
    }
  }
  index_.assign(kKinds, std::vector<int>(static_cast<std::size_t>(world_), -1));
  for (std::size_t k = 0; k < kKinds; ++k) {
    for (std::size_t g = 0; g < groups_[k].size(); ++g) {
      for (int r : groups_[k][g]) index_[k][static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
  }
}

void Placement::check_rank(int rank) const {
  if (rank < 0 || rank >= world_) throw std::out_of_range("Placement: rank " + std::to_string(rank));
}

int Placement::node_of(int rank) const {
  check_rank(rank);
  return rank / gpus_per_node_;
}

int Placement::domain_of(int rank) const {
  check_rank(rank);
  return rank / domain_gpus_;
}

RankCoord Placement::coord(int rank) const {
  check_rank(rank);
  const ParallelLayout& l = layout_;
  RankCoord c;
  int r = rank;
  c.tp = r % l.tp;
  r /= l.tp;
  c.cp = r % l.cp;
  r /= l.cp;
  c.dp = r % l.dp;
  c.pp = r / l.dp;
  r = rank;
  c.etp = r % l.etp;
  r /= l.etp;
  c.ep = r % l.ep;
  r /= l.ep;
  c.edp = r % edp_;
  return c;
}

int Placement::dense_rank(int tp, int cp, int dp, int pp) const {
  const ParallelLayout& l = layout_;
  if (tp < 0 || tp >= l.tp || cp < 0 || cp >= l.cp || dp < 0 || dp >= l.dp || pp < 0 || pp >= l.pp) {
    throw std::out_of_range("Placement: dense coordinate");
  }
  return tp + l.tp * (cp + l.cp * (dp + l.dp * pp));
}

int Placement::expert_rank(int etp, int ep, int edp, int pp) const {
  const ParallelLayout& l = layout_;
  if (etp < 0 || etp >= l.etp || ep < 0 || ep >= l.ep || edp < 0 || edp >= edp_ || pp < 0 || pp >= l.pp) {
    throw std::out_of_range("Placement: expert coordinate");
  }
  return etp + l.etp * (ep + l.ep * (edp + edp_ * pp));
}

const std::vector<std::vector<int>>& Placement::groups(GroupKind kind) const {
  return groups_[slot(kind)];
}

int Placement::group_index(GroupKind kind, int rank) const {
  check_rank(rank);
  return index_[slot(kind)][static_cast<std::size_t>(rank)];
}

const std::vector<int>& Placement::group_of(GroupKind kind, int rank) const {
  const int g = group_index(kind, rank);
  if (g < 0) {
    throw std::out_of_range("Placement: rank " + std::to_string(rank) + " is in no " + to_string(kind) +
                            " group");
  }
  return groups_[slot(kind)][static_cast<std::size_t>(g)];
}

std::vector<int> Placement::nodes_of(const std::vector<int>& ranks) const {
  std::set<int> nodes;
  for (int r : ranks) nodes.insert(node_of(r));
  return {nodes.begin(), nodes.end()};
}

int Placement::nodes_spanned(GroupKind kind, int rank) const {
  return static_cast<int>(nodes_of(group_of(kind, rank)).size());
}

int Placement::max_nodes_spanned(GroupKind kind) const {
  int best = 0;
  for (const auto& g : groups(kind)) best = std::max(best, static_cast<int>(nodes_of(g).size()));
  return best;
}

std::vector<int> Placement::domains_of(const std::vector<int>& ranks) const {
  std::set<int> domains;
  for (int r : ranks) domains.insert(domain_of(r));
  return {domains.begin(), domains.end()};
}

int Placement::domains_spanned(GroupKind kind, int rank) const {
  return static_cast<int>(domains_of(group_of(kind, rank)).size());
}

int Placement::max_domains_spanned(GroupKind kind) const {
  int best = 0;
  for (const auto& g : groups(kind)) best = std::max(best, static_cast<int>(domains_of(g).size()));
  return best;
}

std::vector<GroupRef> Placement::groups_on_nic(int node, int nic, int nics_per_gpu) const {
  if (nics_per_gpu < 1 || nic < 0 || nic >= gpus_per_node_ * nics_per_gpu) {
    throw std::out_of_range("Placement: NIC " + std::to_string(nic));
  }
  const int rank = node * gpus_per_node_ + nic / nics_per_gpu;
  check_rank(rank);
  std::vector<GroupRef> refs;
  for (GroupKind k : kAllGroupKinds) {
    const int g = group_index(k, rank);
    if (g < 0) continue;
    if (domains_of(groups(k)[static_cast<std::size_t>(g)]).size() > 1) refs.push_back(GroupRef{k, g});
  }
  return refs;
}

bool Placement::kinds_share_nics(GroupKind a, GroupKind b) const {
  // A NIC serves one GPU, so two kinds share a NIC exactly when some rank belongs to a multi-domain group
  // of each kind (inside a domain the traffic stays on NVLink).
  for (int r = 0; r < world_; ++r) {
    const int ga = group_index(a, r), gb = group_index(b, r);
    if (ga < 0 || gb < 0) continue;
    if (domains_of(groups(a)[static_cast<std::size_t>(ga)]).size() > 1 &&
        domains_of(groups(b)[static_cast<std::size_t>(gb)]).size() > 1) {
      return true;
    }
  }
  return false;
}

}  // namespace moetwin
