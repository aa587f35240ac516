// moetwin: the command-line entry point. Wires subcommands; no logic here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/version.hpp"

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

void emit_output(const std::string& content, const std::string& out_path) {
  if (out_path.empty() || out_path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  write_file_atomically(out_path, content);
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

int main(int argc, char** argv) {
  using namespace moetwin;
  CLI::App app{"moetwin: deterministic digital twin of MoE expert-parallel training on AWS EFA"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion) + " (" + kGitRevision + ")");
  cli::GlobalOptions global;
  app.add_option("--catalog", global.catalog_dir,
                 "Catalog directory (default: $MOETWIN_CATALOG or the shipped one)");

  // Subcommands are registered here (see commands.hpp).
  cli::add_inspect_command(app, global);
  cli::add_import_command(app, global);
  cli::add_net_command(app, global);
  cli::add_dispatch_command(app, global);
  cli::add_predict_command(app, global);
  cli::add_plan_command(app, global);
  cli::add_report_command(app, global);
  cli::add_sweep_command(app, global);
  cli::add_validate_command(app, global);
  cli::add_recommend_command(app, global);
  cli::add_compare_command(app, global);
  cli::add_catalog_command(app, global);
  cli::add_params_command(app, global);

  cli::check_output_options(app);

  try {
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
  return exit_code::ok;
}
