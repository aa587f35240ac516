#include "run_cli.hpp"

#include <malloc.h>

#include <exception>
#include <iostream>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin::cli {

namespace {

// glibc hands blocks above 128 KiB (its default, raised dynamically up to 32 MiB) to mmap and returns the
// heap's top to the OS past 128 KiB free, so a command that grows and frees vectors of ops, per-rank
// durations and CSV rows maps and faults the same pages again and again: in this VM a page fault costs
// ~10 us, and `predict scenarios/default.toml` took 2,080 of them (42 ms of CPU, 35 with these settings,
// docs/2026-12-04-start-up.md). Keeping freed memory in the process (up to 64 MiB above the heap top; blocks
// up to 32 MiB from the heap) trades at most that much idle RSS for the faults. No output depends on it.
void keep_freed_memory() {
  constexpr int kMmapThresholdBytes = 32 << 20;
  constexpr int kTrimThresholdBytes = 64 << 20;
  ::mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  ::mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
}

}  // namespace

int run_cli(int argc, char** argv, const std::function<void(CLI::App&, const GlobalOptions&)>& add_commands) {
  keep_freed_memory();
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
    const int code = app.exit(e);
    return code == 0 ? exit_code::ok : exit_code::input_error;
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return exit_code::input_error;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return exit_code::internal_error;
  }
  // Output that did not reach its file is a failure, not a success with the output lost.
  if (const std::string error = finish_stdout(); !error.empty()) {
    std::cerr << "error: standard output: " << error << " (output lost)\n";
    return exit_code::input_error;
  }
  return exit_code::ok;
}

}  // namespace moetwin::cli
