// A2A traffic per rank and link class; see traffic_matrix.hpp.
#include "moetwin/models/traffic_matrix.hpp"

#include <algorithm>
#include <stdexcept>

namespace moetwin {
namespace {

std::size_t idx(int i) {
  return static_cast<std::size_t>(i);
}

// FP8 dispatch carries one float32 scale per 128-element block (DeepEP per-token, per-128-channel FP8).
constexpr double kFp8ScaleBytesPerElement = 4.0 / 128.0;

A2aTraffic empty_traffic(const LayerRouting& r, double bytes_per_token) {
  if (!(bytes_per_token > 0)) throw std::invalid_argument("A2A traffic: bytes_per_token must be > 0");
  A2aTraffic t;
  t.ranks = r.ep_ranks;
  t.ranks_per_node = r.ranks_per_node;
  t.nodes = r.nodes;
  t.bytes_per_token = bytes_per_token;
  t.legs.assign(idx(r.ep_ranks), RankLegs{});
  for (int src = 0; src < r.ep_ranks; ++src) {
    RankLegs& s = t.legs[idx(src)];
    s.tokens = r.tokens_per_rank;
    for (int dst = 0; dst < r.ep_ranks; ++dst) {
      s.copies_out += r.copy(src, dst);
      s.copies_in += r.copy(dst, src);
    }
  }
  return t;
}

}  // namespace

double token_bytes(int hidden, bool fp8) {
  const double h = static_cast<double>(hidden);
  return fp8 ? h * (1.0 + kFp8ScaleBytesPerElement) : h * 2.0;
}

double A2aTraffic::total_network_bytes() const {
  double sum = 0;
  for (const auto& l : legs) sum += l.network_out;
  return sum;
}

double A2aTraffic::total_nvlink_bytes() const {
  double sum = 0;
  for (const auto& l : legs) sum += l.nvlink_out;
  return sum;
}

double A2aTraffic::max_network_bytes() const {
  double best = 0;
  for (const auto& l : legs) best = std::max({best, l.network_out, l.network_in});
  return best;
}

A2aTraffic per_copy_traffic(const LayerRouting& r, double bytes_per_token) {
  A2aTraffic t = empty_traffic(r, bytes_per_token);
  for (int src = 0; src < r.ep_ranks; ++src) {
    RankLegs& s = t.legs[idx(src)];
    for (int dst = 0; dst < r.ep_ranks; ++dst) {
      const std::int64_t c = r.copy(src, dst);
      if (dst == src || c == 0) continue;
      const double bytes = static_cast<double>(c) * bytes_per_token;
      RankLegs& d = t.legs[idx(dst)];
      if (r.node_of(src) == r.node_of(dst)) {
        s.nvlink_out += bytes;
        d.nvlink_in += bytes;
        ++s.nvlink_peers_out;
      } else {
        s.network_out += bytes;
        d.network_in += bytes;
        s.network_tokens_out += c;
        d.network_tokens_in += c;
        ++s.network_peers_out;
        ++d.network_peers_in;
      }
    }
  }
  return t;
}

A2aTraffic node_dedup_traffic(const LayerRouting& r, double bytes_per_token) {
  A2aTraffic t = empty_traffic(r, bytes_per_token);
  const int rpn = r.ranks_per_node;
  for (int src = 0; src < r.ep_ranks; ++src) {
    RankLegs& s = t.legs[idx(src)];
    const int local = src % rpn;
    // RDMA leg: once per destination node, to the same local index (same rail) there.
    for (int n = 0; n < r.nodes; ++n) {
      const std::int64_t tokens = r.node_dedup(src, n);
      s.counted_rdma += static_cast<double>(tokens) * bytes_per_token;
      if (n == r.node_of(src) || tokens == 0) continue;
      const int forwarder = n * rpn + local;
      if (forwarder >= r.ep_ranks)
        throw std::logic_error("node_dedup_traffic: EP group does not fill its nodes");
      const double bytes = static_cast<double>(tokens) * bytes_per_token;
      s.network_out += bytes;
      t.legs[idx(forwarder)].network_in += bytes;
      s.network_tokens_out += tokens;
      t.legs[idx(forwarder)].network_tokens_in += tokens;
      ++t.legs[idx(forwarder)].network_peers_in;
      ++s.network_peers_out;
    }
    // NVLink leg: the forwarder on each destination node sends the token once to each destination GPU.
    for (int dst = 0; dst < r.ep_ranks; ++dst) {
      const std::int64_t tokens = r.rank_dedup(src, dst);
      t.legs[idx(dst)].counted_nvlink += static_cast<double>(tokens) * bytes_per_token;
      const int forwarder = r.node_of(dst) * rpn + local;
      if (tokens == 0 || forwarder == dst) continue;
      const double bytes = static_cast<double>(tokens) * bytes_per_token;
      t.legs[idx(forwarder)].nvlink_out += bytes;
      t.legs[idx(dst)].nvlink_in += bytes;
    }
  }
  for (int f = 0; f < r.ep_ranks; ++f) {
    int peers = 0;
    const int n = r.node_of(f);
    for (int dst = n * rpn; dst < std::min(r.ep_ranks, (n + 1) * rpn); ++dst) peers += dst != f ? 1 : 0;
    t.legs[idx(f)].nvlink_peers_out = peers;
  }
  return t;
}

A2aTraffic uniform_alltoall_traffic(int ranks, int ranks_per_node, double bytes_per_rank) {
  if (ranks <= 0 || ranks_per_node <= 0 || !(bytes_per_rank > 0))
    throw std::invalid_argument("uniform_alltoall_traffic: bad arguments");
  A2aTraffic t;
  t.ranks = ranks;
  t.ranks_per_node = std::min(ranks_per_node, ranks);
  t.nodes = (ranks + t.ranks_per_node - 1) / t.ranks_per_node;
  t.bytes_per_token = bytes_per_rank / ranks;
  t.legs.assign(idx(ranks), RankLegs{});
  const double chunk = bytes_per_rank / ranks;
  for (int r = 0; r < ranks; ++r) {
    const int node = r / t.ranks_per_node;
    const int local_peers = std::min(ranks, (node + 1) * t.ranks_per_node) - node * t.ranks_per_node - 1;
    const int remote_peers = ranks - 1 - local_peers;
    RankLegs& l = t.legs[idx(r)];
    l.nvlink_out = l.nvlink_in = chunk * local_peers;
    l.network_out = l.network_in = chunk * remote_peers;
    l.network_peers_out = l.network_peers_in = remote_peers;
    l.nvlink_peers_out = local_peers;
    l.network_tokens_out = l.network_tokens_in = remote_peers;  // one message per peer
  }
  return t;
}

}  // namespace moetwin
