#include "moetwin/planning/plan_report.hpp"

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

std::string layout_text(const Candidate& c) {
  const ParallelLayout& p = c.parallel;
  return "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " vpp" + std::to_string(p.vpp) + " ep" +
         std::to_string(p.ep) + " dp" + std::to_string(p.dp) + " mb" + std::to_string(c.micro_batch) + " " +
         to_string(c.recompute) + (c.overlap_moe_a2a ? " overlap" : "");
}

std::string money(double usd) {
  return usd < 0 ? std::string("-") : concat({"$", format_fixed(usd, 0)});
}

// A dispatcher's name, starred when the profile has no live runs of it (its A2A terms are its measured
// relatives'; footnote kGenericFootnote).
std::string dispatcher_text(const DispatcherOutcome& d) {
  return d.dispatcher + (d.a2a_terms == "generic" ? "*" : "");
}
constexpr const char* kGenericFootnote =
    "* no live runs of this dispatcher in the fitted profile: predicted with the median of its measured "
    "relatives' A2A terms, its band spanning their own; margins must hold for either\n";

// Whether a starred name is shown: the text shows each option's dispatcher and runner-up.
bool any_generic(const Plan& plan) {
  for (const PlanOption& o : plan.options) {
    for (std::size_t k = 0; k < o.outcomes.size() && k < 2; ++k) {
      if (o.outcomes[k].a2a_terms == "generic") return true;
    }
  }
  return false;
}

std::string margin_text(const PlanOption& o) {
  if (o.outcomes.size() < 2) return "only " + dispatcher_text(o.best()) + " predicted";
  return concat({"+", format_fixed(o.margin_pct, 1), "% vs ", dispatcher_text(o.outcomes[1]),
                 o.margin_exceeds_uncertainty ? " (beyond the uncertainty)" : " (within the uncertainty)"});
}

// "252.1 GiB 94%!" (the chosen dispatcher's most loaded stage; '!' beyond the HBM headroom).
std::string memory_text(const PlanOption& o) {
  const double used = o.best().memory_bytes;
  return concat({format_fixed(used / kGiB, 1), " GiB ",
                 format_fixed(o.hbm_bytes > 0 ? used / o.hbm_bytes * 100 : 0, 0), "%",
                 o.within_headroom ? "" : "!"});
}

// The Pareto front (pareto_only) or the first `limit` options, ranked.
ResultTable brief_table(const Plan& plan, bool pareto_only, std::size_t limit) {
  ResultTable t;
  t.columns = {"rank", "nodes",     "layout",     "dispatcher", "iter_s",   "band_s",           "memory",
               "days", "days_band", "node_hours", "cost",       "deadline", "dispatcher_margin"};
  for (std::size_t i = 0; i < plan.options.size() && t.rows.size() < limit; ++i) {
    const PlanOption& o = plan.options[i];
    if (pareto_only && !o.pareto) continue;
    const DispatcherOutcome& b = o.best();
    t.add_row({Cell::integer(static_cast<std::int64_t>(i + 1)), Cell::integer(o.candidate.nodes),
               layout_text(o.candidate), dispatcher_text(b), Cell::fixed(b.iteration_s, 3),
               format_fixed(b.band.lo_s, 2) + ".." + format_fixed(b.band.hi_s, 2), memory_text(o),
               Cell::fixed(o.days, 1), format_fixed(o.days_lo, 1) + ".." + format_fixed(o.days_hi, 1),
               Cell::fixed(o.node_hours, 0), money(o.cost_usd),
               plan.request.deadline_days <= 0 ? "-" : (o.meets_deadline ? "yes" : "no"), margin_text(o)});
  }
  return t;
}

