// Kernel times from a roofline: time = max(flops / (peak x efficiency), bytes / (HBM bandwidth x
// memory efficiency)), with an efficiency per op class. Without calibration data the efficiencies
// are the catalog's GpuSpec::efficiency (estimates with their reasoning in catalog/data/gpus.toml); a
// calibration profile (calibrate/profiles/, fitted by `moetwin-calibrate fit`) replaces them through
// the plain struct ComputeCalibration below, never through code (filled by calibrated_compute.hpp).
//
// Calibrated GEMM-class kernels (gemm, grouped_gemm, attention) need the GEMM's shape, so they go
// through the kernel_seconds overload taking GemmDims:
//   t = max(floor_s, floor_s - hidden_floor_s + work),
//   work = max(flops / (peak x efficiency(min_dim)), bytes / (copy bandwidth x memory_efficiency))
// (the memory term only where the profile has one, schema 2; hidden_floor_s from schema 3, else 0:
// floor + work). The formula is calibrate's calibrated_gemm_seconds. The overload without dims,
// elementwise kernels and GPUs without a profile keep the catalog roofline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/time.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

enum class OpClass { gemm, grouped_gemm, attention, elementwise };
inline constexpr int kOpClasses = 4;
const char* to_string(OpClass cls);

// Efficiency (fraction of ComputeCalibration::peak_flops) as a function of a GEMM's smallest
// dimension: linear in log2(min_dim) between points, constant beyond the ends (calibrate's
// log2_interpolate, the one implementation; the time formula is calibrate's calibrated_gemm_seconds).
struct GemmEfficiencyCurve {
  std::vector<double> min_dim;     // ascending, elements
  std::vector<double> efficiency;  // one per min_dim, in (0, 1]
  double floor_s = 0;              // fixed cost per call, s
  double memory_efficiency = 0;    // of ComputeCalibration::copy_bandwidth; 0 = no memory term
  double hidden_floor_s = 0;       // part of floor_s overlapping a longer call's work, s; 0 = additive
  bool empty() const { return min_dim.empty(); }
  double at(double value) const;
};

// A measured fused attention kernel (cuDNN causal attention, the calibration profile's
// [attention_kernel.*]): efficiency (fraction of ComputeCalibration::peak_flops) vs the call's FLOPs,
// linear in log2(flops), for one direction and head width (q/k + v head dims, elements).
struct AttentionKernelCurve {
  bool backward = false;
  bool grouped_kv = false;         // measured with fewer KV heads than query heads (GQA)
  double head_width = 0;           // qk_dim + v_dim
  std::vector<double> flops;       // ascending
  std::vector<double> efficiency;  // one per flops, in (0, 1]
};

// One GPU's measured GEMM curves, from a calibration profile.
struct ComputeCalibration {
  std::string path;           // the profile file
  std::string gpu;            // catalog GPU name it was measured for
  double peak_flops = 0;      // the peak the efficiencies are fractions of, FLOP/s
  double copy_bandwidth = 0;  // device-to-device copy, bytes read + written per s
  // By OpClass (elementwise stays empty). small_k: GEMMs whose k is strictly the smallest dimension
  // (weight gradients over few tokens); empty -> the class curve.
  GemmEfficiencyCurve curve[kOpClasses];
  GemmEfficiencyCurve small_k[kOpClasses];
  // Measured attention kernels, by head width ascending within each direction; empty: attention is
  // priced by curve[attention] as a GEMM of its shape.
  std::vector<AttentionKernelCurve> attention_kernels;
};

// One GEMM of an op (per GEMM of a batched/grouped call): C[m x n] = A[m x k] B[k x n], elements.
struct GemmDims {
  double m = 0;
  double n = 0;
  double k = 0;
};

struct ComputeProfile {
  std::string gpu;           // GpuSpec::name
  double peak_flops = 0;     // dense BF16, FLOP/s
  double hbm_bandwidth = 0;  // bytes/s
  // Achievable fraction of peak per OpClass (elementwise: of HBM bandwidth). Memory-bound parts of
  // compute ops use the elementwise efficiency.
  double efficiency[kOpClasses] = {0.75, 0.6, 0.5, 0.8};
  // Smallest time of any kernel on the GPU, s: launch latency + tail of a tiny grid (~2-4 us on
  // Hopper/Blackwell for back-to-back kernels, nsys traces of small elementwise kernels).
  double min_kernel_s = 2e-6;
  int sms = 132;
  // Measured GEMM curves; nullopt: catalog efficiencies for every kernel.
  std::optional<ComputeCalibration> calibration;
  // Dense FP8 (E4M3) peak, FLOP/s (catalog GpuSpec::fp8_flops; 0 = the GPU has no FP8 tensor cores).
  double fp8_peak_flops = 0;
  // Measured FP8 GEMM curves (cuBLASLt E4M3 with per-tensor scales, `moetwin-calibrate gemm --precision
  // fp8`), in the same form as `calibration` with peak_flops the FP8 peak; nullopt: FP8 GEMMs use the
  // catalog roofline at fp8_peak_flops x the class efficiency.
  std::optional<ComputeCalibration> fp8_calibration;
  // Dense NVFP4 peak, FLOP/s (catalog GpuSpec::fp4_flops; 0 = no FP4 tensor cores), and NVFP4 GEMMs'
  // fraction of it relative to BF16 GEMMs' fraction of the BF16 peak (GpuSpec::fp4_relative_efficiency,
  // measured on B300; catalog/data/gpus.toml).
  double fp4_peak_flops = 0;
  double fp4_relative_efficiency = 0;
  // FP8 GEMMs' fraction of the FP8 peak over BF16 GEMMs' fraction of the BF16 peak, per-tensor scaled
  // (delayed, current, blockwise) and MX block-scaled, for the roofline of a GPU without measured FP8 curves
  // (GpuSpec::fp8_relative_efficiency, mxfp8_relative_efficiency; measured on B300, catalog/data/gpus.toml).
  double fp8_relative_efficiency = 1;
  double mxfp8_relative_efficiency = 1;
  // What the GEMM times come from, for reports: "catalog efficiencies (...)" or "calibrated (path, gpu)".
  std::string source = "catalog efficiencies";

