#include "moetwin/models/dispatcher_moe_cost.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "moetwin/models/traffic_matrix.hpp"
#include "moetwin/topology/placement.hpp"
#include "moetwin/topology/shared_placement.hpp"

namespace moetwin {

RoutingSpec routing_spec_for(const Scenario& s) {
  const ParallelLayout& p = s.parallel;
  RoutingSpec spec;
  spec.kind = s.routing.kind;
  spec.zipf_exponent = s.routing.zipf_exponent;
  spec.seed = s.routing.seed;
  spec.experts = s.model.experts;
  spec.top_k = s.model.top_k;
  spec.ep_ranks = p.ep;
  // NVLink groups an EP group spans (Megatron order): nodes for a node-dedup dispatcher, NVLink domains for
  // NCCL's all-to-all and HybridEP (a2a_nvlink_reach_gpus); the plan's "node" is that group. The routing
  // plan puts EP rank k in group k / ranks_per_node, equal consecutive shares. The launcher places ranks in
  // order, so an EP group may fill its NVLink groups unequally (EP 64 over racks of 72 GPUs: 64 | 8 + 56 |
  // 16 + 48 | 24 + 40). Such a group is priced by its slowest domain: ranks_per_node is the greatest common
  // divisor of the EP size and every run of consecutive ranks in one NVLink group, over all EP groups. The
  // ranks of the smallest share (8 of 64 above) send (ep - share) / ep of their copies across domains
  // and receive from as many remote ranks, exactly as in the plan's shares of that size; every other rank
  // is priced with at least its true cross-domain bytes (and the node-dedup dispatchers with one copy per
  // share rather than per domain: an upper bound). Equal shares give the share size, as before.
  const int reach = a2a_nvlink_reach_gpus(s);
  const std::shared_ptr<const Placement> shared = shared_placement(p, s.instance.gpus, reach);
  const Placement& placement = *shared;
  int share = p.ep;
  for (const auto& group : placement.groups(GroupKind::ep)) {
    int run = 0;
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (k > 0 && placement.domain_of(group[k]) != placement.domain_of(group[k - 1])) {
        share = std::gcd(share, run);
        run = 0;
      }
      ++run;
    }
    share = std::gcd(share, run);
  }
  spec.ranks_per_node = std::max(1, share);
  spec.tokens_per_rank =
      static_cast<std::int64_t>(s.training.micro_batch) * s.training.seq_length / (p.tp * p.cp);
  // Only the node-dedup dispatchers read distinct-token counts (traffic_matrix.hpp).
  spec.dedup_counts = s.dispatcher.node_dedup;
  if (s.routing.kind == RoutingKind::group_limited) {
    spec.groups = s.model.router_groups;
    spec.topk_groups = s.model.router_topk_groups;
  }
  if (s.routing.kind == RoutingKind::histogram)
    spec.histogram = read_expert_histogram(s.routing.histogram_path, s.model.experts);
  return spec;
}

DispatcherMoeCost::DispatcherMoeCost(const Scenario& s)
    : planner_(routing_spec_for(s)), model_(make_dispatcher_model(s.dispatcher)) {
  hw_.instance = s.instance;
  hw_.gpu = s.gpu;
  hw_.nodes = planner_.spec().nodes();
  hw_.p2p_net_chunk_bytes = s.stack.p2p_net_chunk_bytes;
  hw_.megatron_dispatch = true;
  hw_.nccl_pxn = !s.stack.nccl.pxn_disable;
  // Combine is bf16 in every recipe; dispatch is FP8 (E4M3 + one fp32 scale per 128 channels) only with
  // DeepEP's FP8 dispatch, which Megatron's flex dispatcher uses when asked (training.fp8_dispatch) in an
  // FP8 run. The alltoall dispatcher sends bf16 copies whatever the recipe.
  bytes_per_token_ = token_bytes(s.model.hidden, false);
  const bool fp8_dispatch = s.training.fp8_dispatch && is_fp8(s.training.precision) &&
                            s.dispatcher.transport != DispatcherTransport::nccl;
  dispatch_bytes_per_token_ = token_bytes(s.model.hidden, fp8_dispatch);
  etp_ = s.parallel.etp;
  microbatches_ = std::max(1, s.training.microbatches(s.parallel));
  gpus_per_node_ = std::max(1, a2a_nvlink_reach_gpus(s));
  warnings_ = model_->check(hw_, s.parallel.ep);
}

