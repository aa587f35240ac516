// NVFP4 kernels (Transformer Engine's NVFP4 recipe): fp4_kernel_seconds is the roofline at the FP4 peak x
// the class efficiency x the relative NVFP4 efficiency, quantize_seconds the quantization's bytes at the
// measured fraction of HBM bandwidth (hand-computed times), and the catalog's Blackwell GPUs carry the FP4
// rates.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hand_compute_profile.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/models/compute_model.hpp"

namespace moetwin {
namespace {

// bf16 peak 1e15, FP4 peak 6e15 at relative efficiency 0.5, HBM 5e12 B/s, class efficiencies gemm 0.75,
// grouped 0.6, attention 0.5, elementwise 0.8; 2 us minimum kernel.
ComputeProfile fp4_profile() {
  ComputeProfile p = models_test::hand_fp8_profile();
  p.fp4_peak_flops = 6e15;
  p.fp4_relative_efficiency = 0.5;
  return p;
}

TEST(Nvfp4Compute, QuantizationMovesFiveAndAnEighthBytesPerElement) {
  // amax read 2 + cast read 2 + two E2M1 copies of 0.5 B with an E4M3 scale per 16 elements (1/16 B each).
  EXPECT_DOUBLE_EQ(kNvfp4QuantizeBytesPerElement, 5.125);
  EXPECT_DOUBLE_EQ(kNvfp4OperandBytesPerElement, 0.5625);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(QuantRecipe::nvfp4), 5.125);
  const ComputeProfile p = fp4_profile();
  // 1e9 elements: 5.125e9 B at 5e12 x 0.344 B/s (the measured quantization fraction of HBM) = 2.980 ms.
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::nvfp4, 1e9), 5.125e9 / (5e12 * 0.344));
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::nvfp4, 0), 0.0);
  EXPECT_DOUBLE_EQ(quantize_seconds(p, QuantRecipe::nvfp4, 10), 2e-6);  // never below one kernel
}

TEST(Nvfp4Compute, GemmRunsAtTheFp4PeakTimesClassAndRelativeEfficiency) {
  const ComputeProfile p = fp4_profile();
  // Compute-bound: 1e13 FLOPs / (6e15 x 0.5 x 0.75) = 4.444 ms; bytes 1e8 at 5e12 x 0.8 = 25 us.
  EXPECT_DOUBLE_EQ(fp4_kernel_seconds(p, OpClass::gemm, 1e13, 1e8), 1e13 / (6e15 * 0.5 * 0.75));
  // Grouped GEMMs at their own class efficiency (0.6).
  EXPECT_DOUBLE_EQ(fp4_kernel_seconds(p, OpClass::grouped_gemm, 1e13, 1e8), 1e13 / (6e15 * 0.5 * 0.6));
  // Memory-bound: 1e9 FLOPs (0.44 us) moving 1e9 B: 1e9 / 4e12 = 250 us.
  EXPECT_DOUBLE_EQ(fp4_kernel_seconds(p, OpClass::gemm, 1e9, 1e9), 1e9 / (5e12 * 0.8));
  // The same GEMM in bf16 at 1e15 x 0.75: 6x the FP4 peak at half the efficiency -> 3x faster in FP4.
  EXPECT_NEAR(kernel_seconds(p, OpClass::gemm, 1e13, 1e8) / fp4_kernel_seconds(p, OpClass::gemm, 1e13, 1e8),
              3.0, 1e-12);
  ComputeProfile hopper = p;
  hopper.fp4_peak_flops = 0;
  EXPECT_THROW(fp4_kernel_seconds(hopper, OpClass::gemm, 1e13, 1e8), std::logic_error);
}

TEST(Nvfp4Compute, CatalogBlackwellHasFp4RatesAndHopperNone) {
  const Catalog& c = Catalog::shared_default();
  // Dense NVFP4 peaks (catalog/data/gpus.toml): HGX B200 9 PF, GB200 10 PF, B300 13.5 PF, GB300 15 PF.
  EXPECT_DOUBLE_EQ(c.gpu("B200").fp4_flops, 9000e12);
  EXPECT_DOUBLE_EQ(c.gpu("GB200").fp4_flops, 10000e12);
  EXPECT_DOUBLE_EQ(c.gpu("B300").fp4_flops, 13500e12);
  EXPECT_DOUBLE_EQ(c.gpu("GB300").fp4_flops, 15000e12);
  for (const char* h : {"H100-SXM", "H200-SXM", "H800-SXM"}) {
    EXPECT_EQ(c.gpu(h).fp4_flops, 0.0) << h;
    EXPECT_EQ(ComputeProfile::from_gpu(c.gpu(h)).fp4_peak_flops, 0.0) << h;
  }
  // The relative efficiency reproduces the B300 kernel-only measurement it came from (TE GEMM profiling
  // guide: 12 GEMMs of a hidden-4096 / FFN-16384 layer at 15,872 tokens, 19.17 TFLOP in 3.764 ms; BF16 at
  // 0.6504 of its peak): NVFP4 = 13500 x 0.6504 x 0.580 TFLOP/s = 5093 within 0.1 %.
  const GpuSpec& b300 = c.gpu("B300");
  EXPECT_NEAR(b300.fp4_flops * 0.6504 * b300.fp4_relative_efficiency / 5093.7e12, 1.0, 1e-3);
  const ComputeProfile p = ComputeProfile::from_gpu(b300);
  EXPECT_DOUBLE_EQ(p.fp4_peak_flops, 13500e12);
  EXPECT_DOUBLE_EQ(p.fp4_relative_efficiency, 0.580);
}

}  // namespace
}  // namespace moetwin
