#include "moetwin/models/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "moetwin/profile/calibration_profile.hpp"

namespace moetwin {

const char* to_string(OpClass cls) {
  switch (cls) {
    case OpClass::gemm:
      return "gemm";
    case OpClass::grouped_gemm:
      return "grouped_gemm";
    case OpClass::attention:
      return "attention";
    case OpClass::elementwise:
      return "elementwise";
  }
  return "?";
}

ComputeProfile ComputeProfile::from_gpu(const GpuSpec& gpu) {
  ComputeProfile p;
  p.gpu = gpu.name;
  p.peak_flops = gpu.bf16_flops;
  p.fp8_peak_flops = gpu.fp8_flops;
  p.fp4_peak_flops = gpu.fp4_flops;
  p.fp4_relative_efficiency = gpu.fp4_relative_efficiency;
  p.fp8_relative_efficiency = gpu.fp8_relative_efficiency;
  p.mxfp8_relative_efficiency = gpu.mxfp8_relative_efficiency;
  p.hbm_bandwidth = gpu.hbm_bandwidth;
  p.sms = gpu.sms > 0 ? gpu.sms : p.sms;
  const char* keys[kOpClasses] = {"gemm", "grouped_gemm", "attention", "elementwise"};
  for (int i = 0; i < kOpClasses; ++i) {
    const auto it = gpu.efficiency.find(keys[i]);
    if (it != gpu.efficiency.end()) p.efficiency[i] = it->second;
  }
  return p;
}

namespace {

// The roofline at `peak_flops` with the profile's class efficiency and HBM bandwidth.
double roofline_seconds(const ComputeProfile& profile, double peak_flops, OpClass cls, double flops,
                        double bytes) {
  if (peak_flops <= 0 || profile.hbm_bandwidth <= 0) {
    throw std::logic_error("kernel_seconds: profile without peak rates");
  }
  const double eff = profile.efficiency[static_cast<int>(cls)];
  const double mem_eff = profile.efficiency[static_cast<int>(OpClass::elementwise)];
  double t = 0;
  if (cls == OpClass::elementwise) {
    t = bytes / (profile.hbm_bandwidth * eff);
  } else {
    t = std::max(flops / (peak_flops * eff), bytes / (profile.hbm_bandwidth * mem_eff));
  }
  return std::max(t, profile.min_kernel_s);
}

// A measured curve set's time for a shaped GEMM-class kernel; nullopt when `cal` has no curve for it.
std::optional<double> curve_seconds(const std::optional<ComputeCalibration>& cal, OpClass cls, double flops,
                                    double bytes, const GemmDims& dims) {
  const int c = static_cast<int>(cls);
  // No shape (e.g. an expert GEMM of a rank that received no tokens): nothing to look up a curve by.
  const bool shaped = dims.m > 0 && dims.n > 0 && dims.k > 0;
  if (!cal || cls == OpClass::elementwise || cal->curve[c].empty() || !shaped) return std::nullopt;
  if (!(cal->peak_flops > 0)) throw std::logic_error("kernel_seconds: calibration without a peak");
  const bool small_k = dims.k < dims.m && dims.k < dims.n;
  const GemmEfficiencyCurve& curve = small_k && !cal->small_k[c].empty() ? cal->small_k[c] : cal->curve[c];
  return calibrated_gemm_seconds({.floor_s = curve.floor_s,
                                  .hidden_floor_s = curve.hidden_floor_s,
                                  .efficiency = curve.at(std::min({dims.m, dims.n, dims.k})),
                                  .memory_efficiency = curve.memory_efficiency,
                                  .peak_flops = cal->peak_flops,
                                  .copy_bandwidth = cal->copy_bandwidth,
                                  .flops = flops,
                                  .bytes = bytes});
}

}  // namespace

double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes) {
  return roofline_seconds(profile, profile.peak_flops, cls, flops, bytes);
}

