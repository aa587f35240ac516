// `moetwin recommend SCENARIO --nodes 4,8,16,32,64 [--mb 1,4,8]`: the best dispatcher per scale and
// micro-batch with uncertainty bands, ties and crossovers. Wiring only: the policy is in
// planning/recommend.hpp, the renderings in planning/recommend_report.hpp.
#include <cstdlib>
#include <memory>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/candidates.hpp"
#include "moetwin/planning/recommend.hpp"
#include "moetwin/planning/recommend_report.hpp"
#include "moetwin/planning/scenario_choices.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin::cli {

namespace {

struct RecommendOptions {
  std::string scenario;
  RecommendRequest request;
  // {"auto"} (default): per node count the valid pipeline size nearest the scenario's; one number: every
  // node count; else one per node count.
  std::vector<std::string> pp = {"auto"};
  std::string profile;
  std::string network;
  std::string format = "text";
  std::string out;
  std::string precision, recompute, routing;
};

// --pp as RecommendRequest::pp_auto and pp.
void parse_pp(const RecommendOptions& o, RecommendRequest& request) {
  if (o.pp.size() > 1 && o.pp.size() != request.nodes.size()) {
    throw InputError({"", 0}, "--pp", std::to_string(o.pp.size()) + " values",
                     "one value, or one per --nodes entry (" + std::to_string(request.nodes.size()) + ")");
  }
  request.pp_auto = o.pp.size() == 1 && o.pp[0] == "auto";
  if (request.pp_auto) return;
  for (const std::string& v : o.pp) {
    char* end = nullptr;
    const long pp = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || pp < 1 || pp > 512) {
      throw InputError({"", 0}, "--pp", v, "auto, or pipeline sizes in [1, 512]");
    }
    request.pp.push_back(static_cast<int>(pp));
  }
}

}  // namespace

void add_recommend_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "recommend", "Best dispatcher per scale and micro-batch, with uncertainty bands and crossovers");
  auto o = std::make_shared<RecommendOptions>();
  cmd->add_option("SCENARIO", o->scenario, "Scenario file (.toml): model, instance, layout, batch")
      ->required();
  cmd->add_option("--nodes", o->request.nodes, "Node counts, e.g. 8,16,32,64")
      ->delimiter(',')
      ->required()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--mb", o->request.micro_batches, "Micro-batch sizes (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--dispatchers", o->request.dispatchers,
                  "Dispatchers to compare (default: every catalog dispatcher)")
      ->delimiter(',');
  cmd->add_option("--pp", o->pp,
                  "Pipeline stages: auto (default: per node count the valid power of two nearest the "
                  "scenario's pp, said in the output), one value for every node count, or one per --nodes "
                  "entry (e.g. --nodes 8,16,32 --pp 2,4,8)")
      ->delimiter(',');
  cmd->add_option("--gbs", o->request.global_batch, "Global batch (default: the scenario's)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option(
      "--precision", o->precision,
      "Training precision (default: the scenario's): bf16, fp8-hybrid, fp8-current, fp8-blockwise, "
      "mxfp8, nvfp4");
  cmd->add_option("--recompute", o->recompute,
                  "Activation recompute (default: the scenario's): none, selective, full");
  cmd->add_option("--routing", o->routing,
                  "Expert routing (default: the scenario's): balanced, zipf:S (S in (0, 5]), group-limited, "
                  "histogram:FILE (layer,expert,load CSV)");
  cmd->add_option(
         "--tokens", o->request.tokens,
         "Tokens to train on (e.g. 1e12): adds days, node-hours and cost per point, as plan computes "
         "them")
      ->check(CLI::Range(kMinPlanTokens, kMaxPlanTokens));
  cmd->add_option("--price", o->request.price_usd_per_hour,
                  "USD per node-hour (default: the catalog's price)")
      ->check(CLI::Range(0.0, 1e9));
  add_profile_option(cmd, o->profile);
  add_network_option(cmd, o->network);
  add_hbm_headroom_option(cmd, o->request.hbm_headroom);
  cmd->add_option("--threads", o->request.threads,
                  "Predictions in parallel (results identical for any count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  cmd->callback([o, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    ScenarioChoices choices;
    if (!o->precision.empty()) choices.precision = parse_precision_choice(o->precision, "--precision");
    if (!o->recompute.empty()) choices.recompute = parse_recompute_choice(o->recompute, "--recompute");
    if (!o->routing.empty()) choices.routing = parse_routing_choice(o->routing, "--routing");
    const Scenario base = apply_scenario_choices(load_scenario_file(o->scenario, catalog), choices);
    const FittedProfile profile = resolve_profile_choice(o->profile, o->network);
    RecommendRequest request = o->request;
    parse_pp(*o, request);
    const Recommendation r = recommend(base, catalog, profile, request);
    const ResultTable table = recommendation_table(r, profile);
    std::string content;
    if (o->format == "csv") {
      content = csv_context_header(OutputContext{"recommend", catalog_dir, {o->scenario}},
                                   {{"profile", profile_label(profile)},
                                    {"hbm_headroom", format_exact(request.hbm_headroom)}}) +
                render_csv(table);
    } else if (o->format == "json") {
      content = render_recommendation_json(r, table, OutputContext{"recommend", catalog_dir, {o->scenario}});
    } else {
      content = render_recommendation_text(r, table, profile, o->scenario);
    }
    emit_output(content, o->out);
    // Nothing to recommend anywhere: exit 2 with every distinct reason (the output above has the table).
    if (const std::string message = nothing_valid_message(r); !message.empty())
      throw InputError({o->scenario, 0}, message);
  });
}

}  // namespace moetwin::cli