// What the search did per node count.
ResultTable searched_table(const Plan& plan) {
  ResultTable t;
  t.columns = {"nodes",       "layouts",   "fit",     "groups",      "predicted",
               "predictions", "fastest_s", "speedup", "scaling_eff", "node_h_per_1e9_tok",
               "note"};
  for (const NodeCountSearch& n : plan.searched) {
    std::string note;
    if (n.fitting == 0) {
      note = "none fits: " + n.none_reason;
    } else if (n.capped) {
      note = "search stopped at --max-layouts " + std::to_string(plan.request.max_layouts_per_node_count);
    }
    if (n.fastest_beyond_s > 0) {
      note += concat({note.empty() ? "" : "; ", n.fastest_s > 0 ? "faster" : "none within the HBM headroom",
                      " beyond it: ", format_fixed(n.fastest_beyond_s, 3), " s (ranked last)"});
    }
    t.add_row({Cell::integer(n.nodes), Cell::integer(n.layouts), Cell::integer(n.fitting),
               Cell::integer(n.groups), Cell::integer(n.groups_predicted), Cell::integer(n.predictions),
               n.fastest_s > 0 ? Cell::fixed(n.fastest_s, 3) : Cell("-"),
               n.fastest_s > 0 ? Cell::fixed(n.speedup, 2) : Cell("-"),
               n.fastest_s > 0 ? Cell::fixed(n.scaling_efficiency, 2) : Cell("-"),
               n.fastest_s > 0 ? Cell::fixed(n.node_hours_per_gtoken, 2) : Cell("-"), note});
  }
  return t;
}

// "32 x p6-b300.48xlarge, tp8 pp4 ..., deepep-uccl: 41.5 days (35.6..53.6), 31000 node-hours, $..."
std::string option_line(const Plan& plan, int index) {
  const PlanOption& o = plan.options[static_cast<std::size_t>(index)];
  return concat({"rank ",
                 std::to_string(index + 1),
                 ": ",
                 std::to_string(o.candidate.nodes),
                 " x ",
                 plan.request.instance,
                 ", ",
                 layout_text(o.candidate),
                 ", ",
                 dispatcher_text(o.best()),
                 ": ",
                 format_fixed(o.best().iteration_s, 3),
                 " s/iteration, ",
                 format_fixed(o.days, 1),
                 " days (",
                 format_fixed(o.days_lo, 1),
                 "..",
                 format_fixed(o.days_hi, 1),
                 "), ",
                 format_fixed(o.node_hours, 0),
                 " node-hours",
                 o.cost_usd >= 0 ? ", " + money(o.cost_usd) : "",
                 "\n    memory: ",
                 memory_use_text(o.best().memory_bytes, o.hbm_bytes),
                 " per GPU on the most loaded stage",
                 o.within_headroom ? std::string(", within the HBM headroom")
                                   : std::string(", BEYOND the HBM headroom: it may run out of memory"),
                 "\n    dispatcher: ",
                 margin_text(o),
                 o.novelty.empty() ? std::string() : concat({"\n    new to the fit: ", o.novelty}),
                 o.settle_with.empty() ? std::string() : concat({"\n    tie: ", o.settle_with}),
                 "\n"});
}

// How many options stay within the HBM headroom, and what it is for.
std::string memory_headroom_line(const Plan& plan) {
  int beyond = 0;
  for (const PlanOption& o : plan.options) beyond += o.within_headroom ? 0 : 1;
  return concat(
      {"options must leave ", format_fixed(plan.request.hbm_headroom * 100, 0),
       "% of HBM free (--hbm-headroom: what the memory model misses; accounting/hbm_headroom.hpp); ",
       std::to_string(beyond), " of ", std::to_string(plan.options.size()),
       " options use more and rank last (memory column '!'", beyond > 0 ? "; --explain lists them)" : ")"});
}

// The options beyond the HBM headroom, for --explain.
ResultTable beyond_headroom_table(const Plan& plan) {
  ResultTable t;
  t.columns = {"rank", "candidate", "dispatcher", "reason"};
  for (std::size_t i = 0; i < plan.options.size(); ++i) {
    const PlanOption& o = plan.options[i];
    if (o.within_headroom) continue;
    t.add_row(
        {Cell::integer(static_cast<std::int64_t>(i + 1)), o.candidate.label(), o.best().dispatcher,
         concat({"ranked last: uses ", memory_use_text(o.best().memory_bytes, o.hbm_bytes), ", above the ",
                 format_fixed((1 - plan.request.hbm_headroom) * 100, 0), "% --hbm-headroom leaves"})});
  }
  return t;
}

}  // namespace

