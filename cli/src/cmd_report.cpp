// `moetwin report INPUT... --out report.html [--markdown DIR]`: a self-contained HTML report (and
// Markdown with PNG figures) from plan / sweep / validate / recommend / predict outputs. Wiring only: the
// work is in reports/ (report_input, report_figures, gnuplot, html_report).
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/reports/html_report.hpp"

namespace moetwin::cli {
namespace {

// The report's one date line: now, or $SOURCE_DATE_EPOCH (reproducible-builds.org) when set.
std::string generated_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch) {
    char* end = nullptr;
    const long long v = std::strtoll(epoch, &end, 10);
    if (*end != '\0' || v < 0)
      throw InputError({"", 0}, "SOURCE_DATE_EPOCH", epoch, "seconds since 1970 (integer >= 0)");
    t = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// --markdown DIR: an existing folder, or a new one whose parent exists (write_markdown_report creates it).
void check_markdown_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::exists(dir, ec))
    throw InputError({dir, 0}, "--markdown", dir, "a folder for report.md (it is a file)");
  check_output_path(dir);  // its parent folder exists
}

}  // namespace

void add_report_command(CLI::App& app, const GlobalOptions& global) {
  (void)global;
  CLI::App* cmd = app.add_subcommand(
      "report", "Self-contained HTML report (and Markdown + PNG) from plan/sweep/validate/recommend outputs");
  struct Options {
    std::vector<std::string> inputs;
    std::string out;
    std::string markdown;
    std::string title = "moetwin report";
    std::string profile;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option(
         "INPUT", opts->inputs,
         "CSV or JSON outputs of plan, sweep, validate, recommend or predict (a sweep's .h5: pass its "
         ".csv)")
      ->required();
  cmd->add_option("--out", opts->out, "HTML file, written atomically")->required();
  cmd->add_option(
      "--markdown", opts->markdown,
      "Also write DIR/report.md and its PNG figures (DIR is created; its parent must exist, as for "
      "--out)");
  cmd->add_option("--title", opts->title, "Report title (default \"moetwin report\")");
  cmd->add_option("--profile-label", opts->profile,
                  "Profile to name in the context block (default: what the inputs recorded)");
  cmd->callback([opts] {
    std::vector<ReportInput> inputs;
    for (const std::string& path : opts->inputs) inputs.push_back(load_report_input(path));
    ReportOptions o;
    o.title = opts->title;
    o.generated_utc = generated_utc();
    o.profile = opts->profile;
    // A command that fails leaves no output: the Markdown folder is checked and the HTML rendered before
    // anything is written, and the HTML (atomic) goes last, after the Markdown and its figures (gnuplot)
    // succeeded.
    if (!opts->markdown.empty()) check_markdown_folder(opts->markdown);
    const std::string html = render_html_report(inputs, o);
    if (!opts->markdown.empty()) write_markdown_report(inputs, o, opts->markdown);
    emit_output(html, opts->out);
  });
}

}  // namespace moetwin::cli