namespace {

// Multi-head efficiency at `flops` for `head_width`: linear in log2(width) between the bracketing measured
// widths of `backward`'s MHA curves, the nearest beyond the ends; nullopt without any.
std::optional<double> mha_attention_efficiency(const ComputeCalibration& cal, bool backward, double flops,
                                               double head_width) {
  const AttentionKernelCurve* lo = nullptr;  // widest measured width <= head_width
  const AttentionKernelCurve* hi = nullptr;  // narrowest measured width >= head_width
  for (const AttentionKernelCurve& c : cal.attention_kernels) {
    if (c.backward != backward || c.grouped_kv) continue;
    if (c.head_width <= head_width && (lo == nullptr || c.head_width > lo->head_width)) lo = &c;
    if (c.head_width >= head_width && (hi == nullptr || c.head_width < hi->head_width)) hi = &c;
  }
  if (lo == nullptr && hi == nullptr) return std::nullopt;
  if (lo == nullptr) lo = hi;
  if (hi == nullptr) hi = lo;
  const double e_lo = log2_interpolate(lo->flops, lo->efficiency, flops);
  if (!(hi->head_width > lo->head_width)) return e_lo;
  const double e_hi = log2_interpolate(hi->flops, hi->efficiency, flops);
  const double f = std::log2(head_width / lo->head_width) / std::log2(hi->head_width / lo->head_width);
  return e_lo + f * (e_hi - e_lo);
}

}  // namespace

std::optional<double> attention_kernel_seconds(const ComputeProfile& profile, bool backward, double flops,
                                               double head_width, bool grouped_kv) {
  if (!profile.calibration || !(flops > 0) || !(head_width > 0)) return std::nullopt;
  const ComputeCalibration& cal = *profile.calibration;
  const std::optional<double> mha = mha_attention_efficiency(cal, backward, flops, head_width);
  if (!mha) return std::nullopt;
  double efficiency = *mha;
  if (grouped_kv) {
    // The GQA curve of this direction nearest in width (log2), as a ratio to the MHA efficiency there.
    const AttentionKernelCurve* g = nullptr;
    for (const AttentionKernelCurve& c : cal.attention_kernels) {
      if (c.backward != backward || !c.grouped_kv) continue;
      if (g == nullptr ||
          std::abs(std::log2(c.head_width / head_width)) < std::abs(std::log2(g->head_width / head_width)))
        g = &c;
    }
    if (g != nullptr) {
      const std::optional<double> base = mha_attention_efficiency(cal, backward, flops, g->head_width);
      if (base && *base > 0) efficiency *= log2_interpolate(g->flops, g->efficiency, flops) / *base;
    }
  }
  if (!(efficiency > 0) || !(cal.peak_flops > 0)) return std::nullopt;
  return std::max(profile.min_kernel_s, flops / (cal.peak_flops * efficiency));
}

double GemmEfficiencyCurve::at(double value) const {
  if (min_dim.empty()) throw std::logic_error("GemmEfficiencyCurve::at: empty curve");
  return log2_interpolate(min_dim, efficiency, value);
}

double kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes,
                      const GemmDims& dims) {
  if (const auto t = curve_seconds(profile.calibration, cls, flops, bytes, dims)) return *t;
  return kernel_seconds(profile, cls, flops, bytes);
}

const char* to_string(QuantRecipe r) {
  switch (r) {
    case QuantRecipe::fp8_delayed:
      return "fp8-delayed";
    case QuantRecipe::fp8_current:
      return "fp8-current";
    case QuantRecipe::fp8_blockwise:
      return "fp8-blockwise";
    case QuantRecipe::mxfp8:
      return "mxfp8";
    case QuantRecipe::nvfp4:
      return "nvfp4";
  }
  return "?";
}