std::string plan_precision(const Plan& plan) {
  return plan.request.choices.precision ? to_string(*plan.request.choices.precision) : "bf16";
}

std::string plan_routing(const Plan& plan) {
  return plan.request.choices.routing ? routing_choice_text(*plan.request.choices.routing) : "balanced";
}

ResultTable plan_options_table(const Plan& plan) {
  ResultTable t;
  t.columns = {"rank",
               "nodes",
               "gpus",
               "tp",
               "pp",
               "vpp",
               "ep",
               "etp",
               "dp",
               "mb",
               "recompute",
               "overlap",
               "gbs",
               "seq",
               "dispatcher",
               "a2a_terms",
               "runner_up",
               "margin_pct",
               "margin_exceeds_uncertainty",
               "dispatchers_compared",
               "predicted_iter_s",
               "predicted_lo_s",
               "predicted_hi_s",
               "novelty_level",
               "novelty",
               "predicted_tokens_s",
               "predicted_tflops_gpu",
               "days",
               "days_lo",
               "days_hi",
               "node_hours",
               "cost_usd",
               "meets_deadline",
               "meets_deadline_pessimistic",
               "pareto",
               "recommended",
               "fastest",
               "cheapest",
               "memory_gib",
               "hbm_gib",
               "within_hbm_headroom",
               "compute_s_max",
               "exposed_tp_s_max",
               "exposed_ep_s_max",
               "exposed_pp_s_max",
               "exposed_dp_s_max",
               "bubble_s_max",
               "host_wait_s_max",
               "settle_with",
               "settle_node_hours",
               "precision",
               "routing",
               "node_hours_per_1e9_tokens",
               "speedup",
               "scaling_efficiency"};
  for (std::size_t i = 0; i < plan.options.size(); ++i) {
    const PlanOption& o = plan.options[i];
    const Candidate& c = o.candidate;
    const DispatcherOutcome& b = o.best();
    const bool has_runner = o.outcomes.size() >= 2;
    t.add_row({Cell::integer(static_cast<std::int64_t>(i + 1)),
               Cell::integer(c.nodes),
               Cell::integer(c.parallel.world()),
               Cell::integer(c.parallel.tp),
               Cell::integer(c.parallel.pp),
               Cell::integer(c.parallel.vpp),
               Cell::integer(c.parallel.ep),
               Cell::integer(c.parallel.etp),
               Cell::integer(c.parallel.dp),
               Cell::integer(c.micro_batch),
               to_string(c.recompute),
               Cell::boolean(c.overlap_moe_a2a),
               Cell::integer(plan.request.global_batch),
               Cell::integer(plan.request.seq_length),
               b.dispatcher,
               b.a2a_terms,
               has_runner ? o.outcomes[1].dispatcher : std::string(),
               has_runner ? Cell::fixed(o.margin_pct, 2) : Cell(""),
               Cell::boolean(o.margin_exceeds_uncertainty),
               Cell::integer(static_cast<std::int64_t>(o.outcomes.size())),
               Cell::fixed(b.iteration_s, 6),
               Cell::fixed(b.band.lo_s, 6),
               Cell::fixed(b.band.hi_s, 6),
               o.novelty_level,
               o.novelty,
               Cell::fixed(b.tokens_per_s, 1),
               Cell::fixed(b.tflops_per_gpu, 2),
               Cell::fixed(o.days, 3),
               Cell::fixed(o.days_lo, 3),
               Cell::fixed(o.days_hi, 3),
               Cell::fixed(o.node_hours, 1),
               o.cost_usd < 0 ? Cell("") : Cell::fixed(o.cost_usd, 0),
               Cell::boolean(o.meets_deadline),
               Cell::boolean(o.meets_deadline_pessimistic),
               Cell::boolean(o.pareto),
               Cell::boolean(static_cast<int>(i) == plan.recommended),
               Cell::boolean(static_cast<int>(i) == plan.fastest),
               Cell::boolean(static_cast<int>(i) == plan.cheapest),
               Cell::fixed(b.memory_bytes / kGiB, 2),
               Cell::fixed(o.hbm_bytes / kGiB, 2),
               Cell::boolean(o.within_headroom),
               Cell::fixed(b.compute_s, 6),
               Cell::fixed(b.exposed_tp_s, 6),
               Cell::fixed(b.exposed_ep_s, 6),
               Cell::fixed(b.exposed_pp_s, 6),
               Cell::fixed(b.exposed_dp_s, 6),
               Cell::fixed(b.bubble_s, 6),
               Cell::fixed(b.host_wait_s, 6),
               o.settle_with,
               o.settle_with.empty() ? Cell("") : Cell::fixed(o.settle_node_hours, 2),
               plan_precision(plan),
               plan_routing(plan),
               Cell::fixed(o.node_hours_per_gtoken, 4),
               Cell::fixed(o.speedup, 4),
               Cell::fixed(o.scaling_efficiency, 4)});
  }
  return t;
}