  // From the catalog GPU: its bf16 peak, HBM bandwidth, SMs and efficiency table ("gemm",
  // "grouped_gemm", "attention", "elementwise"; missing keys keep the defaults above).
  static ComputeProfile from_gpu(const GpuSpec& gpu);
};

// Seconds of one kernel (or a short fused sequence counted as one) of class `cls`: the catalog
// roofline, whether or not the profile is calibrated.
double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes);
// The same with the GEMM's shape: with a calibration that has a curve for `cls`, the calibrated
// model (floor + max(compute, memory), the curve at min(m, n, k); "small_k" curve when k < m and
// k < n); otherwise (no calibration, no curve for the class, elementwise, or a dimension <= 0) exactly
// the overload above. `flops` and `bytes` are the whole op's (all GEMMs of
// a grouped call, operands + results in bytes).
double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes,
                      const GemmDims& dims);

// Transformer Engine's quantization recipes (scenario Precision minus bf16): which GEMM kernel an FP8 linear
// runs (per-tensor or MX block scales) and what its quantization kernels move (quantize_bytes_per_element).
enum class QuantRecipe { fp8_delayed, fp8_current, fp8_blockwise, mxfp8, nvfp4 };
const char* to_string(QuantRecipe r);
// The recipe of a quantized precision (is_fp8); std::logic_error for bf16.
QuantRecipe quant_recipe(Precision precision);

// An FP8 GEMM-class kernel (Transformer Engine fprop/dgrad/wgrad in E4M3/E5M2): the measured FP8 curves
// when the profile has them (same formula as the calibrated BF16 overload), else the roofline at the FP8
// peak with the class's catalog efficiency x the recipe's relative FP8 efficiency (mxfp8:
// mxfp8_relative_efficiency, every other FP8 recipe: fp8_relative_efficiency). Throws std::logic_error when
// the GPU has no FP8 peak (callers reject such scenarios as input errors first) or for QuantRecipe::nvfp4.
double fp8_kernel_seconds(const ComputeProfile& profile, QuantRecipe recipe, OpClass cls, double flops,
                          double bytes, const GemmDims& dims);