DispatcherMoeCost::DispatcherMoeCost(const Scenario& s, const std::map<std::string, double>& model_params,
                                     double host_time_factor)
    : DispatcherMoeCost(s) {
  if (!(host_time_factor > 0)) throw std::logic_error("DispatcherMoeCost: host time factor <= 0");
  hw_.host_time_factor = host_time_factor;
  const std::string prefix = s.dispatcher.name + ".";
  ParamSet params = model_->params();
  bool changed = false;
  for (const auto& [key, value] : model_params) {
    if (key.rfind(prefix, 0) != 0) continue;
    params.set(key.substr(prefix.size()), value);
    changed = true;
  }
  if (changed) model_->set_params(std::move(params));
}

void DispatcherMoeCost::layer_costs(int layer, int microbatch, int ep_group, const std::vector<int>& ep_ranks,
                                    std::vector<MoeRankCost>& out) const {
  const RoutingSpec& spec = planner_.spec();
  if (static_cast<int>(ep_ranks.size()) != spec.ep_ranks)
    throw std::logic_error("DispatcherMoeCost: EP group size differs from the scenario's ep");
  // Shares of the plan's size never straddle two NVLink groups (routing_spec_for): a group spans at most
  // as many as the plan has shares.
  if (nodes_spanned(ep_ranks, gpus_per_node_) > spec.nodes())
    throw std::logic_error("DispatcherMoeCost: EP group spans more NVLink groups than its routing plan");
  // Distinct EP groups route distinct data: one data index per (group, microbatch).
  const int data = ep_group * microbatches_ + microbatch;
  const std::int64_t count_class = planner_.count_class(layer, data);
  if (count_class >= 0) {
    const std::lock_guard<std::mutex> lock(class_costs_mutex_);
    const auto hit = class_costs_.find(count_class);
    if (hit != class_costs_.end()) {
      out = hit->second;
      return;
    }
  }
  const LayerRouting routing = planner_.plan(layer, data);
  const A2aTraffic traffic = model_->traffic(routing, bytes_per_token_);
  const A2aCost dispatch =
      dispatch_bytes_per_token_ == bytes_per_token_
          ? model_->cost(traffic, A2aDirection::dispatch, hw_)
          : model_->cost(model_->traffic(routing, dispatch_bytes_per_token_), A2aDirection::dispatch, hw_);
  const A2aCost combine = model_->cost(traffic, A2aDirection::combine, hw_);
  out.assign(ep_ranks.size(), MoeRankCost{});
  for (std::size_t k = 0; k < ep_ranks.size(); ++k) {
    MoeRankCost& c = out[k];
    c.tokens = routing.received(static_cast<int>(k)) * etp_;
    // Per-rank times: the engine ends the call at the slowest member (= duration_ns).
    c.dispatch_ns = dispatch.rank_ns[k];
    c.combine_ns = combine.rank_ns[k];
    c.dispatch_latency_ns = std::min(c.dispatch_ns, to_ns(dispatch.latency_s));
    c.combine_latency_ns = std::min(c.combine_ns, to_ns(combine.latency_s));
    // The models report the gating rank's permute / unpermute kernel (0 when fused).
    c.permute_ns = dispatch.kernel_ns;
    c.unpermute_ns = combine.kernel_ns;
    c.sms = static_cast<std::uint16_t>(std::max(dispatch.sms, combine.sms));
    // Combine sends back what dispatch received.
    c.dispatch_remote_tokens = traffic.legs[k].network_tokens_out;
    c.combine_remote_tokens = traffic.legs[k].network_tokens_in;
    if (k < dispatch.rank_legs.size() && k < combine.rank_legs.size()) {
      c.dispatch_network_s = static_cast<float>(dispatch.rank_legs[k].network_s);
      c.dispatch_nvlink_s = static_cast<float>(dispatch.rank_legs[k].nvlink_s);
      c.combine_network_s = static_cast<float>(combine.rank_legs[k].network_s);
      c.combine_nvlink_s = static_cast<float>(combine.rank_legs[k].nvlink_s);
    }
  }
  if (count_class >= 0) {
    const std::lock_guard<std::mutex> lock(class_costs_mutex_);
    class_costs_.emplace(count_class, out);
  }
}

}  // namespace moetwin
