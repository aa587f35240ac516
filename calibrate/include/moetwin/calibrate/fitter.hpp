// The fitter: calibration database -> calibration profile (profile.hpp), with a held-back check of
// the GEMM curves: a third of the GEMM shapes, chosen by a hash of the name, is left out of the fit and
// predicted; gemm_cross_validation predicts every shape from a fit without its third (3-fold).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/nvlink_fit.hpp"
#include "moetwin/profile/calibration_profile.hpp"

namespace moetwin {

// The precision of a GEMM calibration run (`moetwin-calibrate gemm --precision`).
enum class GemmPrecision { bf16, fp8 };
// Experiment kind of op class `op` ("gemm", "grouped_gemm", "attention") measured at `precision`:
// bf16 keeps the plain class name, fp8 appends "_fp8" ("grouped_gemm_fp8"). gemm_bench.cpp writes
// these kinds; the fitter reads them.
std::string gemm_kind(const std::string& op, GemmPrecision precision);

struct FitOptions {
  std::string gpu;             // catalog GPU name the profile is for, e.g. "H200-SXM"
  double peak_bf16_flops = 0;  // that GPU's catalog dense bf16 peak, FLOP/s
  // Its catalog dense FP8 peak, FLOP/s: the peak of the [gemm_fp8] curves, fitted when the database has
  // FP8 GEMM runs (an input error then if it is 0).
  double peak_fp8_flops = 0;
  std::string source_db;  // recorded in the profile
  // The node the NCCL sweeps ran on (a catalog instance of this GPU) and the GPU: with both, NCCL
  // runs on >= 2 of its GPUs become the profile's [nvlink] and efa fabric runs its [efa]
  // (nvlink_fit.hpp). Unset: neither.
  std::optional<InstanceSpec> instance;
  std::optional<GpuSpec> gpu_spec;
  // The third of the GEMM shapes held back from the profile's curves (gemm_fold). 0 for the shipped one.
  int heldout_fold = 0;
};

// Held-back thirds of the GEMM shapes: shape `name` is in fold (fnv1a64(name) >> 32) mod 3. A hash rather
// than every third shape in name order, which held back every linear layer's wgrad (each linear layer
// contributes a dgrad, fwd and wgrad name in a row) and so left the small-k curve without them.
constexpr int kGemmFolds = 3;
int gemm_fold(const std::string& name);

struct HeldOutShape {
  std::string name;
  std::string op;
  double measured_s = 0;
  double predicted_s = 0;
  int fold = 0;  // the held-back third it belongs to (gemm_fold)
  double relative_error() const;
};

struct FitResult {
  CalibrationProfile profile;
  std::vector<HeldOutShape> heldout;      // all op classes, name order
  std::vector<HeldOutShape> heldout_fp8;  // the same for the FP8 curves; empty without FP8 runs
  std::optional<NvlinkFitReport> nvlink;  // when the db has NCCL runs on >= 2 GPUs of one node
};

// The longest a single measured sample may take (s): an hour for one kernel, collective or launch is a
// clock or unit error, not a measurement (the slowest shipped sample, a 16 GiB all-reduce, takes ~0.1 s);
// 1e308 s NVLink samples made the fit write inf.
inline constexpr double kMaxSampleSeconds = 3600;
// Throws InputError naming `path` and the HDF5 dataset (/experiments/NAME sample I) at the first sample
// that is not a finite positive number (a time: at most kMaxSampleSeconds). NaN, zero and negative samples
// made `fit` write a profile of nan/inf (issue 55 item 4). `fit` checks every database it reads.
void check_fit_samples(const CalibrationDb& db, const std::string& path);

// Throws InputError naming the db when it lacks launch or copy experiments (run `all` first) or
// GEMM shapes. Deterministic: the same db gives the same profile text.
FitResult fit_calibration_profile(const CalibrationDb& db, const FitOptions& options);

// Every GEMM shape of `db` predicted by curves fitted without its fold (3 fits, the profile's method):
// out-of-sample errors for all shapes, fold then class then name order. `fitted`: the
// fit_calibration_profile result of the same db and options; its held-back fold (options.heldout_fold)
// is reused rather than fitted again (the same numbers, one fit fewer). Without it heldout_fold is unused.
// `precision` fp8: the FP8 shapes and curves (empty when the db has no FP8 runs).
std::vector<HeldOutShape> gemm_cross_validation(const CalibrationDb& db, const FitOptions& options,
                                                const FitResult* fitted = nullptr,
                                                GemmPrecision precision = GemmPrecision::bf16);

// The db's NCCL runs on 2..max_ranks GPUs as NVLink fit points: `moetwin-calibrate nccl` sweeps and
// out-of-place nccl-tests rows (all_reduce, reduce_scatter, all_gather, alltoall, sendrecv) that
// logged their rank count; runs with more ranks than one node has are skipped (they crossed nodes).
std::vector<NvlinkPoint> nvlink_points(const CalibrationDb& db, int max_ranks);

// The db's libfabric runs over the efa provider (ping-pong and streaming); `buffer` gets their buffer
// label ("host" or "cuda"). InputError when both kinds are mixed.
std::vector<FabricPoint> efa_fabric_points(const CalibrationDb& db, std::string& buffer);

// Per-band latency/bandwidth through consecutive (bytes, seconds) points (ascending bytes), the
// first band starting at 0. A segment steeper than through the origin becomes bytes/time with zero
// latency; a flat or falling one (noise at small sizes) becomes its smaller time, bandwidth 1e15 B/s.
TransportCurve fit_transport(const std::vector<std::pair<double, double>>& points);

}  // namespace moetwin