// Quantization of one bf16 GEMM input (activations forward, output gradients backward), priced as
// memory-bound kernels: bytes per element (TE's data flow, both copies it keeps: rowwise for fprop / dgrad,
// columnwise for wgrad) at a measured fraction of HBM bandwidth. Bytes per element:
//   fp8_delayed    4      TE cast_transpose: read bf16 (2), write E4M3/E5M2 and its transpose (1 + 1); the
//                         amax is taken in the same pass and the scale comes from the amax history
//                         (transformer_engine/common/transpose/cast_transpose.cu);
//   fp8_current    6      an amax pass first (read 2; the per-tensor scale must be known before the cast),
//                         then the cast-transpose (4);
//   fp8_blockwise  4.0625 read 2, two FP8 copies with one FP32 scale per 128 elements (2 x (1 + 4/128));
//   mxfp8          4.0625 read 2, rowwise and columnwise E4M3 copies with one E8M0 scale per 32 elements
//                         (2 x (1 + 1/32)); the block amax is taken in the cast itself;
//   nvfp4          5.125  amax pass (read 2; s_global = amax / (448 x 6); with the Hadamard transform one
//   pass
//                         yields the amax before and after it, TE hadamard_transform_amax), cast (read 2),
//                         two E2M1 copies with one E4M3 scale per 16 elements (2 x 0.5625); the 16x16 random
//                         Hadamard transform of the wgrad inputs and stochastic rounding of gradients are
//                         fused into the columnwise cast (TE hadamard_transform_cast_fusion): no extra
//                         traffic.
// Weights are quantized once per iteration and cached across microbatches (TE is_first_microbatch): not
// charged per GEMM.
double quantize_bytes_per_element(QuantRecipe recipe);
inline constexpr double kNvfp4QuantizeBytesPerElement = 2 + 2 + 2 * (0.5 + 1.0 / 16);
// Fraction of HBM bandwidth TE's quantization reaches, measured on B300 by Transformer Engine's GEMM
// profiling guide (validate/data/gemm-throughput.csv: a Llama-like layer, hidden 4096, FFN 16384, 15,872
// tokens, 12 GEMMs; with quantization (autocast) minus kernels only, per recipe). The guide quantizes per
// layer the GEMM inputs (455 M elements), output gradients (585 M) and, on every call, the weights (201 M):
// 1,241.5 M elements at 8 TB/s.
//  - Recipes whose scales come from the tensor being cast (current per-tensor, MX blocks, NVFP4): 2.335 ms
//    (FP8 current, 6 B), 1.823 ms (MXFP8, 4.0625 B), 2.689 ms (NVFP4, 5.125 B) -> 18.86 GB in 6.847 ms
//    = 2.754 TB/s = 0.344 of 8 TB/s (per recipe 0.399 / 0.346 / 0.296). Bounds 0.30-0.40: the per-recipe
//    spread. The guide times whole autocast calls with CUDA events, so host time the GPU waits on is inside;
//    an unfused PyTorch cast-transpose measured on the H100 (calibrate/data/h100-layer-probe.csv
//    `cast_input`, 10 B per element in three kernels) reaches 0.28-0.30 of 3.35 TB/s, the same third of HBM.
//  - Delayed scaling's one fused cast-transpose: 7.802 ms (autocast) - 6.812 ms (FP8 current's kernels only,
//    the same per-tensor FP8 GEMMs: inferred) = 0.990 ms for 4 B per element -> 0.627 of 8 TB/s. The guide
//    has no kernels-only delayed row (its "pre-quantized" delayed row is still autocast, 8.123 ms): one
//    difference, about +-0.3 ms from the two rows' spread.
inline constexpr double kQuantizeHbmFraction = 0.344;
inline constexpr double kDelayedCastHbmFraction = 0.627;
double quantize_hbm_fraction(QuantRecipe recipe);
// Seconds to quantize `elements` bf16 values under `recipe`: elements x bytes per element / (HBM bandwidth x
// the recipe's measured fraction), at least one kernel (min_kernel_s); 0 for no elements.
double quantize_seconds(const ComputeProfile& profile, QuantRecipe recipe, double elements);
// Bytes per element of an NVFP4 GEMM operand: E2M1 plus its share of the E4M3 block scale.
inline constexpr double kNvfp4OperandBytesPerElement = 0.5 + 1.0 / 16;
// An NVFP4 GEMM-class kernel (fprop, dgrad or wgrad of a TE linear): the roofline at the FP4 peak with the
// class's efficiency x fp4_relative_efficiency; `bytes` are its NVFP4 operands and bf16 output. The BF16 and
// FP8 calibration curves are not carried over (another kernel, another peak; no FP4 measurement on a
// calibrated GPU yet). Throws std::logic_error when the GPU has no FP4 peak (scenario validation rejects it).
double fp4_kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes);

// A fused causal attention core of `flops` (Megatron-Core's count: forward s^2 (qk + v) heads x batch per
// call, backward attention_backward_factor x that) with head dims summing to `head_width`, from the
// measured attention kernels of the bf16 calibration. Efficiency: the multi-head curves of that direction
// at `flops`, those of the measured head widths bracketing `head_width`, linear in log2(head width) between
// them (the nearest beyond the ends). `grouped_kv` (fewer KV heads than query heads) and a measured GQA
// curve: times the ratio of the GQA curve to the multi-head efficiency at the GQA curve's width and
// `flops` (on the H200 GQA calls run up to 1.2x faster at mid sizes, loading less K and V).
// t = max(min_kernel_s, flops / (peak x efficiency)). nullopt when the profile has no multi-head attention
// kernel of that direction: the caller prices the op as a GEMM (kernel_seconds with OpClass::attention).
std::optional<double> attention_kernel_seconds(const ComputeProfile& profile, bool backward, double flops,
                                               double head_width, bool grouped_kv = false);

// The highest fraction of peak any kernel class is allowed after a fitted time scale: the best bf16
// GEMM measured on H200 with cuBLASLt reaches 832 of 989 TFLOP/s (84 %) and a device-to-device copy
// 4.25 of 4.8 TB/s (89 %) (calibrate/README.md, H200 reference numbers). Above it a prediction would
// claim a rate no kernel has shown.
inline constexpr double kMaxKernelEfficiency = 0.9;
// Applies the live fit's compute_time_scale (sim/fitted_profile.hpp): every catalog efficiency divided
// by `scale`, at most kMaxKernelEfficiency. Measured calibration curves keep their times: the scale was
// fitted against catalog efficiencies (the live runs' GPUs have no calibration profile) and says
// nothing about kernels timed on the GPU itself. `scale` must be > 0.
void scale_catalog_kernel_time(ComputeProfile& profile, double scale);

}  // namespace moetwin
