// The four token-dispatcher models and their registry. See dispatcher_model.hpp for the seam; each model's
// cost formula is documented on its class.
#include "moetwin/models/dispatcher_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/models/rails.hpp"

namespace moetwin {
namespace {

// The transport's refusal for one A2A group of `ranks` on `hw`: a group inside one NVLink reach group
// (hw.nodes counts those groups in training; nodes in the standalone benchmarks) never uses the RDMA path.
std::optional<std::string> a2a_transport_refusal(const DispatcherSpec& spec, const DispatchHardware& hw,
                                                 int ranks) {
  return hw.nodes <= 1 ? transport_refusal(spec, hw.instance, ranks, ranks)
                       : transport_refusal(spec, hw.instance);
}

class RailClosedForm final : public A2aNetwork {
 public:
  std::string name() const override { return "rail-closed-form"; }
  std::vector<LegTimes> leg_times(const A2aTraffic& traffic, const DispatchHardware& hw,
                                  double network_efficiency, double nvlink_efficiency) const override {
    const double rail = hw.rail_bandwidth() * network_efficiency;
    const double nvl = hw.gpu.nvlink_bandwidth * nvlink_efficiency;
    if (!(rail > 0) || !(nvl > 0)) throw std::logic_error("A2A network: zero bandwidth");
    std::vector<LegTimes> out(traffic.legs.size());
    for (std::size_t r = 0; r < traffic.legs.size(); ++r) {
      const RankLegs& l = traffic.legs[r];
      out[r].network_s = std::max(l.network_out, l.network_in) / rail;
      out[r].nvlink_s = std::max(l.nvlink_out, l.nvlink_in) / nvl;
    }
    return out;
  }
};

// The legs on the NIC rails (rails.hpp): network time x the rail factor of the dispatcher's path mix; PXN's
// NVLink hop (sender to the local GPU of the destination's index, which receives as much as proxy) added to
// the NVLink leg.
std::vector<LegTimes> on_rails(std::vector<LegTimes> legs, const A2aTraffic& t, const DispatchHardware& hw,
                               const RailMix& mix, double nvlink_efficiency) {
  const double factor = rail_time_factor(mix, hw.instance);
  const double nvl = hw.gpu.nvlink_bandwidth * nvlink_efficiency;
  for (std::size_t r = 0; r < legs.size(); ++r) {
    legs[r].network_s *= factor;
    if (mix.pxn > 0 && nvl > 0) {
      const RankLegs& l = t.legs[r];
      const double hop = mix.pxn * std::max(l.network_out, l.network_in);
      legs[r].nvlink_s = std::max(l.nvlink_out + hop, l.nvlink_in + hop) / nvl;
    }
  }
  return legs;
}

// Fills the byte totals and picks the gating rank.
void finish(A2aCost& c, const A2aTraffic& t, const std::vector<double>& rank_s) {
  c.rank_ns.resize(rank_s.size());
  for (std::size_t r = 0; r < rank_s.size(); ++r) {
    c.rank_ns[r] = to_ns(rank_s[r]);
    if (c.rank_ns[r] > c.duration_ns) {
      c.duration_ns = c.rank_ns[r];
      c.gating_rank = static_cast<int>(r);
    }
  }
  c.nvlink_bytes = t.total_nvlink_bytes();
  c.network_bytes = t.total_network_bytes();
}

// nccl-alltoall. Per rank r (seconds):
//   t_r = latency_rounds x base_latency                      (handshake rounds, aws-ofi-nccl tuner hint)
//       + per_remote_peer_s x remote peers of r             (per send/recv pair to another node)
//       + max(network_s, nvlink_s)                           (one copy per (token, expert), legs overlap)
//       + net_chunk_s x host_time_factor x (chunks at the run's P2P chunk - at the calibration chunk)
//                                                            (per-chunk proxy work on the host CPU,
//                                                             serial per GPU)
// and on dispatch, probs_calls more calls of probs_bytes_per_copy per copy (Megatron's fp32 probabilities
// A2A): each latency + per-peer + its bytes over the legs + one chunk per remote peer.
// Chunks: per remote peer ceil(bytes to it / chunk), over the rank's network peers (per_copy_traffic's
// network bytes spread evenly over them; balanced routing makes them equal).
// Plus a separate permute (dispatch) / unpermute (combine) kernel: HBM bytes (read the tokens, write the
// copies, or the reverse) / (HBM bandwidth x catalog elementwise efficiency).
class NcclAlltoallModel final : public DispatcherModel {
 public:
  NcclAlltoallModel(DispatcherSpec spec, ParamSet params, std::shared_ptr<const A2aNetwork> net)
      : DispatcherModel(std::move(spec), std::move(params), std::move(net)) {}
  std::string reference() const override {
    return "Megatron-Core MoEAlltoAllTokenDispatcher; NCCL all-to-all (grouped p2p) over aws-ofi-nccl";
  }
  A2aTraffic traffic(const LayerRouting& routing, double bytes_per_token) const override {
    return per_copy_traffic(routing, bytes_per_token);
  }
  std::vector<std::string> check(const DispatchHardware& hw, int ranks) const override {
    if (ranks <= 0) throw InputError({"dispatch", 0}, "ranks", std::to_string(ranks), "> 0");
    if (const auto why = a2a_transport_refusal(spec(), hw, ranks))
      throw InputError({"dispatch", 0}, "dispatcher", spec().name,
                       concat({"a dispatcher that runs here (", *why, ")"}));
    return {};
  }
  A2aCost cost(const A2aTraffic& t, A2aDirection direction, const DispatchHardware& hw) const override {
    const ParamSet& p = params();
    // With PXN (the default) every remote send is on its rail, (G-1)/G of them one NVLink hop later;
    // without it (G-1)/G cross rails (rails.hpp).
    const std::vector<LegTimes> legs =
        on_rails(network().leg_times(t, hw, p.get("network_efficiency"), p.get("nvlink_efficiency")), t, hw,
                 rail_mix(spec(), false, hw.nccl_pxn, hw.instance.gpus), p.get("nvlink_efficiency"));
    const double latency = p.get("latency_rounds") * hw.instance.base_latency_s;
    const double chunk_s = p.get("net_chunk_s") * hw.host_time_factor;
    const double cal_chunk = p.get("calibration_chunk_bytes");
    const bool dispatch = direction == A2aDirection::dispatch;
    const double probs_calls = dispatch && hw.megatron_dispatch ? p.get("probs_calls") : 0.0;
    const double probs_share = t.bytes_per_token > 0 ? p.get("probs_bytes_per_copy") / t.bytes_per_token : 0;
    std::vector<double> rank_s(legs.size());
    std::vector<double> chunk_term(legs.size());
    std::vector<double> probs_term(legs.size());
    for (std::size_t r = 0; r < legs.size(); ++r) {
      const RankLegs& l = t.legs[r];
      const double peers = static_cast<double>(l.network_peers_out);
      const double per_peer = peers > 0 ? std::max(l.network_out, l.network_in) / peers : 0.0;
      const auto chunks = [&](double chunk) { return peers * std::ceil(per_peer / chunk); };
      // Fewer chunks than at calibration never beat the wire: the term is floored at 0 (the calibrated call).
      chunk_term[r] =
          chunk_s > 0 ? std::max(0.0, chunk_s * (chunks(hw.p2p_net_chunk_bytes) - chunks(cal_chunk))) : 0.0;
      const double transfer = std::max(legs[r].network_s, legs[r].nvlink_s);
      probs_term[r] = probs_calls * (latency + p.get("per_remote_peer_s") * peers + transfer * probs_share +
                                     (chunk_s > 0 && peers > 0 ? chunk_s * peers : 0.0));
      rank_s[r] = latency + p.get("per_remote_peer_s") * peers + (transfer + chunk_term[r]) + probs_term[r];
    }
    A2aCost c;
    finish(c, t, rank_s);
    c.rank_legs = legs;
    c.latency_s = latency * (1.0 + probs_calls);
    c.sms = static_cast<int>(p.get("sms"));
    const auto g = static_cast<std::size_t>(c.gating_rank);
    const RankLegs& gl = t.legs[g];
    const double copies = static_cast<double>(dispatch ? gl.copies_out : gl.copies_in);
    const auto eff = hw.gpu.efficiency.find("elementwise");
    const double hbm = hw.gpu.hbm_bandwidth * (eff != hw.gpu.efficiency.end() ? eff->second : 1.0);
    const double permute_s = (static_cast<double>(gl.tokens) + copies) * t.bytes_per_token / hbm;
    c.kernel_ns = to_ns(permute_s);
    c.terms = {
        {"latency", latency, "latency_rounds x instance base latency (handshake rounds)"},
        {"per_peer", p.get("per_remote_peer_s") * gl.network_peers_out, "per remote send/recv pair"},
        {"network", legs[g].network_s, "per-copy bytes over the GPU's EFA rails / (rail bw x efficiency)"},
        {"nvlink", legs[g].nvlink_s, "per-copy bytes to same-node GPUs / (NVLink bw x efficiency)"},
        {"net_chunks", chunk_term[g],
         "net_chunk_s x (network chunks at the run's P2P chunk - at the calibration chunk)"},
        {"probs_a2a", probs_term[g], "Megatron's fp32 probabilities all-to-all (dispatch only)"},
        {dispatch ? "permute" : "unpermute", permute_s,
         "separate kernel: (tokens + copies) x token bytes / (HBM bw x elementwise efficiency)"},
    };
    return c;
  }
};

// DeepEP normal (high-throughput) kernels over one of three transports. Per rank r (seconds):
//   t_r = latency_rounds x base_latency                           (notify/layout exchange + completion)
//       + max(network_s, nvlink_s, proxy_s)                       (pipelined legs of one fused kernel)
//   network_s: node-deduplicated RDMA bytes / (rail bw x rdma_efficiency, or combine_efficiency,
//              x efa_gen2_efficiency on EFA generation <= 2 NICs: see dispatcher_params.cpp)
//   nvlink_s:  rank-deduplicated forwarding bytes / (NVLink bw x nvlink_efficiency)
//   proxy_s:   RDMA writes (one per chunk_tokens tokens per remote node)
//              x (per_message_s + base_latency / inflight_writes) / posting threads
// Permute is fused (kernel_ns = 0); SMs from the catalog.
class DeepEpModel final : public DispatcherModel {
 public:
  DeepEpModel(DispatcherSpec spec, ParamSet params, std::shared_ptr<const A2aNetwork> net)
      : DispatcherModel(std::move(spec), std::move(params), std::move(net)) {}
  std::string reference() const override {
    switch (spec().transport) {
      case DispatcherTransport::cpu_proxy:
        return "UCCL-EP (uccl-project/uccl ep/): DeepEP API, GPU->CPU proxy FIFOs posting GPUDirect RDMA "
               "writes";
      case DispatcherTransport::host_proxy:
        return "deepseek-ai/DeepEP v1 internode normal kernels over NVSHMEM libfabric host proxy";
      case DispatcherTransport::gpu_initiated:
        if (spec().deepep_version == 2)
          return "DeepEP v2 ElasticBuffer over NCCL GIN (EFA-GDA, aws-ofi-nccl doc/gin-getting-started.md)";
        return spec().flex_backend == FlexBackend::hybridep
                   ? "NVIDIA HybridEP (DeepEP csrc/hybrid_ep): TMA copies inside the NVLink domain, RDMA "
                     "across"
                   : "deepseek-ai/DeepEP v1 internode normal kernels over NVSHMEM IBGDA (GPU-posted RDMA "
                     "writes)";
      case DispatcherTransport::nccl:
        break;
    }
    return "DeepEP";
  }
  A2aTraffic traffic(const LayerRouting& routing, double bytes_per_token) const override {
    return node_dedup_traffic(routing, bytes_per_token);
  }
  std::vector<std::string> check(const DispatchHardware& hw, int ranks) const override {
    const DispatcherSpec& s = spec();
    if (ranks <= 0) throw InputError({"dispatch", 0}, "ranks", std::to_string(ranks), "> 0");
    if (const auto why = a2a_transport_refusal(s, hw, ranks))
      throw InputError({"dispatch", 0}, "dispatcher", s.name,
                       concat({"a dispatcher that runs here (", *why, ")"}));
    if (s.max_ranks_normal > 0 && ranks > s.max_ranks_normal)
      throw InputError({"dispatch", 0}, "ranks", std::to_string(ranks),
                       "at most " + std::to_string(s.max_ranks_normal) + " ranks: " + s.name +
                           " normal kernels cap there (DeepEP v1: 20 RDMA peers x 8 GPUs)");
    std::vector<std::string> w;
    if (s.max_ranks_low_latency > 0 && ranks > s.max_ranks_low_latency)
      w.push_back(s.name + ": low-latency kernels cap at " + std::to_string(s.max_ranks_low_latency) +
                  " ranks on EFA; only the normal kernels (modelled here) run at " + std::to_string(ranks));
    if (s.needs_gpu_initiated_rdma && !hw.instance.gpu_initiated_rdma)
      w.push_back(s.name + ": " + hw.instance.name +
                  " has no EFA-GDA (GPU-initiated RDMA); modelled in proxy fallback mode (one proxy thread)");
    return w;
  }
  // One RDMA write's serial cost on the GPU's posting path, s: who posts it (CPU proxy threads, NVSHMEM's
  // host proxy thread, or the GPU itself) at that path's per-write cost on this instance, plus the wait
  // for a slot in the in-flight window (a write completes after about one network round trip: Little's
  // law), shared over the posting threads.
  double message_s(const DispatchHardware& hw) const override {
    const std::string& inst = hw.instance.name;
    const ParamSet& p = params();
    double per_message = p.get("per_message_s", inst);
    // A record without a fallback transport is refused on such an instance (check()).
    if (spec().transport == DispatcherTransport::gpu_initiated && !hw.instance.gpu_initiated_rdma &&
        spec().fallback_transport != spec().transport)
      per_message = p.get("fallback_per_message_s", inst);
    return posting_s(hw, per_message);
  }
  // One write at `per_message` s of posting work: (per_message + the in-flight window's wait) / threads.
  double posting_s(const DispatchHardware& hw, double per_message) const {
    double threads = 1;
    switch (spec().transport) {
      case DispatcherTransport::cpu_proxy:
        threads = std::max(1, spec().proxy_threads_per_gpu);
        break;
      case DispatcherTransport::host_proxy:
        threads = 1;  // NVSHMEM libfabric: one host proxy thread per PE
        break;
      case DispatcherTransport::gpu_initiated:
        break;
      case DispatcherTransport::nccl:
        throw std::logic_error("DeepEpModel with an nccl transport");
    }
    const double window_wait = hw.instance.base_latency_s / inflight_window(hw);
    return (per_message + window_wait) / threads;
  }

