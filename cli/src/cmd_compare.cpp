// `moetwin compare A.toml B.toml [C.toml ...]`, or one scenario with --dispatchers a,b / --precision
// bf16,fp8-hybrid / --nodes 16,32: each prediction, its difference and ratio to the first, and an 80% band
// on the ratio from the fit's paired out-of-sample errors, with a verdict and the settling run. Wiring only:
// the work is in planning/compare.hpp, the renderings in planning/compare_report.hpp.
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/compare.hpp"
#include "moetwin/planning/compare_report.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin::cli {

namespace {

struct CompareOptions {
  std::vector<std::string> scenarios;
  std::vector<std::string> dispatchers;
  std::vector<std::string> precisions;
  std::vector<int> nodes;
  std::string profile;
  std::string network;
  int threads = 0;
  CompareMemory memory;
  std::string format = "text";
  std::string out;
};

// The inputs the options name: the files, or one file and one shorthand.
std::vector<CompareInput> inputs_of(const CompareOptions& o, const Catalog& catalog) {
  const int shorthands =
      (o.dispatchers.empty() ? 0 : 1) + (o.precisions.empty() ? 0 : 1) + (o.nodes.empty() ? 0 : 1);
  if (shorthands > 1) {
    throw InputError({"", 0}, "compare", "more than one of --dispatchers, --precision, --nodes",
                     "one of them (each varies one thing of one scenario)");
  }
  if (shorthands == 1) {
    if (o.scenarios.size() != 1) {
      throw InputError({"", 0}, "compare", std::to_string(o.scenarios.size()) + " scenario files",
                       "one scenario file with --dispatchers, --precision or --nodes");
    }
    const Scenario base = load_scenario_file(o.scenarios[0], catalog);
    if (!o.dispatchers.empty()) return compare_dispatchers(base, catalog, o.dispatchers);
    if (!o.precisions.empty()) return compare_precisions(base, o.precisions);
    return compare_node_counts(base, o.nodes);
  }
  std::vector<CompareInput> inputs;
  for (const std::string& path : o.scenarios) inputs.push_back({path, load_scenario_file(path, catalog)});
  if (inputs.size() < 2) {
    throw InputError({"", 0}, "compare", std::to_string(inputs.size()) + " scenario file",
                     "two or more scenario files, or one with --dispatchers, --precision or --nodes");
  }
  return inputs;
}

}  // namespace

void add_compare_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Predictions side by side: difference and ratio to the first, with an 80% band on the ratio from the "
      "fit's paired errors, a verdict and the run that settles a tie");
  auto o = std::make_shared<CompareOptions>();
  cmd->add_option("SCENARIOS", o->scenarios,
                  "Scenario files (.toml), the first the reference; or one with a shorthand below")
      ->required();
  cmd->add_option("--dispatchers", o->dispatchers,
                  "One scenario with each dispatcher, e.g. nccl-alltoall,deepep-uccl")
      ->delimiter(',');
  cmd->add_option("--precision", o->precisions, "One scenario at each precision, e.g. bf16,fp8-hybrid")
      ->delimiter(',');
  cmd->add_option("--nodes", o->nodes,
                  "One scenario at each node count (tp, pp, ep, mb and global batch kept; dp follows), e.g. "
                  "16,32")
      ->delimiter(',')
      ->check(CLI::Range(1, 100000));
  add_hbm_headroom_option(cmd, o->memory.hbm_headroom);
  cmd->add_flag(
      "--ignore-memory", o->memory.ignore_memory,
      "Compare scenarios that do not fit in HBM (default: exit 2 naming them; no verdict on a layout "
      "that would not run)");
  add_profile_option(cmd, o->profile);
  add_network_option(cmd, o->network);
  cmd->add_option("--threads", o->threads, "Predictions in parallel (results identical for any count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  cmd->callback([o, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    const std::vector<CompareInput> inputs = inputs_of(*o, catalog);
    const FittedProfile profile = resolve_profile_choice(o->profile, o->network);
    const Comparison c = compare(inputs, profile, o->threads, o->memory);
    std::string content;
    if (o->format == "csv") {
      // The comment header names the profile and headroom for `moetwin report`, as plan's does.
      content = csv_context_header(OutputContext{"compare", catalog_dir, o->scenarios},
                                   {{"profile", c.profile},
                                    {"hbm_headroom", format_exact(o->memory.hbm_headroom)},
                                    {"ignore_memory", o->memory.ignore_memory ? "true" : "false"}}) +
                render_csv(comparison_table(c));
    } else if (o->format == "json") {
      content = render_comparison_json(c, OutputContext{"compare", catalog_dir, o->scenarios});
    } else {
      content = render_comparison_text(c);
    }
    emit_output(content, o->out);
  });
}

}  // namespace moetwin::cli
