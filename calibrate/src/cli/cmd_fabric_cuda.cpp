// CUDA builds: fabric --gpu puts the message buffers in GPU memory (registered with FI_HMEM_CUDA).
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "moetwin/calibrate/fabric_bench.hpp"
#include "moetwin/calibrate/no_device_error.hpp"

namespace moetwin::calibrate_cli {

FabricBuffers cuda_fabric_buffers(int device) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n) {
    throw NoDeviceError("fabric --gpu: CUDA device " + std::to_string(device) + " not available");
  }
  if (cudaSetDevice(device) != cudaSuccess) throw NoDeviceError("fabric --gpu: cudaSetDevice failed");
  FabricBuffers b;
  b.cuda = true;
  b.cuda_device = device;
  b.allocate = [](std::size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc of fabric buffer failed");
    cudaMemset(p, 0, bytes);
    return p;
  };
  b.release = [](void* p) { cudaFree(p); };
  return b;
}

}  // namespace moetwin::calibrate_cli
