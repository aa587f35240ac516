// The body every moetwin executable shares (moetwin, moetwin-sweep, moetwin-net): the top-level options,
// the commands `add_commands` registers, output-path checks before any work, and the exit codes of README.md.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "commands.hpp"

namespace moetwin::cli {

int run_cli(int argc, char** argv, const std::function<void(CLI::App&, const GlobalOptions&)>& add_commands);

}  // namespace moetwin::cli
