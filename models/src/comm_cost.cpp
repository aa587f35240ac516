#include "moetwin/models/comm_cost.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "moetwin/catalog/dispatcher_gate.hpp"

namespace moetwin {

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_gather:
      return "all-gather";
    case CollectiveOp::reduce_scatter:
      return "reduce-scatter";
    case CollectiveOp::all_reduce:
      return "all-reduce";
    case CollectiveOp::all_to_all:
      return "all-to-all";
    case CollectiveOp::send_recv:
      return "send-recv";
  }
  return "?";
}

AlphaBetaComm::AlphaBetaComm(const InstanceSpec& instance, const GpuSpec& gpu, AlphaBetaParams params)
    : instance_(instance), gpu_(gpu), params_(params) {
  if (instance_.gpus < 1 || instance_.nic_bandwidth <= 0 || instance_.nics_per_gpu < 1 ||
      gpu_.nvlink_bandwidth <= 0) {
    throw std::logic_error("AlphaBetaComm: instance/GPU without link rates");
  }
}

double AlphaBetaComm::seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  const CommUsage u = usage(op, bytes, ranks);
  return u.latency_s + std::max(u.nvlink_s, u.network_s);
}

CommUsage AlphaBetaComm::usage(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  CommUsage u;
  u.known = true;
  const auto n = static_cast<double>(ranks.size());
  if (ranks.size() < 2 || bytes <= 0) return u;
  // Nodes spanned and the largest number of members on one node.
  std::map<int, int> per_node;
  for (int r : ranks) ++per_node[r / instance_.gpus];
  int g = 0;
  for (const auto& [node, count] : per_node) g = std::max(g, count);
  const bool one_node = per_node.size() == 1;
  const double nvl = gpu_.nvlink_bandwidth * params_.nvlink_efficiency;
  const double efa = instance_.nic_bandwidth * instance_.nics_per_gpu * params_.efa_efficiency;
  const double lat = one_node ? params_.nvlink_latency_s : instance_.base_latency_s;
  // The bytes of a ring or a pair go over NVLink inside one node, over the rails otherwise.
  const auto link = [&](double link_bytes) {
    if (one_node) {
      u.nvlink_s = link_bytes / nvl;
    } else {
      u.network_s = link_bytes / efa;
    }
  };
  switch (op) {
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      u.latency_s = (n - 1) * lat;
      link((n - 1) / n * bytes);
      break;
    case CollectiveOp::all_reduce:
      u.latency_s = 2 * (n - 1) * lat;
      link(2 * (n - 1) / n * bytes);
      break;
    case CollectiveOp::all_to_all:
      u.latency_s = lat;
      u.network_s = bytes * (n - g) / n / efa;
      u.nvlink_s = bytes * (g - 1) / n / nvl;
      u.network_flows = std::max(1, static_cast<int>(per_node.size()) - 1);
      u.nvlink_flows = std::max(1, g - 1);
      break;
    case CollectiveOp::send_recv:
      u.latency_s = lat;
      link(bytes);
      break;
  }
  return u;
}

BalancedMoeCost::BalancedMoeCost(const Scenario& s, std::shared_ptr<const CommCostModel> comm,
                                 const ComputeProfile& compute, std::uint16_t a2a_sms)
    : comm_(std::move(comm)) {
  const ParallelLayout& p = s.parallel;
  const std::int64_t tokens_per_rank =
      static_cast<std::int64_t>(s.training.micro_batch) * s.training.seq_length / (p.tp * p.cp);
  const std::int64_t copies = tokens_per_rank * s.model.top_k;
  a2a_bytes_ = static_cast<double>(copies) * s.model.hidden * 2.0;
  cost_.tokens = copies * p.etp;
  copies_per_rank_ = copies;
  // Permute reads and writes every copy's hidden vector once (bf16): 2 x copies x h x 2 bytes.
  if (!s.dispatcher.fused_permute) {
    const double bytes = 4.0 * static_cast<double>(copies) * s.model.hidden;
    cost_.permute_ns = to_ns(kernel_seconds(compute, OpClass::elementwise, 0, bytes));
    cost_.unpermute_ns = cost_.permute_ns;
  }
  cost_.sms = s.dispatcher.sms > 0 ? static_cast<std::uint16_t>(s.dispatcher.sms) : a2a_sms;
  // A plain all-to-all: copies to ranks of the same NVLink domain stay on NVLink.
  gpus_per_node_ = std::max(1, nvlink_domain_gpus(s.instance));
}

