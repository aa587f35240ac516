// Dispatcher model parameters: defaults, bounds and sources. Values marked fitted were calibrated with
// `moetwin dispatch --bench sim/data/ep-kernel-bench.csv --fit` on the B300 and p5 normal-mode rows
// (16-64 ranks) of that file; the command also prints their leave-one-out error.
#include "moetwin/sim/dispatcher_params.hpp"

#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

const char* const kFitSource =
    "fitted: moetwin dispatch --bench sim/data/ep-kernel-bench.csv --fit (B300 + p5 normal rows, 16-64 "
    "ranks)";

ModelParam nvlink_efficiency() {
  return {
      "nvlink_efficiency",
      "fraction",
      0.80,
      0.3,
      1.0,
      false,
      "estimate: NCCL all-to-all inside one 8-GPU NVSwitch node reaches ~0.8 of the per-GPU NVLink "
      "bandwidth in public nccl-tests results; DeepEP intranode 8-rank tests reach 320 GB/s of 450 on H200 "
      "(ep-kernel-bench.csv)"};
}

ModelParam latency_rounds(double value, bool fitted) {
  return {"latency_rounds",
          "count",
          value,
          0.0,
          20.0,
          fitted,
          fitted ? kFitSource
                 : "not calibrated: borrowed from deepep-nvshmem; handshake rounds per call in units of the "
                   "instance's aws-ofi-nccl base latency"};
}

// The network-leg efficiency on EFA generation 1-2 NICs (p5: 4 x 100G gen-2 NICs per GPU), as a factor on
// rdma_efficiency / combine_efficiency. Why a byte-proportional factor (ep-kernel-bench.csv, 4096 tokens):
// on p5 UCCL-EP reaches 0.30-0.37 of its B300 GB/s in both directions where the rail ratio is 0.5. Its time
// over p5 line rate is 1.2 ms (dispatch) / 3.8 ms (combine) at 32 ranks and 1.9 / 4.6 ms at 64 ranks:
// 2.4-3.2x larger in combine, which moves 2x the bytes (BF16) between the same nodes with the same number
// of chunk writes. That rules out a per-call cost, a per-(remote node x NIC) connection/flush cost and a
// per-NIC message-rate limit (each the same in both directions) and leaves a loss per byte. NVSHMEM on the
// same p5 NICs reaches 0.45-0.54 of its B300 GB/s (no such loss), so the loss is in how UCCL-EP's CPU
// proxies drive the gen-2 NICs (its 4 proxy threads per GPU serve 4 NICs there, 2 on B300), not in the NICs'
// line rate. p5 is the only gen-2 and the only 4-NIC-per-GPU instance in the benchmarks, so the data cannot
// tell generation from NIC count apart; the factor is keyed on the catalog's efa_gen (gen 3-4: factor 1).
ModelParam efa_gen2_efficiency(double value, bool fitted, const std::string& unfitted_source = "") {
  return {"efa_gen2_efficiency",
          "fraction",
          value,
          0.3,
          1.0,
          fitted,
          fitted ? std::string(kFitSource) +
                       "; identified by the two p5 (EFA gen 2) rows: fraction of the rdma/combine efficiency "
                       "kept on EFA gen <= 2 NICs"
                 : unfitted_source + "; fraction of the rdma/combine efficiency kept on EFA gen <= 2 NICs"};
}

std::vector<ModelParam> deepep_params(double rounds, double rdma_eff, double combine_eff,
                                      double per_message_s, double inflight, bool fitted,
                                      const std::string& message_source, ModelParam gen2) {
  return {
      latency_rounds(rounds, fitted),
      {"rdma_efficiency", "fraction", rdma_eff, 0.3, 1.0, fitted,
       fitted ? kFitSource
              : "not calibrated (no EFA measurements): borrowed from deepep-nvshmem's calibration"},
      {"combine_efficiency", "fraction", combine_eff, 0.2, 1.0, fitted,
       fitted ? std::string(kFitSource) + "; combine reduces BF16 copies at the receiver"
              : "not calibrated (no EFA measurements): borrowed from deepep-nvshmem's calibration"},
      {"per_message_s", "s", per_message_s, 0.0, 2e-5, fitted, message_source},
      {"inflight_writes", "count", inflight, 1, 4096, fitted,
       fitted ? std::string(kFitSource) + "; RDMA writes a posting thread keeps outstanding"
              : "estimate: RDMA writes a posting thread keeps outstanding"},
      {"chunk_tokens", "tokens", 16, 1, 128, false,
       "DeepEP Buffer.get_dispatch_config/get_combine_config: num_max_rdma_chunked_send_tokens 16 (one RDMA "
       "write per chunk of consecutive tokens per channel)"},
      nvlink_efficiency(),
      std::move(gen2),
  };
}

}  // namespace

ParamSet::ParamSet(std::vector<ModelParam> params) : params_(std::move(params)) {}

const ModelParam* ParamSet::find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

double ParamSet::get(const std::string& name) const {
  const ModelParam* p = find(name);
  if (p == nullptr) throw std::logic_error("dispatcher parameter not defined: " + name);
  return p->value;
}

