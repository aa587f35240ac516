// Token-dispatcher models (ARCHITECTURE.md "Dispatchers"): the cost of one A2A call — dispatch or combine
// of one MoE layer and microbatch — for nccl-alltoall, deepep-uccl, deepep-nvshmem and deepep-v2-gin.
// A registry (STYLE.md #7) gives one model per dispatcher with a name, a one-line description and a
// reference. Every term of a cost is named (A2aCost::terms) with units, and every constant is a catalog
// fact or a ParamSet entry (dispatcher_params.hpp) with bounds and a source.
//
// Engine seam: for each A2A the engine issues (forward dispatch, forward combine, and in backward the
// gradient of combine — dispatch-shaped — and of dispatch — combine-shaped; again under full recompute):
//   const A2aTraffic t = model.traffic(routing, token_bytes(hidden, fp8));   // per (layer, microbatch)
//   const A2aCost c = model.cost(t, A2aDirection::dispatch, hardware);
// c.rank_ns[r] is rank r's own communication time (the collective ends for everyone at c.duration_ns, the
// slowest rank), c.kernel_ns a separate HBM-bound permute/unpermute kernel on the compute stream (0 when
// fused into the dispatch kernel), c.sms the SMs the call occupies while it runs (compute overlapping it
// gets the remaining SMs). Bytes per link class are in c.nvlink_bytes / c.network_bytes.
//
// Network seam: leg times come from an A2aNetwork. The default is the closed form over the GPU's rails
// (per rank: max(bytes out, bytes in) / (rail bandwidth x efficiency), same for NVLink); a flow-level
// network model (topology/network_model.hpp) can implement A2aNetwork later without touching the models.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/time.hpp"
#include "moetwin/models/dispatcher_params.hpp"
#include "moetwin/models/traffic_matrix.hpp"

namespace moetwin {

enum class A2aDirection { dispatch, combine };
const char* to_string(A2aDirection direction);

// The hardware an A2A runs on.
struct DispatchHardware {
  InstanceSpec instance;
  GpuSpec gpu;
  int nodes = 1;
  // NCCL's P2P network chunk the run uses (the stack's, StackChoice::p2p_net_chunk_bytes), bytes. The
  // nccl-alltoall model is calibrated at nccl-tests' chunk (its `calibration_chunk_bytes`); a run at another
  // chunk pays its per-chunk cost for every chunk more (or saves it for every chunk fewer).
  double p2p_net_chunk_bytes = 512.0 * 1024.0;
  // A dispatch inside Megatron training: the alltoall dispatcher follows the tokens' all-to-all with the
  // routing probabilities' (probs_calls); the standalone benchmarks (`dispatch --bench`) have no such call.
  bool megatron_dispatch = false;
  // Host CPU work on this instance over the reference CPU the live-run terms were fitted on (sim's
  // host_time_factor: reference single-thread score / this CPU's). NCCL's per-chunk network P2P work
  // (net_chunk_s) runs in its proxy thread on the host and scales with it; 1 in the kernel benchmarks.
  double host_time_factor = 1;
  // SMs the run gives the dispatcher's normal kernels (0 = the record's `sms`): DeepEP's Buffer.num_sms,
  // the benchmarks' comm_sms column (ep-kernel-2026-09.csv: DeepEP v2 64, UCCL-EP and v1 20). The SMs
  // copy every byte the kernel sends (sm_write_bandwidth each) and, for DeepEP v2, open its queue pairs.
  int comm_sms = 0;
  // DeepEP v2 over NCCL GIN: EFA queue pairs (exclusive GIN contexts) per GPU the run allows, 0 = DeepEP's
  // own count (min(allocated gin_qps, SMs x 16 + 1), deep_ep/buffers/elastic.py); EP_EFA_MAX_QPS=2 (DeepEP
  // PR #612) caps it at 2.
  int gin_qps = 0;
  // NCCL's PXN (P2P_PXN_LEVEL 2, the default): a send to another node's GPU j leaves through the local GPU
  // j's NIC after an NVLink hop, on j's rail; off (NCCL_PXN_DISABLE=1), (G-1)/G of the sends cross rails
  // (models/rails.hpp).
  bool nccl_pxn = true;

