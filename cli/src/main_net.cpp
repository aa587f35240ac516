// moetwin-net: `moetwin net` in its own executable, the one that links SimGrid (and ns-3 through it) for
// --backend simgrid. Users run it as `moetwin net ...`; moetwin hands the command line over
// (delegated_commands.hpp).
#include "commands.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  return moetwin::cli::run_cli(argc, argv, [](CLI::App& app, const moetwin::cli::GlobalOptions& global) {
    moetwin::cli::add_net_command(app, global);
  });
}