ResultTable plan_rejected_table(const Plan& plan) {
  ResultTable t;
  t.columns = {"candidate", "dispatcher", "reason"};
  for (const Rejection& r : plan.rejected) t.add_row({r.label, r.dispatcher, r.reason});
  return t;
}

std::string render_plan_text(const Plan& plan, bool explain) {
  const PlanRequest& r = plan.request;
  std::vector<std::pair<std::string, std::string>> kv = {
      {"model / instance", r.model + " on " + r.instance},
      {"tokens", format_significant(r.tokens, 4) + " (global batch " + std::to_string(r.global_batch) +
                     " x " + std::to_string(r.seq_length) + " tokens per iteration)"},
      {"deadline", r.deadline_days > 0 ? format_fixed(r.deadline_days, 1) + " days" : std::string("none")},
      {"price", plan.price_usd_per_hour > 0
                    ? concat({"$", format_fixed(plan.price_usd_per_hour, 2), " per node-hour (",
                              plan.price_source, ")"})
                    : "unknown (" + plan.price_source + "): costs in node-hours only"},
      {"training", concat({plan_precision(plan), ", recompute ",
                           r.choices.recompute ? to_string(*r.choices.recompute)
                                               : "the lightest that fits (--recompute to fix it)",
                           ", routing ", plan_routing(plan)})},
      {"profile", plan.profile},
      {"memory", memory_headroom_line(plan)},
      {"searched", std::to_string(plan.enumerated) + " layouts over node counts " +
                       std::to_string(r.min_nodes) + ".." + std::to_string(r.max_nodes) + ", " +
                       std::to_string(plan.options.size()) + " options predicted (" +
                       std::to_string(plan.predictions) + " predictions), " +
                       std::to_string(plan.rejected.size()) + " rejected (--explain lists them)"},
  };
  std::string out = render_key_values(kv) + "\n";
  out += "node counts searched (" + std::to_string(r.min_nodes) + ".." + std::to_string(r.max_nodes) +
         "):\n" + render_text(searched_table(plan));
  if (plan.reference_nodes > 0) {
    out += concat({"  scaling of each node count's fastest at global batch ", std::to_string(r.global_batch),
                   ": speedup against ", std::to_string(plan.reference_nodes),
                   plan.reference_nodes == 1 ? " node" : " nodes",
                   ", scaling_eff = speedup / node ratio, node_h_per_1e9_tok = node-hours per 1e9 "
                   "tokens\n"});
  }
  out += "\n";
  if (plan.options.empty()) {
    out += "recommendation: none: no layout on " + std::to_string(r.min_nodes) + ".." +
           std::to_string(r.max_nodes) +
           " nodes fits and passes the validity limits (the table above says why; --explain lists each)\n";
  } else if (r.deadline_days > 0) {
    out += "objective: the cheapest option (fewest node-hours) that meets the " +
           format_fixed(r.deadline_days, 1) + "-day deadline (central estimate)\n";
    out += "recommendation: " + option_line(plan, plan.recommended);
    if (!plan.recommended_meets_deadline) {
      out += "  no option meets the deadline: this is the fastest\n";
    } else {
      out += "fastest: " + option_line(plan, plan.fastest);
    }
  } else {
    out +=
        "objective: no deadline given: the fastest and the cheapest option (--deadline DAYS picks the "
        "cheapest that meets it)\n";
    out += "fastest: " + option_line(plan, plan.fastest);
    out += "cheapest: " + option_line(plan, plan.cheapest);
  }
  out +=
      "\nPareto front (time to train vs cost):\n" + render_text(brief_table(plan, true, plan.options.size()));
  out += "\noptions, fastest first";
  if (plan.options.size() > kTextOptions) {
    out += " (the first " + std::to_string(kTextOptions) + " of " + std::to_string(plan.options.size()) +
           "; --format csv or json lists all)";
  }
  out += ":\n" + render_text(brief_table(plan, false, kTextOptions));
  if (any_generic(plan)) out += kGenericFootnote;
  if (explain) {
    out += "\nrejected candidates:\n" + render_text(plan_rejected_table(plan));
    const ResultTable beyond = beyond_headroom_table(plan);
    if (!beyond.rows.empty())
      out += "\noptions beyond the HBM headroom (ranked last):\n" + render_text(beyond);
  }
  return out;
}

