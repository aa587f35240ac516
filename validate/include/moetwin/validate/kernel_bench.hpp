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
//  - low-latency rows and instances not in the catalog are listed but not modelled.
#pragma once

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
};

// Reads an ep-kernel-bench-style CSV. Throws InputError for missing columns or malformed numbers.
std::vector<KernelBenchRow> read_kernel_bench(const std::string& path);

// The standalone benchmark's shape (defaults: DeepEP test_internode.py normal mode).
struct BenchShape {
  std::int64_t tokens = 4096;  // per rank
  int hidden = 7168;
  int top_k = 8;
  int experts = 256;
  bool fp8_dispatch = true;  // combine is always BF16
  int max_topk_groups = 4;   // test_internode.py: num_topk_groups = min(num_nodes, 4)
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

// The acceptance subset: B300 (p6-b300) and p5 rows, normal/matched mode, 16-64 ranks.
bool in_acceptance_set(const KernelBenchRow& row);

// Fits the model's `fitted` parameters (within bounds) to the rows, minimising the sum of squared log
// errors of the GB/s legs, by a deterministic bounded pattern search. Returns the fitted set. (An L1
// objective was tried: same in-sample medians, worse leave-one-out error.)
ParamSet fit_dispatcher_params(const DispatcherModel& model, const std::vector<const PreparedBench*>& rows);

double median(std::vector<double> values);

}  // namespace moetwin
