// `moetwin plan --model M --instance I --tokens T`: which layouts, node counts and dispatchers train a
// token budget fastest and cheapest, with their uncertainty. Wiring only: the work is in planning/.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/candidates.hpp"
#include "moetwin/planning/plan.hpp"
#include "moetwin/planning/plan_report.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sweep/progress.hpp"

namespace moetwin::cli {

void add_plan_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Capacity plan: feasible layouts per node count, time to train, cost, Pareto front, dispatcher");
  struct Options {
    PlanRequest request;
    std::string profile;
    std::string network;
    bool explain = false;
    std::string format = "text";
    std::string out;
  };
  auto opts = std::make_shared<Options>();
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
    check_plan_request(catalog, opts->request);
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
  });
}

}  // namespace moetwin::cli
