// Thrown when a calibration needs hardware or a library that is not there (no GPU, no NCCL, no
// libfabric provider, a build without CUDA). moetwin-calibrate maps it to exit code 4
// (exit_code::no_device), distinct from bad input (2) and bugs (3).
#pragma once

#include <stdexcept>
#include <string>

namespace moetwin {

class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace moetwin
