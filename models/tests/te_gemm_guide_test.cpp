// GEMM rates and quantization kernels against Transformer Engine's GEMM profiling guide on a B300
// (validate/data/gemm-throughput.csv, copied from shared/data/public-2026-12 with its source): hand values
// for the recipes' quantization bytes and times, FP8 at the measured relative efficiency, and the catalog
// B300 pricing the guide's Llama-like layer (hidden 4096, FFN 16384, 15,872 tokens; 12 GEMMs: fprop, dgrad
// and wgrad of QKV, attention output, MLP up and down) within 10 % per precision, kernels only and with
// quantization. The B300 values were measured on these rows (catalog/data/gpus.toml), so this checks that
// the catalog and the pricing reproduce them, in sample; docs/2026-12-07-gemm-by-shape.md has the table.
#include <gtest/gtest.h>

#include <stdexcept>

#include "hand_compute_profile.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/models/compute_model.hpp"

namespace moetwin {
namespace {

TEST(Quantization, BytesPerElementFollowTransformerEnginesDataFlow) {
  // Delayed: one cast-transpose, read 2, write FP8 and its transpose 1 + 1.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::fp8_delayed), 4.0);
  // Current: the amax pass reads the tensor once more before the cast-transpose.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::fp8_current), 6.0);
  // Blockwise: two FP8 copies with an FP32 scale per 128 elements; MXFP8: an E8M0 scale per 32.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::fp8_blockwise), 2 + 2 * (1 + 4.0 / 128));
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::mxfp8), 4.0625);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::nvfp4), 5.125);
}

TEST(Quantization, KernelsRunAtTheMeasuredFractionOfHbm) {
  ComputeProfile p;
  p.hbm_bandwidth = 8e12;
  // 1e9 elements under current scaling: 6e9 B at 8e12 x 0.344 = 2.180 ms.
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::fp8_current, 1e9), 6e9 / (8e12 * 0.344));
  // Delayed scaling's fused cast-transpose at its own measured fraction: 4e9 B at 8e12 x 0.627 = 0.797 ms.
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::fp8_delayed, 1e9), 4e9 / (8e12 * 0.627));
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::mxfp8, 1e9), 4.0625e9 / (8e12 * 0.344));
  // Nothing to quantize costs nothing; a tiny tensor costs one kernel.
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::mxfp8, 0), 0.0);
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::mxfp8, 100), p.min_kernel_s);
  // The fitted time scales divide the efficiency table, never the measured quantization fraction.
  ComputeProfile scaled = p;
  scale_catalog_kernel_time(scaled, 2.0);
  EXPECT_DOUBLE_EQ(quantize_seconds(scaled, QuantRecipe::fp8_current, 1e9),
                   quantize_seconds(p, QuantRecipe::fp8_current, 1e9));
}

TEST(Quantization, RecipeOfEachQuantizedPrecision) {
  EXPECT_EQ(quant_recipe(Precision::fp8_hybrid), QuantRecipe::fp8_delayed);
  EXPECT_EQ(quant_recipe(Precision::fp8_current), QuantRecipe::fp8_current);
  EXPECT_EQ(quant_recipe(Precision::fp8_blockwise), QuantRecipe::fp8_blockwise);
  EXPECT_EQ(quant_recipe(Precision::mxfp8), QuantRecipe::mxfp8);
  EXPECT_EQ(quant_recipe(Precision::nvfp4), QuantRecipe::nvfp4);
  EXPECT_THROW(quant_recipe(Precision::bf16), std::logic_error);
}

TEST(Fp8Roofline, RecipeRelativeEfficiencyScalesTheFp8Peak) {
  ComputeProfile p = models_test::hand_fp8_profile();
  p.fp8_relative_efficiency = 0.9;
  p.mxfp8_relative_efficiency = 0.8;
  // 3e10 FLOP at 2e15 x 0.9 x 0.75 (gemm class) = 22.22 us; MXFP8 at 2e15 x 0.8 x 0.75 = 25 us.
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(p, QuantRecipe::fp8_current, OpClass::gemm, 3e10, 1e6, {}),
                   3e10 / (2e15 * 0.9 * 0.75));
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(p, QuantRecipe::fp8_delayed, OpClass::gemm, 3e10, 1e6, {}),
                   3e10 / (2e15 * 0.9 * 0.75));
  EXPECT_DOUBLE_EQ(fp8_kernel_seconds(p, QuantRecipe::mxfp8, OpClass::gemm, 3e10, 1e6, {}), 25e-6);
  EXPECT_THROW(fp8_kernel_seconds(p, QuantRecipe::nvfp4, OpClass::gemm, 3e10, 1e6, {}), std::logic_error);
}

// The guide's layer: M = 15,872 tokens; linears (k -> n): QKV 4096 -> 12288, attention output 4096 -> 4096,
// MLP up 4096 -> 16384, MLP down 16384 -> 4096.
constexpr double kM = 15872;
struct Linear {
  double k, n;
};
constexpr Linear kLinears[] = {{4096, 12288}, {4096, 4096}, {4096, 16384}, {16384, 4096}};

