#include "moetwin/models/dispatcher_cost.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/dispatcher_moe_cost.hpp"

namespace moetwin {
namespace {

// The standard low-latency call (DeepEP test_low_latency.py: 128 tokens per rank, top-8, hidden 7168, FP8
// dispatch and BF16 combine) over 4 nodes of `instance`, copies spread evenly over the ranks.
A2aTraffic reference_ll_traffic(const InstanceSpec& instance, double bytes_per_token) {
  constexpr int kNodes = 4;
  constexpr std::int64_t kCopies = 128 * 8;
  const int rpn = std::max(1, instance.gpus);
  const int ranks = rpn * kNodes;
  A2aTraffic t;
  t.ranks = ranks;
  t.ranks_per_node = rpn;
  t.nodes = kNodes;
  t.bytes_per_token = bytes_per_token;
  RankLegs l;
  l.network_tokens_out = l.network_tokens_in = kCopies * (ranks - rpn) / ranks;
  const std::int64_t same_node = kCopies * (rpn - 1) / ranks;
  l.network_out = l.network_in = static_cast<double>(l.network_tokens_out) * bytes_per_token;
  l.nvlink_out = l.nvlink_in = static_cast<double>(same_node) * bytes_per_token;
  l.tokens = 128;
  l.copies_out = l.copies_in = kCopies;
  l.network_peers_out = l.network_peers_in = ranks - rpn;
  l.nvlink_peers_out = rpn - 1;
  t.legs.assign(static_cast<std::size_t>(ranks), l);
  return t;
}

// Time per remote token copy of the standard low-latency call (dispatch and combine) on `instance`: what
// pushing one copy through the dispatcher's posting path costs there, handshakes and bytes included (the
// quantity the instance's low-latency benchmarks measure; message_s alone is ill-conditioned where a call
// is handshake-bound). Falls back to message_s for a dispatcher without low-latency terms.
// 0 where the dispatcher's posting path does not run across nodes of `instance` (hybridep or deepep-ibgda on
// EFA: the gate keeps their EP groups inside one NVLink domain there, so no remote copy is ever posted).
double copy_cost_s(const DispatcherSpec& dispatcher, const InstanceSpec& instance) {
  if (!dispatcher.node_dedup || transport_refusal(dispatcher, instance)) return 0;
  DispatchHardware hw;
  hw.instance = instance;
  hw.gpu = Catalog::shared_default().gpu(instance.gpu);
  hw.nodes = 4;
  // The per-copy view (per_copy_view): without the low-latency kernels' per-destination split. Training's
  // normal kernels write to one RDMA peer per remote node (the same local index), not to every expert's
  // rank, and their per-node work is the live fit's own term (node_latency_s); and with the split the
  // carried ratios made the live fit worse out of sample (docs/2026-12-07-uccl-ll-per-peer.md).
  const auto model = make_dispatcher_model(per_copy_view(dispatcher));
  const A2aTraffic fp8 = reference_ll_traffic(instance, token_bytes(7168, true));
  const A2aTraffic bf16 = reference_ll_traffic(instance, token_bytes(7168, false));
  const std::optional<A2aCost> d = model->low_latency_cost(fp8, A2aDirection::dispatch, hw);
  const std::optional<A2aCost> c = model->low_latency_cost(bf16, A2aDirection::combine, hw);
  const auto remote = static_cast<double>(fp8.legs.front().network_tokens_out);
  if (!d || !c || !(remote > 0)) return model->message_s(hw);
  return static_cast<double>(d->duration_ns + c->duration_ns) * 1e-9 / (2 * remote);
}

}  // namespace

A2aTransfer a2a_transfer(const DispatcherFit& fit, const DispatcherSpec& dispatcher,
                         const InstanceSpec& instance) {
  A2aTransfer t;
  t.host_factor = fit.host_factor;
  t.reference_instance = fit.reference_instance;
  if (!dispatcher.node_dedup) return t;
  const Catalog& catalog = Catalog::shared_default();
  const auto ref = catalog.instances().find(fit.reference_instance);
  if (ref == catalog.instances().end()) return t;
  t.message_s = copy_cost_s(dispatcher, instance);
  // Its own terms were held at the reference instance only if it runs there (deepep-ibgda and hybridep do
  // not run across p6-b300's EFA nodes): else its relatives' median, as for a dispatcher without runs.
  const double own_reference = copy_cost_s(dispatcher, ref->second);
  if (fit.own_terms && own_reference > 0) {
    t.reference_message_s = own_reference;
  } else {
    std::vector<double> relatives;
    for (const std::string& name : fit.generic_sources) {
      const auto record = catalog.dispatchers().find(name);
      if (record == catalog.dispatchers().end() || !record->second.node_dedup) continue;
      if (const double r = copy_cost_s(record->second, ref->second); r > 0) relatives.push_back(r);
    }
    t.reference_message_s = relatives.empty() ? own_reference : median_of(std::move(relatives));
  }
  if (t.message_s > 0 && t.reference_message_s > 0) t.proxy_factor = t.message_s / t.reference_message_s;
  return t;
}

A2aFit transferred(A2aFit a2a, const A2aTransfer& transfer) {
  a2a.node_latency_s *= transfer.proxy_factor;
  a2a.remote_token_s *= transfer.proxy_factor;
  a2a.latency_s *= transfer.host_factor;
  return a2a;
}

std::string A2aTransfer::describe(const std::string& terms_label, const std::string& instance) const {
  std::string s = terms_label + " in-training terms";
  if (message_s > 0) {
    s += "; on " + instance + " per-node and per-token terms x" + format_fixed(proxy_factor, 2) +
         " (one token copy through its posting path " + format_fixed(message_s * 1e6, 2) + " us vs " +
         format_fixed(reference_message_s * 1e6, 2) + " us on " + reference_instance +
         ", from the instances' low-latency kernel benchmarks)";
  }
  s += ", per-call x" + format_fixed(host_factor, 2) + " (host CPU)";
  return s;
}

std::shared_ptr<const MoeCostModel> dispatcher_mechanism(const Scenario& s, const DispatcherFit& fit) {
  return std::make_shared<DispatcherMoeCost>(s, fit.model_params, fit.host_factor);
}

DispatcherCost dispatcher_cost(const Scenario& s, const DispatcherFit& fit,
                               std::shared_ptr<const MoeCostModel> mechanism) {
  DispatcherCost out;
  out.moe = std::move(mechanism);
  // The dispatcher's in-training terms carried from the reference instance (and CPU) to this one by the
  // mechanisms they stand for (a2a_transfer).
  const A2aTransfer transfer = a2a_transfer(fit, s.dispatcher, s.instance);
  A2aFit a2a = transferred(fit.terms, transfer);
  out.source = transfer.describe(fit.own_terms ? "own fitted" : "generic (no runs of it)", s.instance.name);
  a2a.time_scale *= fit.stack_scale;
  if (!(a2a.time_scale > 0) || !(a2a.latency_s >= 0) || !(a2a.per_copy_s >= 0) || !(a2a.fill_tokens >= 0) ||
      !(a2a.node_latency_s >= 0) || !(a2a.remote_token_s >= 0))
    throw std::logic_error(
        "dispatcher_cost: A2A time scale must be > 0, latency, per-copy time, fill, node latency, "
        "remote-token time >= 0");
  if (a2a.time_scale != 1 || a2a.latency_s != 0 || a2a.per_copy_s != 0 || a2a.fill_tokens != 0 ||
      a2a.node_latency_s != 0 || a2a.remote_token_s != 0)
    out.moe = std::make_shared<ScaledMoeCost>(out.moe, a2a.time_scale, a2a.latency_s, a2a.per_copy_s,
                                              a2a_fill_geometry(s, a2a.fill_tokens), a2a.node_latency_s,
                                              a2a.remote_token_s);
  return out;
}

}  // namespace moetwin
