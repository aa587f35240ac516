// moetwin-sweep: `moetwin sweep` in its own executable, the one that links Open MPI (mpirun) and HDF5
// (PREFIX.h5). Users run it as `moetwin sweep ...`; moetwin hands the command line over
// (delegated_commands.hpp).
#include "commands.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  return moetwin::cli::run_cli(argc, argv, [](CLI::App& app, const moetwin::cli::GlobalOptions& global) {
    moetwin::cli::add_sweep_command(app, global);
  });
}
