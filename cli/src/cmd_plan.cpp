// `moetwin plan --model M --instance I --tokens T`: which layouts, node counts and dispatchers train a
// token budget fastest and cheapest, with their uncertainty. Wiring only: the work is in planning/.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/progress.hpp"
#include "moetwin/planning/candidates.hpp"
#include "moetwin/planning/plan.hpp"
#include "moetwin/planning/plan_report.hpp"
#include "moetwin/planning/scenario_choices.hpp"
#include "moetwin/planning/scenario_file.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin::cli {

namespace {

struct PlanOptions {
  PlanRequest request;
  std::string profile;
  std::string network;
  bool explain = false;
  std::string format = "text";
  std::string out;
  std::string precision, recompute, routing;
  std::string write_scenarios;
  bool force = false;
  std::size_t top = kTextOptions;
};

// The plan's command line as its options read (what a written scenario quotes as its origin); the
// defaults of the search's tuning flags are left out.
std::string plan_command_line(const PlanOptions& o) {
  const PlanRequest& r = o.request;
  const PlanRequest defaults;
  std::string s = concat({"moetwin plan --model ", r.model, " --instance ", r.instance, " --tokens ",
                          format_significant(r.tokens, 6), " --min-nodes ", std::to_string(r.min_nodes),
                          " --max-nodes ", std::to_string(r.max_nodes), " --gbs ",
                          std::to_string(r.global_batch), " --seq ", std::to_string(r.seq_length)});
  if (r.deadline_days > 0) s += " --deadline " + format_exact(r.deadline_days);
  if (r.price_usd_per_hour >= 0) s += " --price " + format_exact(r.price_usd_per_hour);
  if (!o.precision.empty()) s += " --precision " + o.precision;
  if (!o.recompute.empty()) s += " --recompute " + o.recompute;
  if (!o.routing.empty()) s += " --routing " + o.routing;
  if (r.seed_layouts != defaults.seed_layouts) s += " --screen " + std::to_string(r.seed_layouts);
  if (r.explore_window != defaults.explore_window) s += " --window " + format_exact(r.explore_window);
  if (r.max_layouts_per_node_count != defaults.max_layouts_per_node_count)
    s += " --max-layouts " + std::to_string(r.max_layouts_per_node_count);
  if (!o.profile.empty()) s += " --profile " + o.profile;
  if (!o.network.empty()) s += " --network " + o.network;
  return s;
}

}  // namespace

