// Importers of other tools' logs into calibration-database experiments. Each takes the log text and
// its path (for messages and names) and throws InputError "path:line: ..." on malformed or truncated
// input: a cut-off data row, a value cut by the end of its line or of the file, a header without rows, a
// tuning block with no result line. Launcher tags before each line (Open MPI --tag-output
// "[1,0]<stdout>:", srun -l "0: ", MPICH -prepend-rank "[0] ") are looked past.
#pragma once

#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin {

struct ImportResult {
  std::vector<Experiment> experiments;
  std::vector<std::string> warnings;  // "path:line: what", for the user (rows left out of fits, ...)
};

struct NcclTestsOptions {
  // The collective ("all_reduce", ...). Empty: from the log (its "# Collective test starting: <op>_perf"
  // line, a "Running: ... <op>_perf" line or the binary's name in a launch command before the table),
  // never from the file name. Given and also in the log: they must agree.
  std::string op;
  bool keep_wrong = false;  // import rows with #wrong > 0 as ordinary data (default: kind nccl_tests_wrong)
};

// nccl-tests (github.com/NVIDIA/nccl-tests) `*_perf` stdout, every layout read by header name: v2.0-era
// (a "root" column, no "redop"; an "error" column), pre-2.13 ("error", no "root"), 2.13+ ("#wrong",
// "redop" and "root"), "-C 1" ("cputime" for "time"), "-S 1" (a "timestamp" column). Several tests in one
// file (each column header starts one) are each imported; a size repeated within a test (-N run cycles)
// adds a sample to that size's experiment. One experiment per size (and type/redop when a test has
// several) and placement, kind "nccl_tests" (or "nccl_tests_wrong" when #wrong > 0), unit "s", samples =
// the rows' times:
//   name   nccl_tests.<op>.<file stem>[.t<test, from 1, when the file has several>].<size>[.<type>]
//          [.<redop>].<out_of_place|in_place>
//   params size_bytes, count, root (if a column), algbw_Bps, busbw_Bps (of the first row), wrong (#wrong,
//          if numeric), max_error (the old "error" column), ranks (number of "# Rank" lines, if any),
//          repeats, line (of the first row)
//   labels op, type, redop (if a column), placement, timer ("gpu", "cpu" for -C 1), source (path),
//          wrong (when not a number, "N/A")
// plus one experiment per test "nccl_tests.<op>.<stem>[.t<k>].avg_busbw" (kind "nccl_tests_avg", samples
// = {average bus bandwidth in bytes/s}) when the "# Avg bus bandwidth" line is there. A placement whose
// time is "N/A" is left out.
ImportResult import_nccl_tests(const std::string& text, const std::string& path,
                               const NcclTestsOptions& options);

// DeepEP and UCCL-EP benchmark stdout (github.com/deepseek-ai/DeepEP tests/, UCCL-EP ep/bench/). Lines read:
//   [config] num_tokens=4096, hidden=7168, num_topk_groups=4, num_topk=8
//   [layout] Kernel performance: 0.049 ms
// test_internode.py, every format so far:
//   [tuning] SMs 24, NVL chunk 4, RDMA chunk 4: 51.24 GB/s (RDMA), 167.34 GB/s (NVL)      (Feb 2025)
//   [tuning] SMs 24, NVL chunk 4, RDMA chunk 4: 867 + 2008 us, 30.04 GB/s (RDMA), 98.10 GB/s (NVL)
//                                                 (notify + transmit, since DeepEP e02e4d2, 2025-09)
//   [tuning] SMs 24, NVL chunk 4, RDMA chunk 4, transmit: 1016.25 us, notify: 88.30 us, BW: ... (UCCL-EP)
//   [tuning] Best dispatch (FP8): SMs 24, NVL chunk 20, RDMA chunk 16: ...  /  Best combine: ...
// test_intranode.py:
//   [tuning] SMs 24, NVL chunk 4: 294.24 GB/s (NVL), 544.47 us
//   [tuning] Best dispatch (FP8): SMs 24, NVL chunk 6, 320.68 GB/s (NVL), t: 499.58 us
// Tuning lines belong to the "Best dispatch (<dtype>)" or "Best combine" line that follows them.
// test_low_latency.py (per rank):
//   [rank 0] Dispatch + combine bandwidth: 56.80 GB/s, avg_t=257.09 us, min_t=250.02 us, max_t=270.10 us
//   [rank 0] Dispatch bandwidth: 45.81 GB/s, avg_t=163.69 us | Combine bandwidth: 60.67 GB/s, avg_t=238.63 us
//   [rank 0] Dispatch send/recv time: 28.55 + 11.13 us | Combine send/recv time: 35.14 + 9.31 us
// Experiments (kind "deepep", unit "s"; samples = {transmit time or t} when printed, else empty):
//   deepep.<stem>.layout                                         samples = {layout kernel time}
//   deepep.<stem>.<dispatch|combine>.<dtype>.sms<S>.nvl<N>[.rdma<R>][.best]
//   params num_sms, nvl_chunk, rdma_chunk (internode), rdma_bw_Bps (internode), nvl_bw_Bps, notify_s (if
//          printed), the [config] values, line; labels phase, dtype ("bf16" for combine), best ("1"/"0"),
//          scope (intranode/internode), source
//   deepep.<stem>.low_latency.r<rank>.<dispatch_combine|dispatch|combine>   samples = {avg_t};
//          params bw_Bps, min_s/max_s (if printed), line
//   deepep.<stem>.low_latency.r<rank>.<dispatch|combine>_send_recv         samples = {send + recv};
//          params send_s, recv_s, line
// A name seen twice (several ranks' logs in one file) gets ".l<line>".
ImportResult import_deepep(const std::string& text, const std::string& path);

// A name-safe form of a file's stem: letters, digits, '-' and '_' kept, others -> '_'.
std::string name_safe_stem(const std::string& path);

}  // namespace moetwin