  // RDMA writes in flight per GPU. DeepEP v2 over GIN (a record with `writes_per_qp`): each queue pair (an
  // exclusive GIN context) holds at most writes_per_qp writes until the plugin's completion comes back, so
  // the window is min(inflight_writes, queue pairs x writes_per_qp): with DeepEP's 129 queue pairs the
  // GPU-side limit binds; capped at 2 (EP_EFA_MAX_QPS, PR #612) the queue pairs do. Queue pairs: the run's
  // (gin_qps), else min(allocated gin_qps, SMs x 16 + 1) in hybrid mode (deep_ep/buffers/elastic.py).
  double inflight_window(const DispatchHardware& hw) const {
    const std::string& inst = hw.instance.name;
    const ParamSet& p = params();
    const double window = p.get("inflight_writes", inst);
    if (!p.has("writes_per_qp")) return window;
    return std::min(window, gin_qps(hw) * p.get("writes_per_qp", inst));
  }
  double gin_qps(const DispatchHardware& hw) const {
    if (hw.gin_qps > 0) return hw.gin_qps;
    return std::min(params().get("gin_qps", hw.instance.name), 16.0 * sms(hw) + 1.0);
  }
  // The SMs the normal kernels run on: the run's, else the record's.
  int sms(const DispatchHardware& hw) const { return hw.comm_sms > 0 ? hw.comm_sms : spec().sms; }

