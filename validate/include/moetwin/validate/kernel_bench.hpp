// Kernel-level dispatch/combine benchmarks (validate/data/ep-kernel-bench.csv, a copy of the public figures
// in shared/data with their sources): predict every row with the dispatcher models, compare, and calibrate
// the models' fitted parameters on a subset (with leave-one-out error). Used by `moetwin dispatch --bench`.
//
// What each benchmark measures, and how a row is predicted:
//  - deepep-test-internode / uccl-readme (normal mode): DeepEP tests/test_internode.py — 4096 tokens per
//    rank, hidden 7168, top-8 of 256 experts, scores |randn|+1 routed group-limited by node (n_group = nodes,
//    topk_group = min(nodes, 4)); FP8 dispatch, BF16 combine. GB/s = the "RDMA" bytes the test counts
//    (distinct (token, node) pairs, own node included, x token bytes) / time; on one node (8 ranks,
//    test_intranode.py) the NVLink bytes each rank receives (distinct tokens, own included). Routing is
//    sampled per token.
//  - nccl-alltoall (mode "matched"): nccl-tests alltoall_perf busbw = (bytes per rank / time) x (n-1)/n, at
//    the EP payload: 4096 tokens x 7168 x 2 bytes (56 MiB) per rank, equal chunks to every rank.
//  - low-latency (test_low_latency.py): 128 tokens per rank, top-8 of 256 experts routed uniformly per token;
//    every (token, expert) copy for another node is its own RDMA write (DispatcherModel::low_latency_cost).
//    GB/s = all copies (own node included) x token bytes / time. Rows giving one dispatch+combine time
//    (dispatch_us set, combine_us and both GB/s empty: UCCL and DeepEP v1 on p6-b200) are compared on the
//    sum.
//  - DeepEP v2 (gpu-initiated) rows count GB/s on the scale-out leg only (RESULTS-b200.md): network bytes.
//  - instances not in the catalog, and transports without low-latency terms, are listed but not modelled.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/models/dispatcher_model.hpp"

