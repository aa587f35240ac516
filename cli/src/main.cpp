// moetwin: the command-line entry point. Wires subcommands; no logic here. `net` and `sweep` run in their
// own executables (delegated_commands.hpp) so that this one links neither SimGrid/ns-3 nor MPI nor HDF5.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "delegated_commands.hpp"
#include "moetwin/common/input_error.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  using namespace moetwin;
  const std::string sub = cli::subcommand_of(argc, argv);
  for (const cli::DelegatedCommand& c : cli::delegated_commands()) {
    if (c.name != sub) continue;
    // exec_sibling returns only on failure: call it before writing anything (cerr is unbuffered, so
    // `cerr << "error: " << exec_sibling(...)` would print the prefix ahead of the sibling's own output).
    const std::string failure = cli::exec_sibling(c, argc, argv);
    std::cerr << "error: " << failure << '\n';
    return exit_code::internal_error;
  }
  return cli::run_cli(argc, argv, [](CLI::App& app, const cli::GlobalOptions& global) {
    // Subcommands are registered here (see commands.hpp), in help order.
    cli::add_inspect_command(app, global);
    cli::add_import_command(app, global);
    cli::add_delegated_command_stub(app, "net");
    cli::add_dispatch_command(app, global);
    cli::add_predict_command(app, global);
    cli::add_plan_command(app, global);
    cli::add_report_command(app, global);
    cli::add_delegated_command_stub(app, "sweep");
    cli::add_validate_command(app, global);
    cli::add_recommend_command(app, global);
    cli::add_compare_command(app, global);
    cli::add_catalog_command(app, global);
    cli::add_params_command(app, global);
  });
}
