// Each subcommand of the `moetwin` CLI lives in its own file cmd_<name>.cpp and registers itself here.
// Commands throw InputError for bad input; main() turns it into a message on stderr and exit code 2.
// Wiring only: the logic lives in the module libraries.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "moetwin/reports/prediction_columns.hpp"  // profile_label(), the profile line every command prints
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin::cli {

// Options every command shares.
struct GlobalOptions {
  std::string catalog_dir;  // --catalog; default Catalog::default_dir()
};

// Registered commands. Each adds a subcommand to `app` whose callback does the work.
void add_inspect_command(CLI::App& app, const GlobalOptions& global);
void add_import_command(CLI::App& app, const GlobalOptions& global);
void add_dispatch_command(CLI::App& app, const GlobalOptions& global);
void add_net_command(CLI::App& app, const GlobalOptions& global);
void add_predict_command(CLI::App& app, const GlobalOptions& global);
void add_plan_command(CLI::App& app, const GlobalOptions& global);
void add_report_command(CLI::App& app, const GlobalOptions& global);
void add_sweep_command(CLI::App& app, const GlobalOptions& global);
void add_validate_command(CLI::App& app, const GlobalOptions& global);
void add_recommend_command(CLI::App& app, const GlobalOptions& global);
void add_compare_command(CLI::App& app, const GlobalOptions& global);
void add_catalog_command(CLI::App& app, const GlobalOptions& global);
void add_params_command(CLI::App& app, const GlobalOptions& global);

// The input and output options every row-driven command shares: one scenario or --runs FILE.csv,
// --format text|json|csv, --out FILE.
struct RowInput {
  std::string scenario;           // SCENARIO.toml (positional)
  std::vector<std::string> runs;  // --runs FILE.csv, repeatable (rows in file order)
  std::string format = "text";
  std::string out;  // "" = stdout
};
void add_row_input_options(CLI::App* cmd, RowInput& input);
// The --runs files as one label: "a.csv" or "a.csv + b.csv".
std::string runs_label(const std::vector<std::string>& runs);

// --what-if-tp-comm-overlap: with --runs, every row of tp > 1 replayed with training.tp_comm_overlap on
// (force_tp_comm_overlap, validate/dense_runs.hpp); the rows do not publish the setting.
void add_what_if_no_tp_comm_overlap_option(CLI::App* cmd, bool& on);

// --profile FILE|none: the fitted profile (default: the shipped calibrate/profiles/fitted/live-fit.toml).
void add_profile_option(CLI::App* cmd, std::string& profile);
// --network closed-form|flow: overrides the network model the profile was fitted under (SimProfile::network).
void add_network_option(CLI::App* cmd, std::string& network);
// --hbm-headroom SHARE: HBM kept free beyond the memory model's estimate (accounting/hbm_headroom.hpp),
// checked to [0, kMaxHbmHeadroom].
void add_hbm_headroom_option(CLI::App* cmd, double& headroom);
// The fitted profile `profile` names (resolve_fitted_profile), with --network applied when given.
FittedProfile resolve_profile_choice(const std::string& profile, const std::string& network);

// A byte size with a binary or decimal suffix ("64MiB", "1.5GiB", "512KiB", "1MB", "4096" bytes); throws
// InputError naming --bytes for anything else or a size outside [0, 1e15].
double parse_size(const std::string& text);

// Prints every live-run row's repair warnings (LiveRun::warnings) on stderr, prefixed "warning: ".
void print_row_warnings(const LiveRunTable& table);

// --strict: a row whose logged TFLOP/s disagrees with iter_s and the twin's model FLOPs by more than 5%
// (logged_flops.hpp) is an error instead of a warning.
void add_strict_option(CLI::App* cmd, bool& strict);
// The logged-TFLOP/s check of every row: warnings on stderr, or (strict) an InputError for the first.
void check_row_flops(const LiveRunTable& table, bool strict);

// Writes `content` to `out_path` atomically, or to stdout when out_path is empty or "-"; a write error
// (a full disk, a closed pipe) is an InputError, never a success with the output lost.
void emit_output(const std::string& content, const std::string& out_path);
// Exit 2 before any work when an output option (--out, --write-profile, --trace) names a file another
// argument reads (`predict x.toml --out x.toml` would overwrite its own input).
void refuse_output_over_input(int argc, char** argv);
// Adds a check to every output option (--out, --write-profile, --trace) of every subcommand: the path's
// folder exists and is writable, tested while parsing, before any work.
void check_output_options(CLI::App& app);

}  // namespace moetwin::cli