// The 12 GEMMs' kernel time as the stage builder prices a linear (stage_ops.cpp linear_seconds): fprop
// [M x k] x [k x n], dgrad [M x n] x [n x k], wgrad [k x M] x [M x n]; bytes at 2 B for bf16, FP8 operands
// (1 B) with a bf16 output, NVFP4 operands (0.5625 B) with a bf16 output.
double layer_kernels_s(const ComputeProfile& p, Precision precision) {
  double t = 0;
  for (const Linear& l : kLinears) {
    const GemmDims shapes[] = {{kM, l.n, l.k}, {kM, l.k, l.n}, {l.k, l.n, kM}};
    for (const GemmDims& d : shapes) {
      const double flops = 2 * d.m * d.n * d.k;
      const double bytes = 2 * (d.m * d.k + d.k * d.n + d.m * d.n);
      if (precision == Precision::bf16) {
        t += kernel_seconds(p, OpClass::gemm, flops, bytes, d);
      } else if (precision == Precision::nvfp4) {
        t += fp4_kernel_seconds(
            p, OpClass::gemm, flops,
            bytes / 2 * kNvfp4OperandBytesPerElement + (2 - kNvfp4OperandBytesPerElement) * d.m * d.n);
      } else {
        t += fp8_kernel_seconds(p, quant_recipe(precision), OpClass::gemm, flops, 0.5 * bytes + d.m * d.n, d);
      }
    }
  }
  return t;
}

// What the guide's autocast quantizes per layer: every linear's input (M x k), output gradient (M x n) and,
// on every call, its weight (k x n): 455.1 M + 585.1 M + 201.3 M elements.
double layer_quantized_elements() {
  double e = 0;
  for (const Linear& l : kLinears) e += kM * l.k + kM * l.n + l.k * l.n;
  return e;
}

TEST(TeGemmGuide, CatalogB300PricesTheGuidesLayerWithinTenPercent) {
  const ComputeProfile b300 = ComputeProfile::from_gpu(Catalog::shared_default().gpu("B300"));
  EXPECT_NEAR(layer_quantized_elements(), 1241.513984e6, 1);
  // Kernels only (the guide's pre-quantized rows), ms.
  EXPECT_NEAR(layer_kernels_s(b300, Precision::bf16) / 13.102e-3, 1.0, 0.10);
  EXPECT_NEAR(layer_kernels_s(b300, Precision::fp8_current) / 6.812e-3, 1.0, 0.10);
  EXPECT_NEAR(layer_kernels_s(b300, Precision::mxfp8) / 7.161e-3, 1.0, 0.10);
  EXPECT_NEAR(layer_kernels_s(b300, Precision::nvfp4) / 3.764e-3, 1.0, 0.10);
  // With quantization (autocast): the kernels plus the recipe's quantization of the layer's tensors.
  const auto autocast = [&](Precision precision) {
    return layer_kernels_s(b300, precision) +
           quantize_seconds(b300, quant_recipe(precision), layer_quantized_elements());
  };
  EXPECT_NEAR(layer_kernels_s(b300, Precision::bf16) / 12.758e-3, 1.0, 0.10);
  EXPECT_NEAR(autocast(Precision::fp8_current) / 9.147e-3, 1.0, 0.10);
  EXPECT_NEAR(autocast(Precision::fp8_hybrid) / 7.802e-3, 1.0, 0.10);
  EXPECT_NEAR(autocast(Precision::mxfp8) / 8.984e-3, 1.0, 0.10);
  EXPECT_NEAR(autocast(Precision::nvfp4) / 6.453e-3, 1.0, 0.10);
}

TEST(TeGemmGuide, BlackwellCatalogCarriesTheB300Measurement) {
  const Catalog& c = Catalog::shared_default();
  for (const char* name : {"B200", "B300", "GB200", "GB300"}) {
    const GpuSpec& g = c.gpu(name);
    EXPECT_DOUBLE_EQ(g.efficiency.at("gemm"), 0.650) << name;
    EXPECT_DOUBLE_EQ(g.fp8_relative_efficiency, 0.962) << name;
    EXPECT_DOUBLE_EQ(g.mxfp8_relative_efficiency, 0.915) << name;
  }
  // Measured on B300 (kernels only, 19.17 TFLOP per layer): BF16 1463.3 TFLOP/s of 2250, FP8 current 2814.6
  // and MXFP8 2677.4 of 4500; the catalog's products reproduce them within 0.1 %.
  const GpuSpec& b300 = c.gpu("B300");
  const double bf16 = b300.efficiency.at("gemm");
  EXPECT_NEAR(b300.bf16_flops * bf16 / 1463.3e12, 1.0, 1e-3);
  EXPECT_NEAR(b300.fp8_flops * bf16 * b300.fp8_relative_efficiency / 2814.6e12, 1.0, 1e-3);
  EXPECT_NEAR(b300.fp8_flops * bf16 * b300.mxfp8_relative_efficiency / 2677.4e12, 1.0, 1e-3);
  // Hopper keeps 1 (its FP8 GEMMs come from measured curves).
  EXPECT_DOUBLE_EQ(c.gpu("H100-SXM").fp8_relative_efficiency, 1.0);
}

}  // namespace
}  // namespace moetwin
