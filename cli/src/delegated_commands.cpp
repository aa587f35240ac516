#include "delegated_commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "moetwin/common/concat.hpp"

namespace moetwin::cli {

const std::vector<DelegatedCommand>& delegated_commands() {
  static const std::vector<DelegatedCommand> commands = {
      {"net", "moetwin-net",
       "Predict one collective of a scenario's process group: time, bandwidth, per-link utilisation"},
      {"sweep", "moetwin-sweep",
       "Predict every point of a grid (threads, or MPI ranks under mpirun); resumable; CSV + HDF5"},
  };
  return commands;
}

const DelegatedCommand& delegated_command(const std::string& name) {
  for (const DelegatedCommand& c : delegated_commands()) {
    if (c.name == name) return c;
  }
  throw std::logic_error("delegated_command: no command " + name);
}

std::string subcommand_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--catalog") {
      ++i;  // its value is the next argument
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    return arg;
  }
  return {};
}

std::string sibling_path(const std::string& executable) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return executable;  // no procfs: execv fails and says so with this name
  return (self.parent_path() / executable).string();
}

std::string exec_sibling(const DelegatedCommand& command, int argc, char** argv) {
  const std::string path = sibling_path(command.executable);
  std::vector<char*> args(argv, argv + argc);
  args[0] = const_cast<char*>(path.c_str());
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  return concat({"moetwin ", command.name, " runs in ", path, ", which could not be started (",
                 std::strerror(errno), "); build it with `cmake --build BUILD --target ", command.executable,
                 "` or install it beside moetwin"});
}

void add_delegated_command_stub(CLI::App& app, const std::string& name) {
  const DelegatedCommand& c = delegated_command(name);
  app.add_subcommand(c.name, c.description)->allow_extras();
}

}  // namespace moetwin::cli
