#include "run_cli.hpp"

#include <exception>
#include <iostream>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/replay_allocator.hpp"
#include "moetwin/common/safe_file.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin::cli {

int run_cli(int argc, char** argv, const std::function<void(CLI::App&, const GlobalOptions&)>& add_commands) {
  // Freed memory stays in the process for reuse (common/replay_allocator.hpp): `predict
  // scenarios/default.toml` took 2,082 page faults without it, 1,645 with it (docs/2026-12-04-start-up.md).
  keep_freed_memory_for_reuse();
  // Named "moetwin" in every executable: the sibling of a delegated command prints the same usage lines.
  CLI::App app{"moetwin: deterministic digital twin of MoE expert-parallel training on AWS EFA", "moetwin"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitRevision + ")");
  GlobalOptions global;
  app.add_option("--catalog", global.catalog_dir,
                 "Catalog directory (default: $MOETWIN_CATALOG or the shipped one)");
  add_commands(app, global);
  check_output_options(app);

  try {
    refuse_output_over_input(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with exit 0: their text, too, must reach standard output.
    const int code = app.exit(e);
    return code == 0 ? check_standard_output() : exit_code::input_error;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return exit_code::input_error;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return exit_code::internal_error;
  }
  return check_standard_output();
}

}  // namespace moetwin::cli