void ParamSet::set(const std::string& name, double value) {
  for (auto& p : params_) {
    if (p.name != name) continue;
    if (!(value >= p.min && value <= p.max))
      throw InputError({"dispatcher parameters", 0}, name, format_exact(value),
                       "a value in [" + format_exact(p.min) + ", " + format_exact(p.max) + "] " + p.unit);
    p.value = value;
    return;
  }
  std::string known;
  for (const auto& p : params_) known += (known.empty() ? "" : ", ") + p.name;
  throw InputError({"dispatcher parameters", 0}, "parameter", name, "one of: " + known);
}

ParamSet default_dispatcher_params(const std::string& dispatcher) {
  if (dispatcher == "nccl-alltoall") {
    return ParamSet({
        latency_rounds(5.356, true),
        {"per_remote_peer_s", "s", 8.496e-7, 0.0, 2e-5, true,
         std::string(kFitSource) + "; per remote peer: NCCL p2p connection/proxy work per send-recv pair"},
        // Fits at its upper bound: at these sizes the fixed latency term absorbs what a lower efficiency
        // would.
        {"network_efficiency", "fraction", 1.0, 0.3, 1.0, true, kFitSource},
        nvlink_efficiency(),
        {"sms", "count", 16, 1, 64, false,
         "estimate: NCCL p2p all-to-all runs one block per channel; 16-32 channels on H100/H200 over EFA"},
        // Per-chunk cost of NCCL's network P2P (Simple protocol: the GPU copies each chunk into the FIFO,
        // the one proxy thread per GPU posts it through aws-ofi-nccl: rendezvous control message, RDMA
        // write, completion). It does not shrink with more channels (the p5en runs at NCCL_MAX_NCHANNELS
        // 8/16/32 are within 2.4%), so it is charged serially per GPU. Default 0: not separable from the
        // bytes in nccl-tests run at one chunk size; set by the live-run fit (nccl-alltoall.net_chunk_s),
        // where rows of stacks with different chunks (128 KiB: NeMo 26.04 without platform-aws; 512 KiB:
        // aws-ofi-nccl platform-aws on p5en/p6) identify it.
        {"net_chunk_s", "s", 0.0, 0.0, 2e-5, false,
         "live-run fit (nccl-alltoall.net_chunk_s); shared/design/a2a-mechanisms.md sections 3-4"},
        {"calibration_chunk_bytes", "bytes", 524288, 4096, 16777216, false,
         "assumption: the nccl-tests alltoall_perf runs of ep-kernel-bench.csv used aws-ofi-nccl with "
         "platform-aws (awsome-distributed-ai nccl-tests container), whose p5en/p6 NCCL_P2P_NET_CHUNKSIZE is "
         "512 KiB (aws-ofi-nccl src/platform-aws.cpp)"},
        // Megatron's _AllToAll sends the routing probabilities as a second all_to_all_single after the
        // tokens (fp32, 4 B per token copy), in the dispatch and in its backward (moe/token_dispatcher.py,
        // tensor_parallel/mappings.py): a latency-bound call the kernel benchmark does not have.
        {"probs_calls", "count", 1, 0, 4, false,
         "Megatron-Core 0.17 MoEAlltoAllTokenDispatcher.token_dispatch: 2 all_to_all_single per dispatch"},
        {"probs_bytes_per_copy", "bytes", 4, 0, 16, false, "fp32 routing probability per token copy"},
    });
  }
  if (dispatcher == "deepep-uccl")
    return ParamSet(deepep_params(11.06, 1.0, 0.7216, 1e-6, 64, true,
                                  std::string(kFitSource) +
                                      "; CPU proxy thread cost per RDMA write (UCCL-EP FIFO "
                                      "~3 us latency is pipelined; this is the occupancy)",
                                  efa_gen2_efficiency(0.7267, true)));
  if (dispatcher == "deepep-nvshmem")
    return ParamSet(
        deepep_params(4.067, 0.8359, 0.7101, 0.0, 24.87, true,
                      std::string(kFitSource) + "; NVSHMEM libfabric host-proxy cost per put incl. fence",
                      efa_gen2_efficiency(1.0, false, "no loss: its p5 rows fit without it (LOO 4.2 %)")));
  if (dispatcher == "deepep-v2-gin") {
    std::vector<ModelParam> p = deepep_params(
        4.067, 0.8359, 0.7101, 3e-7, 64, false,
        "estimate: GPU-initiated work request (EFA-GDA doorbell) per RDMA write",
        efa_gen2_efficiency(1.0, false, "not calibrated (no p5 measurements): no loss, as deepep-nvshmem"));
    p.push_back(
        {"fallback_per_message_s", "s", 1e-6, 0.0, 2e-5, false,
         "not calibrated: proxy mode on instances without EFA-GDA (p5), NCCL proxy thread per RDMA write, "
         "borrowed from deepep-uccl's per-message cost"});
    return ParamSet(std::move(p));
  }
  throw std::logic_error("no dispatcher parameters for " + dispatcher);
}

}  // namespace moetwin
