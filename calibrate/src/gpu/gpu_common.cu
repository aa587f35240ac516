// GPU helpers (gpu_common.hpp).
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "gpu_common.hpp"
#include "moetwin/calibrate/no_device_error.hpp"

namespace moetwin::gpu {

namespace {

__device__ __forceinline__ float hash_uniform(unsigned long long seed, std::size_t i) {
  // SplitMix64 of (seed, index): deterministic, independent of launch shape.
  unsigned long long z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / 16777216.0f;
}

__global__ void fill_bf16_kernel(unsigned short* p, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = hash_uniform(seed, i) * 2.0f - 1.0f;
    p[i] = static_cast<unsigned short>(__float_as_uint(v) >> 16);
  }
}

__global__ void fill_fp8_e4m3_kernel(unsigned char* p, std::size_t n, unsigned long long seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = hash_uniform(seed, i) * 2.0f - 1.0f;
    p[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
  }
}

__global__ void fill_f32_kernel(float* p, std::size_t n, unsigned long long seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = lo + (hi - lo) * hash_uniform(seed, i);
  }
}

}  // namespace

int require_gpu() {
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess || n == 0) {
    throw NoDeviceError(std::string("no usable CUDA device: ") +
                        (status == cudaSuccess ? "0 devices" : cudaGetErrorString(status)));
  }
  return n;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

Provenance gpu_provenance(const std::string& tool) {
  Provenance p = base_provenance(tool);
  const int n = require_gpu();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  p.gpu_name = prop.name;
  p.gpu_count = n;
  p.sm_count = prop.multiProcessorCount;
  int clock_khz = 0;
  int mem_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  p.sm_clock_hz = clock_khz * 1e3;
  p.mem_clock_hz = mem_khz * 1e3;
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  // CUDA encodes versions as 1000 * major + 10 * minor (e.g. 13000 = 13.0).
  p.driver_version =
      "cuda-driver-api " + std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  p.cuda_version = std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  return p;
}

std::vector<double> time_launches(const std::function<void()>& launch, cudaStream_t stream,
                                  const TimingOptions& o) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < o.warmup; ++i) launch();
  check(cudaStreamSynchronize(stream), "warm-up");
  check(cudaEventRecord(start, stream), "cudaEventRecord");
  launch();
  check(cudaEventRecord(stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  const double one = std::max(1e-7, ms * 1e-3);
  const int reps =
      static_cast<int>(std::clamp(std::ceil(o.target_batch_s / one), 1.0, static_cast<double>(o.max_reps)));
  std::vector<double> out;
  for (int s = 0; s < o.samples; ++s) {
    if (o.cooldown_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.cooldown_s));
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) launch();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    out.push_back(ms * 1e-3 / reps);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return out;
}

void fill_bf16(void* ptr, std::size_t count, unsigned long long seed, cudaStream_t stream) {
  fill_bf16_kernel<<<1024, 256, 0, stream>>>(static_cast<unsigned short*>(ptr), count, seed);
  check(cudaGetLastError(), "fill_bf16");
}

void fill_f32(float* ptr, std::size_t count, unsigned long long seed, float lo, float hi,
              cudaStream_t stream) {
  fill_f32_kernel<<<1024, 256, 0, stream>>>(ptr, count, seed, lo, hi);
  check(cudaGetLastError(), "fill_f32");
}

void fill_fp8_e4m3(void* ptr, std::size_t count, unsigned long long seed, cudaStream_t stream) {
  fill_fp8_e4m3_kernel<<<1024, 256, 0, stream>>>(static_cast<unsigned char*>(ptr), count, seed);
  check(cudaGetLastError(), "fill_fp8_e4m3");
}

int compute_capability() {
  require_gpu();
  int major = 0;
  int minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), "compute capability");
  return 10 * major + minor;
}

DeviceMemory::DeviceMemory(std::size_t bytes) {
  check(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 256)), "cudaMalloc");
}
DeviceMemory::~DeviceMemory() {
  cudaFree(ptr_);
}

}  // namespace moetwin::gpu
