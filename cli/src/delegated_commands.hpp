// Commands that run in their own executable beside `moetwin`, so that the main binary links none of the
// libraries only they need: `sweep` (Open MPI for mpirun, HDF5 for PREFIX.h5) runs in `moetwin-sweep`, `net`
// (SimGrid and, through it, ns-3 for --backend simgrid) in `moetwin-net`. `moetwin sweep ...` replaces the
// process with the sibling executable (execv: same pid, environment and arguments, so mpirun and signals
// see one process), and `moetwin --help` lists them like every other command. Why: loading SimGrid, ns-3,
// Open MPI and HDF5 was 43% of `moetwin predict`'s start (docs/2026-12-04-start-up.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace moetwin::cli {

struct DelegatedCommand {
  std::string name;         // the subcommand: "sweep"
  std::string executable;   // the sibling that runs it: "moetwin-sweep"
  std::string description;  // the one-line help, the same in both executables
};

// The delegated commands, in help order.
const std::vector<DelegatedCommand>& delegated_commands();
const DelegatedCommand& delegated_command(const std::string& name);

// The subcommand named on the command line (the first argument that is neither an option nor the value
// of a top-level option taking one, i.e. --catalog DIR), or "" when there is none.
std::string subcommand_of(int argc, char** argv);

// The sibling executable's path: the directory of this process's executable (/proc/self/exe) joined with
// `executable`.
std::string sibling_path(const std::string& executable);

// Replaces this process with the sibling executable running `argv` (argv[0] becomes its path). Returns
// only on failure, with an error message naming the path and the reason (the caller exits 3: the
// installation is incomplete, not the user's input).
std::string exec_sibling(const DelegatedCommand& command, int argc, char** argv);

// Registers the delegated command `name` in `app` for the top-level help only: its callback never runs,
// because main() hands the command line to the sibling before parsing.
void add_delegated_command_stub(CLI::App& app, const std::string& name);

}  // namespace moetwin::cli