  A2aCost cost(const A2aTraffic& t, A2aDirection direction, const DispatchHardware& hw) const override {
    const std::string& inst = hw.instance.name;
    const ParamSet& p = params();
    // First: a transport that cannot run on this instance is refused before any term is read.
    std::vector<std::string> warnings = check(hw, t.ranks);
    const bool combine = direction == A2aDirection::combine;
    const std::vector<LegTimes> legs =
        network().leg_times(t, hw, network_efficiency(hw, combine), p.get("nvlink_efficiency", inst));
    const double latency = p.get("latency_rounds", inst) * hw.instance.base_latency_s;
    const double chunk = p.get("chunk_tokens", inst);
    const double per_write = message_s(hw);
    // The kernel's SMs copy every byte it sends (to the RDMA buffers and over NVLink), each at
    // sm_write_bandwidth (a record without the term: not modelled).
    const double sm_rate = p.has("sm_write_bandwidth") ? sms(hw) * p.get("sm_write_bandwidth", inst) : 0.0;
    std::vector<double> rank_s(legs.size());
    std::vector<double> proxy(legs.size());
    std::vector<double> sm_copy(legs.size());
    for (std::size_t r = 0; r < legs.size(); ++r) {
      const RankLegs& l = t.legs[r];
      // Combine sends back what dispatch received.
      const double tokens = static_cast<double>(combine ? l.network_tokens_in : l.network_tokens_out);
      const double peers = static_cast<double>(combine ? l.network_peers_in : l.network_peers_out);
      const double messages = tokens > 0 ? std::ceil(tokens / chunk) + peers : 0.0;
      proxy[r] = messages * per_write;
      const double copied = combine ? l.network_in + l.nvlink_in : l.network_out + l.nvlink_out;
      sm_copy[r] = sm_rate > 0 ? copied / sm_rate : 0.0;
      rank_s[r] = latency + std::max({legs[r].network_s, legs[r].nvlink_s, proxy[r], sm_copy[r]});
    }
    A2aCost c;
    finish(c, t, rank_s);
    c.rank_legs = legs;
    c.latency_s = latency;
    c.sms = sms(hw);
    c.warnings = std::move(warnings);
    const auto g = static_cast<std::size_t>(c.gating_rank);
    c.terms = {
        {"latency", latency, "latency_rounds x instance base latency (notify + completion handshakes)"},
        {"network", legs[g].network_s,
         "node-deduplicated RDMA bytes / (rail bw x efficiency, x efa_gen2_efficiency on EFA gen <= 2)"},
        {"nvlink", legs[g].nvlink_s, "NVLink fan-out bytes / (NVLink bw x efficiency)"},
        {"proxy_messages", proxy[g],
         "RDMA writes x (per-message cost + round trip / in-flight window) / threads"},
        {"sm_copy", sm_copy[g], "bytes the kernel sends / (SMs x sm_write_bandwidth)"},
    };
    return c;
  }