std::string render_plan_json(const Plan& plan, const OutputContext& context, bool explain) {
  ResultTable summary;
  summary.columns = {"model",
                     "instance",
                     "tokens",
                     "deadline_days",
                     "max_nodes",
                     "gbs",
                     "seq",
                     "price_usd_per_hour",
                     "price_source",
                     "profile",
                     "enumerated",
                     "predictions",
                     "options",
                     "rejected",
                     "recommended_rank",
                     "recommended_meets_deadline",
                     "fastest_rank",
                     "cheapest_rank",
                     "min_nodes",
                     "precision",
                     "recompute",
                     "routing",
                     "scaling_reference_nodes",
                     "hbm_headroom"};
  const PlanRequest& r = plan.request;
  summary.add_row(
      {r.model,
       r.instance,
       Cell::exact(r.tokens),
       Cell::exact(r.deadline_days),
       Cell::integer(r.max_nodes),
       Cell::integer(r.global_batch),
       Cell::integer(r.seq_length),
       Cell::exact(plan.price_usd_per_hour),
       plan.price_source,
       plan.profile,
       Cell::integer(plan.enumerated),
       Cell::integer(plan.predictions),
       Cell::integer(static_cast<std::int64_t>(plan.options.size())),
       Cell::integer(static_cast<std::int64_t>(plan.rejected.size())),
       Cell::integer(plan.recommended + 1),
       Cell::boolean(plan.recommended_meets_deadline),
       Cell::integer(plan.fastest + 1),
       Cell::integer(plan.cheapest + 1),
       Cell::integer(r.min_nodes),
       plan_precision(plan),
       r.choices.recompute ? std::string(to_string(*r.choices.recompute)) : std::string("lightest that fits"),
       plan_routing(plan),
       Cell::integer(plan.reference_nodes),
       Cell::exact(r.hbm_headroom)});
  const ResultTable options = plan_options_table(plan);
  const ResultTable rejected = plan_rejected_table(plan);
  const ResultTable searched = searched_table(plan);
  std::vector<std::pair<std::string, const ResultTable*>> tables = {
      {"plan", &summary}, {"searched", &searched}, {"options", &options}};
  if (explain) tables.emplace_back("rejected", &rejected);
  return render_json(context, tables);
}

}  // namespace moetwin