  // EFA bandwidth with affinity to one GPU, per direction, bytes/s (nics_per_gpu x nic bandwidth).
  double rail_bandwidth() const;
  // GPUs of the instance's NVLink domain (catalog's nvlink_domain_gpus: the node, or 72 on an NVL72 tray).
  // The traffic a model receives already splits NVLink and network legs by its dispatcher's reach
  // (comm_cost.hpp a2a_nvlink_reach_gpus); `nodes` counts those groups.
  int nvlink_domain_gpus() const { return moetwin::nvlink_domain_gpus(instance); }
  static DispatchHardware from_catalog(const Catalog& catalog, const std::string& instance, int nodes);
};

struct LegTimes {
  double network_s = 0;  // seconds on the GPU's EFA rails
  double nvlink_s = 0;   // seconds on its NVLink ports
};

// Network seam for A2A legs.
class A2aNetwork {
 public:
  virtual ~A2aNetwork() = default;
  virtual std::string name() const = 0;
  // One entry per rank. Efficiencies are fractions of the raw link bandwidth the transport achieves.
  virtual std::vector<LegTimes> leg_times(const A2aTraffic& traffic, const DispatchHardware& hw,
                                          double network_efficiency, double nvlink_efficiency) const = 0;
};
// Closed form over per-GPU rails (no cross-rank contention beyond each GPU's own ports).
std::shared_ptr<const A2aNetwork> make_rail_closed_form_network();

struct A2aTerm {
  std::string name;  // e.g. "network", "proxy_messages"
  double seconds = 0;
  std::string what;  // one line: what it is
};

struct A2aCost {
  std::vector<TimeNs> rank_ns;  // per rank: its own communication time, ns
  TimeNs duration_ns = 0;       // slowest rank: when the collective call completes, ns
  TimeNs kernel_ns = 0;         // separate permute (dispatch) / unpermute (combine) kernel, ns; 0 if fused
  int sms = 0;                  // SMs occupied while the call runs
  double nvlink_bytes = 0;      // bytes over NVLink, all ranks
  double network_bytes = 0;     // bytes over EFA, all ranks
  int gating_rank = 0;          // rank that sets duration_ns
  // The handshake latency inside every rank's time (the model's "latency" term, the same for all ranks),
  // s: the part that does not grow with bytes or messages.
  double latency_s = 0;
  std::vector<LegTimes>
      rank_legs;               // per rank: seconds its EFA rails / NVLink port are busy (the models' legs)
  std::vector<A2aTerm> terms;  // the gating rank's terms (they combine as the model documents)
  std::vector<std::string> warnings;
};

class DispatcherModel {
 public:
  virtual ~DispatcherModel() = default;
  const std::string& name() const { return spec_.name; }
  const std::string& description() const { return spec_.description; }
  virtual std::string reference() const = 0;
  const DispatcherSpec& spec() const { return spec_; }
  const ParamSet& params() const { return params_; }
  void set_params(ParamSet params) { params_ = std::move(params); }

  // Dispatch-direction traffic of a routing plan under this dispatcher's semantics (per copy or node-dedup).
  virtual A2aTraffic traffic(const LayerRouting& routing, double bytes_per_token) const = 0;
  // Cost of one call. `traffic` is dispatch-direction; combine sends the same tokens back.
  virtual A2aCost cost(const A2aTraffic& traffic, A2aDirection direction,
                       const DispatchHardware& hw) const = 0;
  // The low-latency kernels' cost of one call (DeepEP test_low_latency.py), `traffic` per_copy_traffic of
  // its routing; nullopt for dispatchers without low-latency kernels or without the terms for them.
  virtual std::optional<A2aCost> low_latency_cost(const A2aTraffic&, A2aDirection,
                                                  const DispatchHardware&) const {
    return std::nullopt;
  }
  // Serial time one RDMA write costs this dispatcher's posting path on `hw`'s instance (per-write cost and
  // the in-flight window's wait, over the posting threads), s; 0 for NCCL's all-to-all (no such path).
  // The in-training DeepEP terms scale with it across instances (sim's workload builder).
  virtual double message_s(const DispatchHardware&) const { return 0; }
  // Validity limits: throws InputError for a scale the dispatcher cannot run, returns warnings otherwise.
  virtual std::vector<std::string> check(const DispatchHardware& hw, int ranks) const = 0;

 protected:
  DispatcherModel(DispatcherSpec spec, ParamSet params, std::shared_ptr<const A2aNetwork> network);
  const A2aNetwork& network() const { return *network_; }

 private:
  DispatcherSpec spec_;
  ParamSet params_;
  std::shared_ptr<const A2aNetwork> network_;
};

// The cost models a dispatcher record can choose, by its fields (not its name):
//   node_dedup = false, transport nccl -> per_copy_nccl: Megatron's alltoall dispatcher, NCCL grouped
//     send/recv of one copy per (token, expert) (NcclAlltoallModel);
//   node_dedup = true, transport cpu-proxy | host-proxy | gpu-initiated -> node_dedup_rdma: DeepEP's
//     kernels, one copy per destination node over RDMA then NVLink fan-out, the transport deciding who
//     posts the writes and at what cost (DeepEpModel).
// Other combinations throw InputError naming the record's transport.
enum class DispatcherModelKind { per_copy_nccl, node_dedup_rdma };
DispatcherModelKind dispatcher_model_kind(const DispatcherSpec& spec);
// The terms the chosen model reads; a record must define each ([[<name>.terms]]).
std::vector<std::string> required_dispatcher_terms(const DispatcherSpec& spec);
// The model for a catalog dispatcher record. `network` defaults to the rail closed form. Throws InputError
// for a combination of fields no model covers or a term the model needs that the record lacks.
std::unique_ptr<DispatcherModel> make_dispatcher_model(const DispatcherSpec& spec,
                                                       std::shared_ptr<const A2aNetwork> network = nullptr);
// True for a term of the low-latency kernels' per-destination split of a record (ll_peer_s: posting work
// per remote destination rank of a call; ll_per_message_s: the write cost once that work is split off).
// UCCL-EP's low-latency rows grow with the ranks a call reaches (docs/2026-12-07-uccl-ll-per-peer.md).
bool is_low_latency_split_term(const std::string& name);
// The record without those terms: the per-copy model of the low-latency kernels (one cost per write,
// per_message_s, and ll_latency_rounds). The in-training carry of DeepEP's terms across instances
// (dispatcher_cost.hpp) reads this view: with the split its ratios made the live fit worse out of sample
// (issue 54), so they stay the per-copy calibration's; the first low-latency calibration stage fits it.
DispatcherSpec per_copy_view(DispatcherSpec spec);
// True for dispatchers that send one copy per destination node (the DeepEP kernel design, over any
// transport); false for per-copy all-to-all.
bool dedups_by_node(const DispatcherSpec& spec);

}  // namespace moetwin