namespace moetwin {

struct KernelBenchRow {
  int line = 0;
  std::string instance;
  std::string gpu;
  int ranks = 0;
  int nodes = 0;
  std::string transport;
  std::string mode;          // normal | matched | low-latency
  double dispatch_gbps = 0;  // 0 = not given
  double combine_gbps = 0;
  double dispatch_us = 0;
  double combine_us = 0;
  std::string source;
  // Per-row shape and run settings (0 / empty = BenchShape's and the dispatcher record's). Rows of the
  // campaign format (ep-kernel-2026-09.csv) carry them; the older format leaves them at 0.
  std::string file;         // the CSV the row came from (for messages and the output table)
  std::int64_t tokens = 0;  // tokens per rank
  int hidden = 0;
  int experts = 0;
  int top_k = 0;
  std::string dispatch_dtype;    // "fp8" | "bf16" | "" (BenchShape's)
  int comm_sms = 0;              // SMs the backend's kernels used (0 = not stated: the record's)
  bool uniform_routing = false;  // "balanced by construction": top-k over all experts, no node groups
  std::string campaign;          // the campaign id the source names ("" for the older format)
  // The source itself calls the row "a direction, not a measurement": listed, predicted, kept out of the
  // calibration and acceptance set.
  bool direction_only = false;
};

// Reads an ep-kernel-bench-style CSV, or one in the campaign format of ep-kernel-2026-09.csv (columns
// source, ep, nodes, profile, tokens_per_rank, dispatch_dtype, backend, latency_ms, comm_sms, notes,
// instance, gpu, hidden, experts, topk, routing: one slowest-rank dispatch+combine time per row, compared on
// that sum; profile prefill = normal kernels, decode = low-latency kernels; backend uccl = deepep-uccl,
// deepep-v1-nvshmem = deepep-nvshmem, deepep-v2-gin-gda = deepep-v2-gin). The format is told by the header.
// Throws InputError for missing columns or malformed numbers.
std::vector<KernelBenchRow> read_kernel_bench(const std::string& path);

// Cells measured more than once (same instance, ranks, transport, mode, dispatch dtype and tokens) in
// different campaigns or sources, compared on their dispatch+combine time: the run-to-run spread.
struct CampaignSpread {
  std::string cell;              // "p6-b200.48xlarge 16 deepep-uccl normal fp8 4096"
  std::vector<std::string> who;  // per measurement: campaign (or file:line) and its time, us
  double spread = 0;             // max time / min time - 1
};
std::vector<CampaignSpread> campaign_spreads(const std::vector<KernelBenchRow>& rows);

// The standalone benchmark's shape (defaults: DeepEP test_internode.py normal mode).
struct BenchShape {
  std::int64_t tokens = 4096;  // per rank
  int hidden = 7168;
  int top_k = 8;
  int experts = 256;
  bool fp8_dispatch = true;      // combine is always BF16
  std::int64_t ll_tokens = 128;  // low-latency rows: test_low_latency.py --num-tokens
  int max_topk_groups = 4;       // test_internode.py: num_topk_groups = min(num_nodes, 4)
  std::uint64_t seed = 1;
};

// A row made ready for prediction: hardware, traffic of both legs (independent of model parameters).
struct PreparedBench {
  KernelBenchRow row;
  bool modelled = false;
  std::string skip_reason;
  DispatchHardware hw;
  A2aTraffic dispatch;             // dispatch-direction traffic with dispatch-dtype bytes
  A2aTraffic combine;              // same routing, BF16 bytes
  double nccl_bytes_per_rank = 0;  // nccl rows: nccl-tests size
  bool low_latency = false;        // a low-latency kernel row (dispatch/combine are per-copy traffic)
  bool summed = false;             // the row gives one dispatch+combine time (in dispatch_us)
  bool time_first = false;         // compare on time where the row gives one (DeepEP v2's GB/s is its SO leg)
  std::vector<std::string> warnings;
};

struct BenchPrediction {
  double dispatch_gbps = 0;
  double combine_gbps = 0;
  double dispatch_us = 0;
  double combine_us = 0;
};

PreparedBench prepare_bench(const KernelBenchRow& row, const Catalog& catalog, const BenchShape& shape);
// Predicts a prepared row with `model` (whose name must match row.transport).
BenchPrediction predict_bench(const DispatcherModel& model, const PreparedBench& bench);
// Relative errors (pred/measured - 1) of the GB/s legs that have a measurement.
std::vector<double> bench_errors(const PreparedBench& bench, const BenchPrediction& prediction);
// One direction's error: predicted speed / measured - 1 on GB/s, or measured / predicted time where the row
// compares on time (summed rows: their one time, on the dispatch side); nullopt where nothing is measured.
std::optional<double> bench_error(const PreparedBench& bench, const BenchPrediction& prediction,
                                  A2aDirection direction);

// The acceptance subset: rows of catalog instances at 16-64 ranks, normal/matched and low-latency mode
// (the calibration set of `dispatch --bench --fit`; instance-scoped terms are fitted on their instance's
// rows only).
bool in_acceptance_set(const KernelBenchRow& row);

// Fits the model's `fitted` parameters (within bounds) to the rows, minimising the sum of squared log
// errors of the GB/s legs, by a deterministic bounded pattern search. Returns the fitted set. (An L1
// objective was tried: same in-sample medians, worse leave-one-out error.)
// `free` (optional) limits the search to the fitted parameters it accepts.
ParamSet fit_dispatcher_params(const DispatcherModel& model, const std::vector<const PreparedBench*>& rows,
                               const std::function<bool(const ModelParam&)>& free = {});
// The calibration `dispatch --bench --fit` runs, in three stages so that each kind of row sets what it
// measures: (1) the normal-kernel rows set every fitted term but the low-latency kernels' own (ll_*:
// ll_latency_rounds, ll_peer_s); (2) the low-latency rows, one RDMA write per remote copy, set the cost of a
// write per instance (per_message_s, scoped and unscoped), the cost per destination rank where the record has
// one (ll_peer_s) and ll_latency_rounds; (3) the normal rows refit the rest with the write cost held. A
// transport without low-latency rows takes stage 1 only.
ParamSet calibrate_dispatcher_params(const DispatcherModel& model,
                                     const std::vector<const PreparedBench*>& rows);

double median(std::vector<double> values);

}  // namespace moetwin
