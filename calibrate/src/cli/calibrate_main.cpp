// moetwin-calibrate: one-node calibration (GPU kernels, NCCL, libfabric) and importers into the HDF5
// calibration database, and the fitter that turns a database into a profile. Wiring only.
#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/no_device_error.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/safe_file.hpp"
#include "moetwin/common/version.hpp"

int main(int argc, char** argv) {
  using namespace moetwin;
  CLI::App app{"moetwin-calibrate: measure one node and write an HDF5 calibration database"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitRevision + ")");
  calibrate_cli::add_import_commands(app);
  calibrate_cli::add_show_command(app);
  calibrate_cli::add_stamp_command(app);
  calibrate_cli::add_fabric_command(app);
  calibrate_cli::add_fit_command(app);
  calibrate_cli::add_gpu_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with exit 0: their text, too, must reach standard output.
    const int code = app.exit(e);
    return code == 0 ? check_standard_output() : exit_code::input_error;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return exit_code::input_error;
  } catch (const NoDeviceError& e) {
    std::cerr << "no device: " << e.what() << '\n';
    return exit_code::no_device;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return exit_code::internal_error;
  }
  // `show DB > /dev/full` is a failure, not a success with the output lost.
  return check_standard_output();
}