void BalancedMoeCost::layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                                  std::vector<MoeRankCost>& out) const {
  (void)layer, (void)microbatch, (void)ep_group;
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  if (ep_ranks != cached_ranks_) {
    MoeRankCost c = cost_;
    c.dispatch_ns = to_ns(comm_->seconds(CollectiveOp::all_to_all, a2a_bytes_, ep_ranks));
    c.combine_ns = c.dispatch_ns;
    const CommUsage u = comm_->usage(CollectiveOp::all_to_all, a2a_bytes_, ep_ranks);
    // The latency stays in the transfer part (dispatch_latency_ns 0): a fitted A2A time scale has always
    // multiplied this model's whole time (ScaledMoeCost).
    c.dispatch_network_s = c.combine_network_s = static_cast<float>(u.network_s);
    c.dispatch_nvlink_s = c.combine_nvlink_s = static_cast<float>(u.nvlink_s);
    // Balanced routing spreads every rank's copies evenly over the group: the share on other NVLink
    // domains (nodes on an 8-GPU instance) crosses the network, one copy each way (no node deduplication
    // in a plain all-to-all).
    std::map<int, int> per_node;
    for (int r : ep_ranks) ++per_node[r / gpus_per_node_];
    const auto n = static_cast<double>(ep_ranks.size());
    const auto copies = static_cast<double>(copies_per_rank_);
    cached_.assign(ep_ranks.size(), c);
    for (std::size_t k = 0; k < ep_ranks.size(); ++k) {
      const double remote = n - per_node[ep_ranks[k] / gpus_per_node_];
      const auto tokens = static_cast<std::int64_t>(std::llround(copies * remote / n));
      cached_[k].dispatch_remote_tokens = cached_[k].combine_remote_tokens = tokens;
    }
    cached_ranks_ = ep_ranks;
  }
  out = cached_;
}

ScaledCommCost::ScaledCommCost(std::shared_ptr<const CommCostModel> inner, double scale)
    : inner_(std::move(inner)), scale_(scale) {
  if (!inner_ || !(scale_ > 0)) throw std::logic_error("ScaledCommCost: null model or scale <= 0");
}

double ScaledCommCost::seconds(CollectiveOp op, double bytes, const std::vector<int>& ranks) const {
  return inner_->seconds(op, bytes, ranks) * scale_;
}

int a2a_nvlink_reach_gpus(const Scenario& s) {
  return nvlink_reach_gpus(s.dispatcher, s.instance);
}

int nodes_spanned(const std::vector<int>& ranks, int gpus_per_node) {
  if (gpus_per_node < 1) throw std::logic_error("nodes_spanned: gpus_per_node < 1");
  std::set<int> nodes;
  for (int r : ranks) nodes.insert(r / gpus_per_node);
  return static_cast<int>(nodes.size());
}

double A2aFillGeometry::seconds(const std::vector<int>& ep_ranks) const {
  if (tokens_per_peer <= 0 || ep_ranks.size() < 2) return 0;
  if (gpus_per_node < 1 || !(hidden > 0) || !(bytes_per_element > 0) || !(inter_node_bandwidth > 0) ||
      !(intra_node_bandwidth > 0))
    throw std::logic_error("A2aFillGeometry: fill without hidden size, element size or link rates");
  const double bw = nodes_spanned(ep_ranks, gpus_per_node) == 1 ? intra_node_bandwidth : inter_node_bandwidth;
  const auto peers = static_cast<double>(ep_ranks.size() - 1);
  return tokens_per_peer * peers * hidden * bytes_per_element / bw;
}

