// Subcommands of moetwin-calibrate, one file each. Callbacks throw InputError (exit 2) or
// NoDeviceError (exit 4); calibrate_main.cpp maps them to exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace moetwin::calibrate_cli {

void add_import_commands(CLI::App& app);
void add_show_command(CLI::App& app);
void add_stamp_command(CLI::App& app);
void add_fabric_command(CLI::App& app);
void add_fit_command(CLI::App& app);
// gemm, kernels, launch, nccl: real ones in CUDA builds, stubs that exit 4 otherwise.
void add_gpu_commands(CLI::App& app);

}  // namespace moetwin::calibrate_cli
