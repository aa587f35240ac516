// Builds without CUDA: the GPU calibrations exist as commands but report that no GPU code is here.
#include "commands.hpp"
#include "moetwin/calibrate/no_device_error.hpp"

namespace moetwin::calibrate_cli {

void add_gpu_commands(CLI::App& app) {
  for (const char* name : {"gemm", "kernels", "launch", "nccl", "all"}) {
    CLI::App* cmd = app.add_subcommand(name, "GPU calibration (this build has no CUDA)");
    cmd->allow_extras();
    cmd->callback([] {
      throw NoDeviceError("this moetwin-calibrate was built without CUDA (MOETWIN_CUDA=OFF or no nvcc)");
    });
  }
}

}  // namespace moetwin::calibrate_cli
