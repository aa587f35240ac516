// Shared pieces of the GPU calibrations (CUDA builds only): device checks that turn a missing GPU into
// NoDeviceError (exit 4), provenance from the CUDA runtime, and event timing of repeated launches.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::gpu {

// Throws NoDeviceError when no CUDA device is usable; returns the device count.
int require_gpu();
// Throws std::runtime_error naming `what` on a CUDA error.
void check(cudaError_t status, const char* what);
// Provenance with GPU name, count, SMs, clocks, driver and runtime versions (cuBLAS/NCCL by callers).
Provenance gpu_provenance(const std::string& tool);

struct TimingOptions {
  int warmup = 3;
  int samples = 10;
  double target_batch_s = 2e-3;  // each sample times enough back-to-back calls to fill ~2 ms
  int max_reps = 2000;
  // Idle time before each sample. Long dense GEMMs on random data hold the H200 at its 700 W cap and
  // its clocks sink; an idle gap lets every sample start from the same (boost) state, so samples of
  // different shapes are comparable. The sustained rate is measured separately (gemm_sustained).
  double cooldown_s = 0;
};

// Times `launch` (which enqueues one call on `stream`): per-call seconds of `samples` batches.
std::vector<double> time_launches(const std::function<void()>& launch, cudaStream_t stream,
                                  const TimingOptions& options);

// Fills `count` bf16 values at `ptr` with deterministic values uniform in [-1, 1) (random data:
// the tensor cores run faster on zeros, which would flatter the GEMM rates).
void fill_bf16(void* ptr, std::size_t count, unsigned long long seed, cudaStream_t stream);
void fill_f32(float* ptr, std::size_t count, unsigned long long seed, float lo, float hi,
              cudaStream_t stream);
// The same values as fill_bf16, rounded to FP8 E4M3 (1 byte each; saturating, no NaN).
void fill_fp8_e4m3(void* ptr, std::size_t count, unsigned long long seed, cudaStream_t stream);

// Compute capability of device 0 as 10 x major + minor (90 = Hopper). FP8 tensor cores: >= 89.
int compute_capability();

// Device memory freed on scope exit.
class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

}  // namespace moetwin::gpu