  // Low-latency kernels (DeepEP test_low_latency.py; ll_latency_rounds): every (token, expert) copy for
  // another node is its own RDMA write to the expert's rank (no node deduplication, no chunking); copies
  // for the same node go over NVLink. Per rank: ll_latency_rounds x base latency + max(network bytes /
  // (rail bw x efficiency), NVLink bytes / (NVLink bw x efficiency), remote copies x write + remote peers
  // x ll_peer_s). A record with the per-destination split (UCCL-EP's CPU proxy: is_low_latency_split_term)
  // prices the posting path's work per destination rank of the call (ll_peer_s), serial with its writes,
  // and each write at ll_per_message_s (posting_s); a record without it prices each write at message_s
  // (per_message_s), the per-copy model (docs/2026-12-07-uccl-ll-per-peer.md). `t` is per_copy_traffic of
  // the call's routing.
  std::optional<A2aCost> low_latency_cost(const A2aTraffic& t, A2aDirection direction,
                                          const DispatchHardware& hw) const override {
    const std::string& inst = hw.instance.name;
    const ParamSet& p = params();
    if (!p.has("ll_latency_rounds")) return std::nullopt;
    check(hw, t.ranks);
    const bool combine = direction == A2aDirection::combine;
    // Each copy goes straight to the expert's rank, (G-1)/G of them across rails (rails.hpp), but the bytes
    // are priced rail-aligned: these calls are bound by their writes, whose fitted cost (per_message_s, from
    // the low-latency rows, all of that mix) holds the cross-rail loss. Pricing the bytes at
    // cross_rail_efficiency as well made the rows' medians worse (docs/2026-12-07-efa-rails-and-deepep.md).
    const std::vector<LegTimes> legs =
        network().leg_times(t, hw, network_efficiency(hw, combine), p.get("nvlink_efficiency", inst));
    const double latency = p.get("ll_latency_rounds", inst) * hw.instance.base_latency_s;
    const double per_write =
        p.has("ll_per_message_s") ? posting_s(hw, p.get("ll_per_message_s", inst)) : message_s(hw);
    const double per_peer = p.has("ll_peer_s") ? p.get("ll_peer_s", inst) : 0.0;
    std::vector<double> rank_s(legs.size());
    std::vector<double> writes(legs.size());
    std::vector<double> peer_work(legs.size());
    for (std::size_t r = 0; r < legs.size(); ++r) {
      const RankLegs& l = t.legs[r];
      writes[r] = static_cast<double>(combine ? l.network_tokens_in : l.network_tokens_out) * per_write;
      // Combine writes back to the ranks dispatch received from.
      peer_work[r] = static_cast<double>(combine ? l.network_peers_in : l.network_peers_out) * per_peer;
      rank_s[r] = latency + std::max({legs[r].network_s, legs[r].nvlink_s, writes[r] + peer_work[r]});
    }
    A2aCost c;
    finish(c, t, rank_s);
    c.rank_legs = legs;
    c.latency_s = latency;
    c.sms = sms(hw);
    const auto g = static_cast<std::size_t>(c.gating_rank);
    c.terms = {
        {"latency", latency, "ll_latency_rounds x instance base latency"},
        {"network", legs[g].network_s,
         "per-copy RDMA bytes / (rail bw x efficiency), (G-1)/G of them cross-rail (/ "
         "cross_rail_efficiency)"},
        {"nvlink", legs[g].nvlink_s, "same-node copies over NVLink / (NVLink bw x efficiency)"},
        {"proxy_messages", writes[g],
         "one RDMA write per remote (token, expert) copy x its posting cost (ll_per_message_s or "
         "per_message_s, + window wait, / threads)"},
        {"per_peer", peer_work[g],
         "remote destination ranks x ll_peer_s (posting path, serial with the writes)"},
    };
    return c;
  }

