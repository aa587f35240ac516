// Importers of other tools' logs into calibration-database experiments. Each takes the log text and
// its path (for messages and names) and throws InputError "path:line: ..." on malformed or truncated
// input: a cut-off data row, a header without rows, a tuning block with no result line.
#pragma once

#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin {

// nccl-tests (github.com/NVIDIA/nccl-tests, v2.13-2.17 `*_perf` stdout; older layouts with an
// "error" column instead of "#wrong" or no "root" column are read by header name). One experiment
// per data row and placement, kind "nccl_tests", unit "s", samples = {time}:
//   name   nccl_tests.<op>.<file stem>.<size>.<out_of_place|in_place>
//   params size_bytes, count, root (if present), algbw_Bps, busbw_Bps, wrong (if numeric), ranks
//          (number of "#  Rank" lines, if any), line
//   labels op, type, redop (if present), placement, source (path), wrong (when not a number, "N/A")
// plus one experiment per file "nccl_tests.<op>.<stem>.avg_busbw" (kind "nccl_tests_avg", samples
// = {average bus bandwidth in bytes/s}) when the "# Avg bus bandwidth" line is there.
// `op` names the collective ("all_reduce", ...); empty -> from the file name or the
// "# Collective test starting: <op>_perf" line, else an InputError.
std::vector<Experiment> import_nccl_tests(const std::string& text, const std::string& path,
                                          const std::string& op);

// DeepEP tests/test_internode.py stdout (github.com/deepseek-ai/DeepEP, the 2025 main-branch format;
// UCCL-EP's ep/bench/test_internode.py prints the same lines). Lines read:
//   [config] num_tokens=4096, hidden=7168, num_topk_groups=4, num_topk=8
//   [layout] Kernel performance: 0.049 ms
//   [tuning] SMs 24, NVL chunk 4, RDMA chunk 4: 51.24 GB/s (RDMA), 167.34 GB/s (NVL)
//   [tuning] SMs 24, NVL chunk 4, RDMA chunk 4, transmit: 1016.25 us, notify: 88.30 us, BW: ...
//   [tuning] Best dispatch (FP8): SMs 24, NVL chunk 20, RDMA chunk 16: 56.47 GB/s (RDMA), ...
//   [tuning] Best combine: SMs 24, NVL chunk 1, RDMA chunk 8: 55.24 GB/s (RDMA), ...
// Tuning lines belong to the "Best dispatch (<dtype>)" or "Best combine" line that follows them.
// Experiments (kind "deepep", unit "s"; samples = {transmit time} when printed, else empty):
//   deepep.<stem>.layout                                     samples = {layout kernel time}
//   deepep.<stem>.<dispatch|combine>.<dtype>.sms<S>.nvl<N>.rdma<R>[.best]
//   params num_sms, nvl_chunk, rdma_chunk, rdma_bw_Bps, nvl_bw_Bps, notify_s (if printed), the
//          [config] values, line; labels phase, dtype ("bf16" for combine), best ("1"/"0"), source
std::vector<Experiment> import_deepep(const std::string& text, const std::string& path);

// A name-safe form of a file's stem: letters, digits, '-' and '_' kept, others -> '_'.
std::string name_safe_stem(const std::string& path);

}  // namespace moetwin