A2aFillGeometry a2a_fill_geometry(const Scenario& s, double tokens_per_peer) {
  A2aFillGeometry g;
  g.tokens_per_peer = tokens_per_peer;
  g.hidden = static_cast<double>(s.model.hidden);
  g.bytes_per_element = 2;  // bf16 (BalancedMoeCost and the dispatcher models move bf16 copies)
  g.gpus_per_node = a2a_nvlink_reach_gpus(s);
  g.inter_node_bandwidth = s.instance.nic_bandwidth * s.instance.nics_per_gpu;
  g.intra_node_bandwidth = s.gpu.nvlink_bandwidth;
  return g;
}

ScaledMoeCost::ScaledMoeCost(std::shared_ptr<const MoeCostModel> inner, double scale, double latency_s,
                             double per_copy_s, A2aFillGeometry fill, double node_latency_s,
                             double remote_token_s)
    : inner_(std::move(inner)),
      scale_(scale),
      latency_s_(latency_s),
      per_copy_s_(per_copy_s),
      fill_(fill),
      node_latency_s_(node_latency_s),
      remote_token_s_(remote_token_s) {
  if (!inner_ || !(scale_ > 0) || !(latency_s_ >= 0) || !(per_copy_s_ >= 0) ||
      !(fill_.tokens_per_peer >= 0) || !(node_latency_s_ >= 0) || !(remote_token_s_ >= 0))
    throw std::logic_error(
        "ScaledMoeCost: null model, scale <= 0, or a negative latency, per-copy time, fill, node latency or "
        "remote-token time");
  if (node_latency_s_ > 0 && fill_.gpus_per_node < 1)
    throw std::logic_error("ScaledMoeCost: a node latency without the GPUs per node");
}

void ScaledMoeCost::layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                                std::vector<MoeRankCost>& out) const {
  inner_->layer_costs(layer, microbatch, ep_group, ep_ranks, out);
  // Every member of the call waits for the same fill (one term per call, all ranks).
  // Every member of the group sees the same remote nodes: the group's nodes other than its own.
  const double node_s = node_latency_s_ > 0
                            ? node_latency_s_ * std::max(0, nodes_spanned(ep_ranks, fill_.gpus_per_node) - 1)
                            : 0.0;
  const double per_call_s = latency_s_ + fill_.seconds(ep_ranks) + node_s;
  for (MoeRankCost& c : out) {
    const double copies_s = per_copy_s_ * static_cast<double>(c.tokens);
    // The fitted scale multiplies the transfer part only: a handshake latency is not a bandwidth.
    const auto scaled = [&](TimeNs total_ns, TimeNs latency_ns, std::int64_t remote_tokens) {
      const double transfer_s = static_cast<double>(total_ns - latency_ns) * 1e-9;
      const double remote_s = remote_token_s_ * static_cast<double>(remote_tokens);
      return to_ns(static_cast<double>(latency_ns) * 1e-9 + transfer_s * scale_ + per_call_s + copies_s +
                   remote_s);
    };
    c.dispatch_ns = scaled(c.dispatch_ns, c.dispatch_latency_ns, c.dispatch_remote_tokens);
    c.combine_ns = scaled(c.combine_ns, c.combine_latency_ns, c.combine_remote_tokens);
    const TimeNs per_call_ns = to_ns(per_call_s);
    c.dispatch_latency_ns = std::min(c.dispatch_ns, c.dispatch_latency_ns + per_call_ns);
    c.combine_latency_ns = std::min(c.combine_ns, c.combine_latency_ns + per_call_ns);
  }
}

}  // namespace moetwin
