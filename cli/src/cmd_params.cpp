// `moetwin params [--profile FILE|none] [--dispatcher NAME] [--layer TEXT]`: every term the twin applies,
// under the key `validate --fit --params` takes, with the layer its value comes from. Wiring only; the
// registry is sim/parameter_registry.
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/parameter_registry.hpp"

namespace moetwin::cli {

void add_params_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "params",
      "Every term the twin applies: its key, value, unit, bounds and the layer it comes from "
      "(default, calibrated on kernel benchmarks, fitted on live runs, per stack)");
  struct Options {
    std::string profile;
    std::string dispatcher;
    std::string format = "text";
    std::string out;
  };
  auto o = std::make_shared<Options>();
  add_profile_option(cmd, o->profile);
  cmd->add_option("--dispatcher", o->dispatcher, "Only the global terms and this dispatcher's");
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  cmd->callback([o, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    if (!o->dispatcher.empty()) (void)catalog.dispatcher(o->dispatcher);  // InputError naming the known ones
    const FittedProfile profile = resolve_fitted_profile(o->profile);
    // The meaning (a sentence or a source) only in the machine formats: the text table stays readable.
    const bool with_meaning = o->format != "text";
    ResultTable table;
    table.columns = {"key", "scope", "layer", "value", "unit", "min", "max"};
    if (with_meaning) table.columns.push_back("meaning");
    for (const RegistryEntry& e : parameter_registry(profile, catalog)) {
      if (!o->dispatcher.empty() && e.scope != "global" && e.scope != "dispatcher " + o->dispatcher) continue;
      std::vector<Cell> row{e.key,  e.scope,           e.layer,          Cell::exact(e.value),
                            e.unit, Cell::exact(e.lo), Cell::exact(e.hi)};
      if (with_meaning) row.emplace_back(e.meaning);
      table.add_row(std::move(row));
    }
    std::string content;
    if (o->format == "csv") {
      content = render_csv(table);
    } else if (o->format == "json") {
      content = render_json(OutputContext{"params", catalog_dir, {profile_label(profile)}}, table);
    } else {
      content = "# profile: " + profile_label(profile) + "\n" + render_text(table);
    }
    emit_output(content, o->out);
  });
}

}  // namespace moetwin::cli