void add_plan_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Capacity plan: feasible layouts per node count, time to train, cost, Pareto front, dispatcher");
  auto opts = std::make_shared<PlanOptions>();
  PlanRequest& r = opts->request;
  cmd->add_option("--model", r.model, "Catalog model (e.g. kimi-k2)")->required();
  cmd->add_option("--instance", r.instance, "Catalog instance (e.g. p6-b300.48xlarge)")->required();
  cmd->add_option("--tokens", r.tokens, "Tokens to train on (e.g. 1e12)")->required();
  CLI::Option* deadline =
      cmd->add_option("--deadline", r.deadline_days,
                      "Deadline in days, > 0 (default none: the fastest and the cheapest option are shown)");
  cmd->add_option("--min-nodes", r.min_nodes, "Smallest node count (default 1)");
  cmd->add_option("--max-nodes", r.max_nodes,
                  "Largest node count: powers of two up to it, and it (default 64; --max-nodes 48 searches "
                  "1, 2, 4, 8, 16, 32, 48)");
  cmd->add_option("--price", r.price_usd_per_hour, "USD per node-hour (default: the catalog's price)");
  cmd->add_option("--gbs", r.global_batch, "Global batch, sequences per iteration (default 512)");
  cmd->add_option("--seq", r.seq_length, "Sequence length, tokens (default 4096)");
  cmd->add_option("--screen", r.seed_layouts,
                  "Layouts (tp, pp, ep, dp, mb) per node count the search starts from (default 6)");
  cmd->add_option("--window", r.explore_window,
                  "The search predicts every neighbour of a layout within this fraction of the fastest "
                  "(default 0.05)");
  cmd->add_option("--max-layouts", r.max_layouts_per_node_count,
                  "Most layouts predicted per node count (default 160; a plan that reaches it says so)");
  cmd->add_option("--threads", r.threads, "Predictions in parallel (default: the cores, at most 16)");
  cmd->add_option(
      "--precision", opts->precision,
      "Training precision of every option: bf16 (default), fp8-hybrid, fp8-current, fp8-blockwise, "
      "mxfp8, nvfp4");
  cmd->add_option("--recompute", opts->recompute,
                  "Activation recompute of every option: none, selective, full (default: per layout the "
                  "lightest that fits)");
  cmd->add_option("--routing", opts->routing,
                  "Expert routing: balanced (default), zipf:S (popularity ~ 1/rank^S, S in (0, 5]), "
                  "group-limited, histogram:FILE (layer,expert,load CSV)");
  CLI::Option* write = cmd->add_option(
      "--write-scenarios", opts->write_scenarios,
      "Write each listed option as a scenario file into this folder (created; its parent must exist; a "
      "folder holding anything but this same plan's files is refused unless --force)");
  cmd->add_flag(
         "--force", opts->force,
         "With --write-scenarios: write into a folder that is not empty, replacing the scenario files an "
         "earlier plan wrote there (listed on stderr; other files are left)")
      ->needs(write);
  cmd->add_option("--top", opts->top,
                  "With --write-scenarios: how many options, by rank (default " +
                      std::to_string(kTextOptions) + ", the ones the text lists)")
      ->check(CLI::Range(1, 100000))
      ->needs(write);
  add_hbm_headroom_option(cmd, r.hbm_headroom);
  cmd->add_option("--profile", opts->profile, "Fitted profile (default: the shipped one; 'none' = unfitted)");
  add_network_option(cmd, opts->network);
  cmd->add_flag("--explain", opts->explain, "List every rejected candidate with the reason");
  cmd->add_option("--format", opts->format, "text | json | csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", opts->out, "Output file, written atomically (default stdout)");
  cmd->callback([opts, deadline, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    if (deadline->count() > 0 && !(opts->request.deadline_days > 0)) {
      throw InputError({"", 0}, "--deadline", format_exact(opts->request.deadline_days),
                       "days > 0 (leave --deadline out for no deadline)");
    }
    if (!opts->precision.empty())
      opts->request.choices.precision = parse_precision_choice(opts->precision, "--precision");
    if (!opts->recompute.empty())
      opts->request.choices.recompute = parse_recompute_choice(opts->recompute, "--recompute");
    if (!opts->routing.empty())
      opts->request.choices.routing = parse_routing_choice(opts->routing, "--routing");
    check_plan_request(catalog, opts->request);
    if (!opts->write_scenarios.empty())
      check_scenario_dir(opts->write_scenarios, opts->force, plan_command_line(*opts));
    const FittedProfile profile = resolve_profile_choice(opts->profile, opts->network);
    // On a terminal a bar per node count (with ETA) under the per-node-count lines; otherwise the lines.
    std::unique_ptr<SweepProgress> bar;
    if (stderr_is_terminal()) {
      ProgressOptions po;
      po.out = &std::cerr;
      po.tty = true;
      po.label = "plan";
      po.unit = "node counts";
      po.journal_line = false;
      const std::size_t counts = node_counts(opts->request.min_nodes, opts->request.max_nodes).size();
      bar = std::make_unique<SweepProgress>(po, counts, 0, counts);
    }
    const Plan plan = make_plan(catalog, opts->request, profile, [&bar](const std::string& line) {
      if (!bar) {
        std::cerr << line << '\n';
        return;
      }
      bar->note(line);
      bar->advance();
    });
    if (bar) bar->finish();
    std::string content;
    if (opts->format == "csv") {
      // The comment header names the profile, deadline and headroom for `moetwin report`.
      content = csv_context_header(OutputContext{"plan", catalog_dir, {}},
                                   {{"profile", profile_label(profile)},
                                    {"deadline_days", format_exact(opts->request.deadline_days)},
                                    {"hbm_headroom", format_exact(opts->request.hbm_headroom)}}) +
                render_csv(plan_options_table(plan));
      // The CSV stays one table (what `moetwin report` reads); the rejected ones go to stderr.
      if (opts->explain) std::cerr << "rejected candidates:\n" << render_text(plan_rejected_table(plan));
    } else if (opts->format == "json") {
      OutputContext context{"plan", catalog_dir, {}};
      content = render_plan_json(plan, context, opts->explain);
    } else {
      content = render_plan_text(plan, opts->explain);
    }
    emit_output(content, opts->out);
    if (!opts->write_scenarios.empty()) {
      const WrittenScenarios w = write_plan_scenarios(plan, catalog, opts->write_scenarios, opts->top,
                                                      plan_command_line(*opts), opts->force);
      const std::vector<std::string>& files = w.written;
      std::cerr << "plan: wrote " << files.size() << " scenario file" << (files.size() == 1 ? "" : "s")
                << " to " << opts->write_scenarios << (files.empty() ? "" : " (first: " + files.front() + ")")
                << '\n';
      const auto list = [](const std::vector<std::string>& names) {
        std::string s;
        for (const std::string& n : names) s += "\n  " + n;
        return s;
      };
      if (!w.replaced.empty()) {
        std::cerr << "plan: replaced " << w.replaced.size() << " scenario file"
                  << (w.replaced.size() == 1 ? "" : "s")
                  << " an earlier plan (or an earlier run of this one) wrote in " << opts->write_scenarios
                  << ":" << list(w.replaced) << '\n';
      }
      if (!w.kept.empty()) {
        std::cerr << "plan: --force: left " << w.kept.size() << " other entr"
                  << (w.kept.size() == 1 ? "y" : "ies") << " in " << opts->write_scenarios
                  << " untouched:" << list(w.kept) << '\n';
      }
    }
  });
}

}  // namespace moetwin::cli