 private:
  // The RDMA leg's efficiency on this instance: rdma_efficiency (combine: combine_efficiency), x
  // efa_gen2_efficiency on EFA generation <= 2 NICs (dispatchers.toml says why). A record whose RDMA path
  // does not run on EFA (hybridep, deepep-ibgda: IBGDA only) has no such term: on an EFA instance the gate
  // (dispatcher_gate.hpp) lets it run only with its EP group inside one NVLink domain, where its RDMA leg
  // carries no bytes, so no EFA-generation loss applies to it.
  double network_efficiency(const DispatchHardware& hw, bool combine) const {
    const std::string& inst = hw.instance.name;
    const ParamSet& p = params();
    const bool efa_gen2 = hw.instance.fabric == Fabric::efa && hw.instance.efa_gen > 0 &&
                          hw.instance.efa_gen <= 2 && spec().runs_on(Fabric::efa);
    const double gen_factor = efa_gen2 ? p.get("efa_gen2_efficiency", inst) : 1.0;
    return p.get(combine ? "combine_efficiency" : "rdma_efficiency", inst) * gen_factor;
  }
};

}  // namespace

const char* to_string(A2aDirection direction) {
  return direction == A2aDirection::dispatch ? "dispatch" : "combine";
}

double DispatchHardware::rail_bandwidth() const {
  return static_cast<double>(instance.nics_per_gpu) * instance.nic_bandwidth;
}

DispatchHardware DispatchHardware::from_catalog(const Catalog& catalog, const std::string& instance,
                                                int nodes) {
  DispatchHardware hw;
  hw.instance = catalog.instance(instance);
  hw.gpu = catalog.gpu(hw.instance.gpu);
  if (nodes <= 0) throw InputError({"dispatch", 0}, "nodes", std::to_string(nodes), "> 0");
  hw.nodes = nodes;
  return hw;
}

std::shared_ptr<const A2aNetwork> make_rail_closed_form_network() {
  return std::make_shared<RailClosedForm>();
}

DispatcherModel::DispatcherModel(DispatcherSpec spec, ParamSet params,
                                 std::shared_ptr<const A2aNetwork> network)
    : spec_(std::move(spec)), params_(std::move(params)), network_(std::move(network)) {
  if (!network_) network_ = make_rail_closed_form_network();
}

DispatcherModelKind dispatcher_model_kind(const DispatcherSpec& spec) {
  if (spec.node_dedup) {
    if (spec.transport == DispatcherTransport::nccl) {
      throw InputError(
          {"dispatchers.toml", 0}, concat({"[", spec.name, "].transport"}), "\"nccl\"",
          "cpu-proxy, host-proxy or gpu-initiated for a node_dedup dispatcher (NCCL's all-to-all "
          "sends one copy per token and expert: node_dedup = false)");
    }
    return DispatcherModelKind::node_dedup_rdma;
  }
  if (spec.transport != DispatcherTransport::nccl) {
    throw InputError({"dispatchers.toml", 0}, concat({"[", spec.name, "].transport"}),
                     concat({"\"", to_string(spec.transport), "\""}),
                     "nccl for a dispatcher without node_dedup (the per-copy all-to-all model is NCCL's)");
  }
  return DispatcherModelKind::per_copy_nccl;
}

std::vector<std::string> required_dispatcher_terms(const DispatcherSpec& spec) {
  if (dispatcher_model_kind(spec) == DispatcherModelKind::per_copy_nccl) {
    return {"latency_rounds", "per_remote_peer_s",       "network_efficiency", "nvlink_efficiency",   "sms",
            "net_chunk_s",    "calibration_chunk_bytes", "probs_calls",        "probs_bytes_per_copy"};
  }
  std::vector<std::string> terms = {"latency_rounds",   "rdma_efficiency", "combine_efficiency",
                                    "per_message_s",    "inflight_writes", "chunk_tokens",
                                    "nvlink_efficiency"};
  // Read on EFA generation <= 2 NICs only, so only by a record that runs on EFA.
  if (spec.runs_on(Fabric::efa)) terms.push_back("efa_gen2_efficiency");
  // Read on instances without GPU-initiated RDMA, where a record with a fallback transport runs in it.
  if (spec.transport == DispatcherTransport::gpu_initiated && spec.fallback_transport != spec.transport)
    terms.push_back("fallback_per_message_s");
  return terms;
}

bool is_low_latency_split_term(const std::string& name) {
  return name == "ll_peer_s" || name == "ll_per_message_s";
}

DispatcherSpec per_copy_view(DispatcherSpec spec) {
  std::erase_if(spec.terms, [](const ModelParam& m) { return is_low_latency_split_term(m.name); });
  return spec;
}

bool dedups_by_node(const DispatcherSpec& spec) {
  return spec.node_dedup;
}

std::unique_ptr<DispatcherModel> make_dispatcher_model(const DispatcherSpec& spec,
                                                       std::shared_ptr<const A2aNetwork> network) {
  const DispatcherModelKind kind = dispatcher_model_kind(spec);
  ParamSet params = default_dispatcher_params(spec);
  for (const std::string& term : required_dispatcher_terms(spec)) {
    if (!params.has(term)) {
      throw InputError(
          {"dispatchers.toml", 0}, concat({"[[", spec.name, ".terms]]"}), term,
          concat({"a term named ", term, " (the ",
                  kind == DispatcherModelKind::per_copy_nccl ? "per-copy NCCL" : "node-dedup RDMA",
                  " model reads it; see the other records for its unit and source)"}));
    }
  }
  // The checked terms go to the model as they are (its constructor does not rebuild them).
  if (kind == DispatcherModelKind::per_copy_nccl)
    return std::make_unique<NcclAlltoallModel>(spec, std::move(params), std::move(network));
  return std::make_unique<DeepEpModel>(spec, std::move(params), std::move(network));
}

}  // namespace moetwin