QuantRecipe quant_recipe(Precision precision) {
  switch (precision) {
    case Precision::fp8_hybrid:
      return QuantRecipe::fp8_delayed;
    case Precision::fp8_current:
      return QuantRecipe::fp8_current;
    case Precision::fp8_blockwise:
      return QuantRecipe::fp8_blockwise;
    case Precision::mxfp8:
      return QuantRecipe::mxfp8;
    case Precision::nvfp4:
      return QuantRecipe::nvfp4;
    case Precision::bf16:
      break;
  }
  throw std::logic_error("quant_recipe: bf16 is not a quantized recipe");
}

double fp8_kernel_seconds(const ComputeProfile& profile, QuantRecipe recipe, OpClass cls, double flops,
                          double bytes, const GemmDims& dims) {
  if (!(profile.fp8_peak_flops > 0)) throw std::logic_error("fp8_kernel_seconds: GPU without an FP8 peak");
  if (recipe == QuantRecipe::nvfp4) throw std::logic_error("fp8_kernel_seconds: NVFP4 is fp4_kernel_seconds");
  if (const auto t = curve_seconds(profile.fp8_calibration, cls, flops, bytes, dims)) return *t;
  // Roofline at the FP8 peak with the class's catalog efficiency times the recipe's relative one (the
  // calibrated BF16 curve is not carried over: FP8 kernels reach a different fraction of a different peak).
  // As for FP4 the peak is scaled, not the efficiency table, which fitted time scales divide.
  const double relative =
      recipe == QuantRecipe::mxfp8 ? profile.mxfp8_relative_efficiency : profile.fp8_relative_efficiency;
  if (!(relative > 0)) throw std::logic_error("fp8_kernel_seconds: relative FP8 efficiency must be > 0");
  return roofline_seconds(profile, profile.fp8_peak_flops * relative, cls, flops, bytes);
}

double fp4_kernel_seconds(const ComputeProfile& profile, OpClass cls, double flops, double bytes) {
  if (!(profile.fp4_peak_flops > 0) || !(profile.fp4_relative_efficiency > 0))
    throw std::logic_error("fp4_kernel_seconds: GPU without an FP4 peak");
  // The class efficiency times the relative one is the fraction of the FP4 peak: the same roofline as the
  // other precisions with the peak scaled instead of the efficiency table (which fitted time scales divide).
  return roofline_seconds(profile, profile.fp4_peak_flops * profile.fp4_relative_efficiency, cls, flops,
                          bytes);
}

double quantize_bytes_per_element(QuantRecipe recipe) {
  switch (recipe) {
    case QuantRecipe::fp8_delayed:
      return 2 + 1 + 1;
    case QuantRecipe::fp8_current:
      return 2 + (2 + 1 + 1);
    case QuantRecipe::fp8_blockwise:
      return 2 + 2 * (1 + 4.0 / 128);
    case QuantRecipe::mxfp8:
      return 2 + 2 * (1 + 1.0 / 32);
    case QuantRecipe::nvfp4:
      return kNvfp4QuantizeBytesPerElement;
  }
  throw std::logic_error("quantize_bytes_per_element: unknown recipe");
}

double quantize_hbm_fraction(QuantRecipe recipe) {
  return recipe == QuantRecipe::fp8_delayed ? kDelayedCastHbmFraction : kQuantizeHbmFraction;
}

double quantize_seconds(const ComputeProfile& profile, QuantRecipe recipe, double elements) {
  if (!(elements > 0)) return 0.0;
  if (!(profile.hbm_bandwidth > 0)) throw std::logic_error("quantize_seconds: profile without HBM bandwidth");
  const double bytes = elements * quantize_bytes_per_element(recipe);
  return std::max(profile.min_kernel_s, bytes / (profile.hbm_bandwidth * quantize_hbm_fraction(recipe)));
}

void scale_catalog_kernel_time(ComputeProfile& profile, double scale) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::logic_error("scale_catalog_kernel_time: scale must be > 0");
  for (double& e : profile.efficiency) e = std::min(e / scale, kMaxKernelEfficiency);
}

}  // namespace moetwin
