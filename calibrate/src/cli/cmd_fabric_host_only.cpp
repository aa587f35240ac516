// Builds without CUDA: --gpu buffers are not available.
#include "moetwin/calibrate/fabric_bench.hpp"
#include "moetwin/calibrate/no_device_error.hpp"

namespace moetwin::calibrate_cli {

FabricBuffers cuda_fabric_buffers(int /*device*/) {
  throw NoDeviceError("--gpu needs a CUDA build of moetwin-calibrate");
}

}  // namespace moetwin::calibrate_cli
