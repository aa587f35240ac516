// Compute per GPU generation from NVIDIA's dense rows (issue 42 item 5): what dense Llama training on DGX
// systems measures is mostly the GPU's GEMM-class kernels (the 70B rows spend ~80% of the replayed iteration
// in them), so the fit has one term per GPU and precision:
//
//   gemm_time_scale [GPU x precision], x, bounds [0.5, 2.5]: GEMM-class kernel time (GEMMs, grouped GEMMs and
//   the attention core, forward and backward) over what the twin prices today on that GPU in that precision
//   (the catalog roofline at the class efficiency, or the measured calibration curves a GPU has or borrows).
//   1 = today's pricing is right; on a catalog GPU the implied GEMM efficiency is efficiency.gemm / scale.
//   Bounds: 0.5 would claim twice today's rate (beyond the 0.9-of-peak ceiling of compute_model.hpp for every
//   catalog efficiency >= 0.45), 2.5 a GEMM below a third of the catalog's efficiency, slower than any
//   training kernel the calibration measured at these shapes.
//
// A (GPU, precision) without rows inherits the median of the fitted terms of GPUs of the same die (same CUDA
// compute capability: 9.0 H100/H200/H800, 10.0 B200/GB200, 10.3 B300/GB300) in the same precision; else
// nothing: today's pricing (1), said so. Not the generation: at the same catalog FP8 peak the Blackwell Ultra
// dies (GB300) run NVIDIA's dense rows ~20 % faster than the Blackwell ones (GB200, B200), whose fitted terms
// are 1.19-1.20 where GB300's are 0.96-0.98 (docs/2026-12-07-gemm-by-shape.md); the catalog's Blackwell GEMM
// rates are measured on a B300, so a die without fitted rows keeps them. A term never crosses precisions: an
// FP8 recipe's GEMMs reach another fraction of another peak than bf16's (compute_model.hpp), so the live rows
// in bf16 (B300, H100) and fp8-hybrid (H200) keep their predictions unless rows of their precision are
// fitted.
//
// Fit: per term, the squared log ratio of predicted to measured iteration time over its rows, minimised in
// [0.5, 2.5] on the local linear model of the replayed times (the time is linear in the scale until the
// critical path changes), replayed at the minimiser and repeated (secant steps) until it moves < 0.1%.
// Leave-one-system-out: every instance's rows predicted by the terms fitted without them (the held-out
// system's own terms then inherited as above).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "moetwin/models/compute_model.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

inline constexpr double kGemmTimeScaleMin = 0.5;
inline constexpr double kGemmTimeScaleMax = 2.5;

struct GemmScaleTerm {
  std::string gpu;        // catalog GPU
  std::string precision;  // to_string(Precision)
  double value = 1;
  int rows = 0;  // rows it was fitted on
};

// The resolved term of one (GPU, precision), with where it came from.
struct ResolvedScale {
  double value = 1;
  std::string source;  // "fitted on 4 rows", "inherited: median of GB300 (compute capability 10.3, mxfp8)",
                       // "none: ..."
};

struct ComputeFit {
  std::vector<GemmScaleTerm> terms;  // by (gpu, precision), name order
  ResolvedScale resolve(const Catalog& catalog, const std::string& gpu, Precision precision) const;
};

// The GPU's die by its CUDA compute capability ("compute capability 10.3").
std::string gpu_die(const GpuSpec& gpu);

// `profile` with every GEMM-class kernel (catalog efficiencies of gemm, grouped_gemm and attention, and every
// measured curve and attention kernel, bf16 and FP8) taking `scale` times its time; catalog efficiencies stay
// at most kMaxKernelEfficiency. `scale` must be in [kGemmTimeScaleMin, kGemmTimeScaleMax].
void scale_gemm_class_time(ComputeProfile& profile, double scale);

// Predicted iteration seconds of runs[which[k]] with each row's GEMM-class time scaled by scales[k]
// (<= 0: the replay refused the row). Row-parallel on `threads`; identical for any count.
std::vector<double> predict_scaled(const std::vector<LiveRun>& runs, const std::vector<std::size_t>& which,
                                   const std::vector<double>& scales, const FittedProfile& profile,
                                   int threads);

struct ComputeFitRow {
  std::size_t row = 0;  // index into the runs
  std::string system;   // instance name
  std::string term;     // "GPU/precision"
  double measured_s = 0;
  double unfitted_s = 0;  // today's pricing (scale 1)
  double in_sample_s = 0;
  double held_out_s = 0;  // leave-one-system-out (0 without --cv)
  std::string held_out_source;
};

struct ComputeFitResult {
  ComputeFit fit;
  std::vector<ComputeFitRow> rows;
  int replays = 0;
};

// Fits the terms on `runs` (rows whose replay fails are left out and not counted) and, with
// `leave_one_system_out`, predicts every system's rows from the fit without them.
ComputeFitResult fit_compute(const Catalog& catalog, const std::vector<LiveRun>& runs,
                             const FittedProfile& profile, bool leave_one_system_out, int threads,
                             const std::function<void(const std::string&)>& progress = {});

// Text report: the terms (value, bounds, rows, implied catalog GEMM efficiency), errors per system (today,
// in sample, held out) and every row.
std::string compute_fit_report(const Catalog& catalog, const std::vector<LiveRun>& runs,
                               const ComputeFitResult& result);

// The compute profile file (TOML, strict): schema, the terms with unit, bounds and scope, and the errors.
std::string compute_fit_toml(const ComputeFitResult& result, const std::string& fitted_on);
ComputeFit load_compute_fit(const std::string& path);

}  // namespace moetwin
