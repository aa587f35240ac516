// The helpers every command shares (commands.hpp): row inputs, output writing, the output-path checks.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "commands.hpp"
#include "delegated_commands.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/validate/logged_flops.hpp"

namespace moetwin::cli {

void add_row_input_options(CLI::App* cmd, RowInput& input) {
  auto* scenario = cmd->add_option("SCENARIO", input.scenario, "Scenario file (.toml)");
  auto* runs = cmd->add_option(
      "--runs", input.runs,
      "Live-run CSV (shared/data/live-runs.csv schema): one row each; repeat for several files");
  scenario->excludes(runs);
  runs->excludes(scenario);
  cmd->add_option("--format", input.format, "text | json | csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", input.out, "Output file, written atomically (default stdout)");
}

void add_what_if_no_tp_comm_overlap_option(CLI::App* cmd, bool& on) {
  cmd->add_flag("--what-if-no-tp-comm-overlap", on,
                "With --runs: replay NVIDIA's dense rows without the Transformer Engine TP communication "
                "overlap their recipes are assumed to run (training.tp_comm_overlap; not published per row)");
}

std::string runs_label(const std::vector<std::string>& runs) {
  std::string out;
  for (const std::string& r : runs) out += (out.empty() ? "" : " + ") + r;
  return out;
}

void print_row_warnings(const LiveRunTable& table) {
  for (const LiveRun& run : table.runs) {
    for (const std::string& warning : run.warnings) std::cerr << "warning: " << warning << '\n';
  }
}

void add_strict_option(CLI::App* cmd, bool& strict) {
  cmd->add_flag("--strict", strict,
                "Exit 2 when a row's logged TFLOP/s and the twin's model FLOPs over iter_s disagree by more "
                "than 5% (default: a warning)");
}

void check_row_flops(const LiveRunTable& table, bool strict) {
  for (const std::string& w : check_logged_flops(table, strict)) std::cerr << "warning: " << w << '\n';
}

void emit_output(const std::string& content, const std::string& out_path) {
  if (out_path.empty() || out_path == "-") {
    std::cout << content;
    std::cout.flush();
    // A redirect into a full disk (`> /dev/full`) fails here or at the final flush (close_standard_output).
    if (!std::cout) throw InputError({"standard output", 0}, concat({"write error: ", std::strerror(errno)}));
    return;
  }
  write_file_atomically(out_path, content);
}

// The options that name a file the command writes, and the suffixes it appends (sweep's --out is a prefix).
std::vector<std::string> written_paths(const std::string& option, const std::string& value,
                                       const std::string& command) {
  if (value.empty() || value == "-") return {};
  if (option == "--out" && command == "sweep") return {value + ".csv", value + ".h5", value + ".journal"};
  return {value};
}

void refuse_output_over_input(int argc, char** argv) {
  namespace fs = std::filesystem;
  static const std::set<std::string> kOutputs = {"--out", "--write-profile", "--trace"};
  const std::string command = subcommand_of(argc, argv);  // skips --catalog's value, unlike a first-word scan
  struct Output {
    std::string option, path;
    int index;  // argv index of the value
  };
  std::vector<Output> outputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (!kOutputs.count(name)) continue;
    if (eq != std::string::npos) {
      for (const std::string& p : written_paths(name, arg.substr(eq + 1), command))
        outputs.push_back({name, p, i});
    } else if (i + 1 < argc) {
      for (const std::string& p : written_paths(name, argv[i + 1], command))
        outputs.push_back({name, p, i + 1});
    }
  }
  for (const Output& out : outputs) {
    std::error_code ec;
    if (!fs::is_regular_file(out.path, ec)) continue;  // a new file, or a device: no input to lose
    for (int i = 1; i < argc; ++i) {
      if (i == out.index) continue;
      std::string arg = argv[i];
      if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos)
        arg = arg.substr(eq + 1);
      if (arg.empty() || !fs::is_regular_file(arg, ec)) continue;
      if (fs::equivalent(arg, out.path, ec) && !ec) {
        throw InputError({out.path, 0}, out.option, out.path,
                         concat({"a file other than the input ", arg,
                                 " (the output would overwrite what the command reads)"}));
      }
    }
  }
}

// Output paths are checked while parsing, before any work: a missing folder after a ten-minute fit would
// lose the fit. `suffix` is what the command appends (sweep's --out is a prefix for PREFIX.csv, ...).
void check_output_options(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    const std::string suffix = sub->get_name() == "sweep" ? ".csv" : "";
    for (const char* name : {"--out", "--write-profile", "--trace"}) {
      CLI::Option* o = sub->get_option_no_throw(name);
      if (o == nullptr) continue;
      o->check(CLI::Validator(
          [suffix](std::string& path) {
            if (path.empty() || path == "-") return std::string();
            try {
              check_output_path(path + suffix);
            } catch (const InputError& e) {
              return std::string(e.what());
            }
            return std::string();
          },
          "PATH", "output path"));
    }
    check_output_options(*sub);
  }
}

}  // namespace moetwin::cli
