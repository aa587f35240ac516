#include "moetwin/planning/recommend_report.hpp"

#include <algorithm>

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/scenario_choices.hpp"
#include "moetwin/planning/training_cost.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"

namespace moetwin {

namespace {

// The point of the same dispatcher and micro-batch at the smallest node count where it is ok: the scaling
// reference of `pt` (itself when none is smaller); nullptr when `pt` is not ok.
const RecommendPoint* scaling_reference(const Recommendation& r, const RecommendPoint& pt) {
  if (pt.status != "ok") return nullptr;
  const RecommendPoint* best = &pt;
  for (const RecommendPoint& q : r.points) {
    if (q.status == "ok" && q.dispatcher == pt.dispatcher && q.mb == pt.mb && q.nodes < best->nodes)
      best = &q;
  }
  return best;
}

// Scaling, node-hours per token and (with --tokens) time to train and cost of an "ok" point: the columns
// plan has, by the same arithmetic (training_cost.hpp).
void add_cost_cells(const Recommendation& r, const RecommendPoint& pt, const FittedProfile& profile,
                    std::vector<Cell>& row) {
  const Scenario& s = r.rows[pt.row].scenario;
  const double t = r.predictions[pt.row].iteration_s;
  const double tokens_per_iteration = static_cast<double>(s.training.global_batch) * s.training.seq_length;
  const RecommendPoint* ref = scaling_reference(r, pt);
  const Scaling scaling = scaling_against(r.predictions[ref->row].iteration_s, ref->nodes, t, pt.nodes);
  row.push_back(Cell::integer(ref->nodes));
  row.push_back(Cell::fixed(scaling.speedup, 4));
  row.push_back(Cell::fixed(scaling.efficiency, 4));
  row.push_back(Cell::fixed(node_hours_per_gtoken(t, pt.nodes, tokens_per_iteration), 4));
  if (!(r.tokens > 0)) {
    for (int k = 0; k < 5; ++k) row.emplace_back("");
    return;
  }
  const Novelty novelty = novelty_of(s, profile);
  const TrainingCost cost = training_cost(t, band_for(profile, pt.fastest_s, novelty).lo_s,
                                          band_for(profile, pt.slowest_s, novelty).hi_s, pt.nodes, r.tokens,
                                          tokens_per_iteration, r.price_usd_per_hour);
  row.push_back(Cell::fixed(cost.days, 3));
  row.push_back(Cell::fixed(cost.days_lo, 3));
  row.push_back(Cell::fixed(cost.days_hi, 3));
  row.push_back(Cell::fixed(cost.node_hours, 1));
  row.push_back(cost.cost_usd < 0 ? Cell("") : Cell::fixed(cost.cost_usd, 0));
}

// The columns add_cost_cells fills.
const std::vector<std::string>& cost_columns() {
  static const std::vector<std::string> columns = {"scaling_reference_nodes",
                                                   "speedup",
                                                   "scaling_efficiency",
                                                   "node_hours_per_1e9_tokens",
                                                   "days",
                                                   "days_lo",
                                                   "days_hi",
                                                   "node_hours",
                                                   "cost_usd"};
  return columns;
}

// The memory estimate of a valid point's scenario (closed form; the point was checked to fit).
MemoryEstimate point_memory(const Scenario& s) {
  return estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {s.source, 0}));
}

// The cells after the first eleven of an "ok" point of `group`.
void add_prediction_cells(const Recommendation& r, const RecommendGroup& group, const RecommendPoint& pt,
                          const FittedProfile& profile, std::vector<Cell>& row) {
  const Prediction& p = r.predictions[pt.row].detail;
  const double winner_s = r.predictions[r.points[group.ranked[0]].row].iteration_s;
  row.push_back(Cell::fixed(p.iteration_s, 6));
  const Novelty novelty = novelty_of(r.rows[pt.row].scenario, profile);
  row.push_back(Cell::fixed(band_for(profile, pt.fastest_s, novelty).lo_s, 6));
  row.push_back(Cell::fixed(band_for(profile, pt.slowest_s, novelty).hi_s, 6));
  row.emplace_back(novelty.level());
  row.emplace_back(novelty.summary());
  row.push_back(a2a_terms_label(profile, pt.dispatcher));
  row.push_back(group.winner);
  row.push_back(Cell::fixed(group.margin * 100, 2));
  row.push_back(group.uncertainty >= 0 ? Cell::fixed(group.uncertainty * 100, 2) : Cell(""));
  row.push_back(Cell::boolean(group.exceeds));
  row.push_back(Cell::fixed((p.iteration_s / winner_s - 1) * 100, 2));
  row.push_back(Cell::boolean(pt.beyond));
  const SettlingExperiment& settle = group.settle;
  const bool settles_this = settle.found && std::find(settle.dispatchers.begin(), settle.dispatchers.end(),
                                                      pt.dispatcher) != settle.dispatchers.end();
  row.emplace_back(settles_this ? describe(settle, r.rows[pt.row].scenario) : std::string());
  row.push_back(settles_this ? Cell::fixed(settle.node_hours, 2) : Cell(""));
  row.push_back(settles_this ? Cell::fixed(settle.margin_after * 100, 2) : Cell(""));
  const std::vector<Cell> cells = predict_cells(p);
  for (std::size_t c = 1; c < cells.size(); ++c) row.push_back(cells[c]);
  const MemoryEstimate memory = point_memory(r.rows[pt.row].scenario);
  row.push_back(Cell::fixed(memory.worst().total() / kGiB, 2));
  row.push_back(Cell::fixed(memory.hbm_bytes / kGiB, 2));
  row.push_back(Cell::boolean(within_hbm_headroom(memory, r.hbm_headroom)));
}

// One warning line per valid point beyond the HBM headroom.
std::string memory_warnings(const Recommendation& r) {
  std::string out;
  for (const RecommendPoint& pt : r.points) {
    if (pt.status != "ok") continue;
    const Scenario& s = r.rows[pt.row].scenario;
    const std::string w = hbm_headroom_warning(s, point_memory(s), r.hbm_headroom);
    if (!w.empty()) out += "warning: " + pt.label() + ", " + pt.dispatcher + ": " + w + "\n";
  }
  return out.empty() ? out : "\n" + out;
}

// The text's table: the layout, the prediction and its lag, scaling and, with --tokens, time and cost.
std::vector<std::string> brief_columns(const Recommendation& r) {
  std::vector<std::string> c = {"nodes",
                                "tp",
                                "pp",
                                "ep",
                                "dp",
                                "mb",
                                "dispatcher",
                                "status",
                                "predicted_iter_s",
                                "predicted_lo_s",
                                "predicted_hi_s",
                                "novelty_level",
                                "a2a_terms",
                                "behind_winner_pct",
                                "behind_beyond_uncertainty",
                                "memory_gib",
                                "within_hbm_headroom",
                                "speedup",
                                "scaling_efficiency",
                                "node_hours_per_1e9_tokens"};
  if (r.tokens > 0) c.insert(c.end(), {"days", "node_hours", "cost_usd"});
  return c;
}

std::string lines_of(const std::vector<std::string>& lines) {
  std::string t;
  for (const std::string& l : lines) t += "  " + l + "\n";
  return t;
}

}  // namespace

ResultTable recommendation_table(const Recommendation& r, const FittedProfile& profile) {
  ResultTable table;
  table.columns = {"model",
                   "instance",
                   "nodes",
                   "tp",
                   "pp",
                   "vpp",
                   "ep",
                   "dp",
                   "mb",
                   "dispatcher",
                   "status",
                   "predicted_iter_s",
                   "predicted_lo_s",
                   "predicted_hi_s",
                   "novelty_level",
                   "novelty",
                   "a2a_terms",
                   "winner",
                   "margin_pct",
                   "margin_uncertainty_pct",
                   "margin_exceeds_uncertainty",
                   "behind_winner_pct",
                   "behind_beyond_uncertainty",
                   "settle_with",
                   "settle_node_hours",
                   "settle_margin_after_pct"};
  for (const std::string& c : predict_columns()) {
    if (c != "predicted_iter_s") table.columns.push_back(c);
  }
  for (const char* c : {"memory_gib", "hbm_gib", "within_hbm_headroom"}) table.columns.push_back(c);
  for (const std::string& c : cost_columns()) table.columns.push_back(c);
  for (const RecommendGroup& group : r.groups) {
    for (std::size_t k = group.first; k < group.first + r.dispatchers.size(); ++k) {
      const RecommendPoint& pt = r.points[k];
      // The layout rescale gives the point (recommend.cpp make_point): tp, vpp and ep kept, dp derived.
      const Scenario& base = r.base;
      const int dp = pt.nodes * base.instance.gpus % (base.parallel.tp * base.parallel.cp * pt.pp) == 0
                         ? pt.nodes * base.instance.gpus / (base.parallel.tp * base.parallel.cp * pt.pp)
                         : 0;
      std::vector<Cell> row = {r.base.model.name,
                               r.base.instance.name,
                               Cell::integer(pt.nodes),
                               Cell::integer(base.parallel.tp),
                               Cell::integer(pt.pp),
                               Cell::integer(base.parallel.vpp),
                               Cell::integer(base.parallel.ep),
                               dp > 0 ? Cell::integer(dp) : Cell(""),
                               Cell::integer(pt.mb),
                               pt.dispatcher,
                               pt.status};
      if (pt.status == "ok") {
        add_prediction_cells(r, group, pt, profile, row);
        add_cost_cells(r, pt, profile, row);
      } else {
        while (row.size() < table.columns.size()) row.emplace_back("");
      }
      table.add_row(std::move(row));
    }
  }
  return table;
}

FootnotedTable footnote_statuses(const ResultTable& table, const std::vector<std::string>& columns) {
  FootnotedTable out;
  out.table.columns = columns;
  for (const auto& r : table.rows) {
    std::vector<Cell> b;
    for (const std::string& c : columns) {
      Cell cell = r[table.column(c)];
      if (c == "status" && cell.text != "ok") {
        auto it = std::find(out.footnotes.begin(), out.footnotes.end(), cell.text);
        if (it == out.footnotes.end()) it = out.footnotes.insert(out.footnotes.end(), cell.text);
        const std::string kind = cell.text.rfind("invalid", 0) == 0 ? "invalid" : "does not fit";
        cell.text = kind + " [" + std::to_string(it - out.footnotes.begin() + 1) + "]";
      }
      b.push_back(cell);
    }
    out.table.add_row(std::move(b));
  }
  return out;
}

std::string render_recommendation_text(const Recommendation& r, const ResultTable& table,
                                       const FittedProfile& profile, const std::string& scenario_path) {
  const FootnotedTable brief = footnote_statuses(table, brief_columns(r));
  std::string footnotes;
  for (std::size_t k = 0; k < brief.footnotes.size(); ++k) {
    footnotes += "  [" + std::to_string(k + 1) + "] " + brief.footnotes[k] + "\n";
  }
  std::string content =
      render_key_values(
          {{"scenario", scenario_path},
           {"model / instance", r.base.model.name + " on " + r.base.instance.name},
           {"training", std::string(to_string(r.base.training.precision)) + ", recompute " +
                            to_string(r.base.training.recompute) + ", routing " +
                            routing_choice_text(r.base.routing) + ", global batch " +
                            std::to_string(r.base.training.global_batch)},
           {"scaling",
            "speedup and scaling_efficiency of each dispatcher and micro-batch against its smallest "
            "node count; node_hours_per_1e9_tokens = nodes x hours per 1e9 tokens"},
           {"time to train",
            r.tokens > 0
                ? concat({format_significant(r.tokens, 4), " tokens; price ",
                          r.price_usd_per_hour > 0
                              ? concat({"$", format_fixed(r.price_usd_per_hour, 2), " per node-hour (",
                                        r.price_source, ")"})
                              : concat({"unknown (", r.price_source, "): costs in node-hours only"})})
                : std::string("--tokens T adds days, node-hours and cost per point")},
           {"profile", profile_label(profile)}}) +
      "\n" + render_text(brief.table) + (footnotes.empty() ? std::string() : "\n" + footnotes) +
      memory_warnings(r) +
      (r.excluded_dispatchers.empty() ? std::string() : "\ndispatchers that cannot run here (left out):\n") +
      lines_of(r.excluded_dispatchers) +
      (r.pp_notes.empty() ? std::string() : "\npp auto (--pp N to choose):\n") + lines_of(r.pp_notes) +
      "\nuncertainty:\n  " +
      (r.uncertainty >= 0
           ? "a margin counts when it exceeds " + format_fixed(r.uncertainty * 100, 1) +
                 "%, the p90 error of the profile's cross-validated margins (" +
                 std::to_string(profile.cross_validated_margin.pairs) +
                 " pairs of dispatchers measured on one layout), widened where a point is new to the fit "
                 "(margin_uncertainty_pct: in proportion to its wider band)"
           : std::string("a margin counts when the two bands do not overlap (the profile has no "
                         "cross-validated margin errors)")) +
      "\n";
  content += lines_of(r.generic_notes);
  content += "winners:\n";
  content += lines_of(r.winners);
  content +=
      "ties, and the cheapest run that settles each (value of information: the margin's band after "
      "refitting the two dispatchers' A2A terms on the run's measured margin; iteration noise " +
      format_fixed(kIterationCv * 100, 1) +
      "%, job-to-job variation unmeasured, so the narrowed band is a lower bound; job start-up " +
      format_fixed(SettlingOptions{}.job_startup_s / 60, 0) + " min each, an assumption):\n";
  content += r.ties.empty() ? std::string("  none\n") : lines_of(r.ties);
  content += "crossovers:\n";
  content += r.crossovers.empty() ? std::string("  none\n") : lines_of(r.crossovers);
  return content;
}

std::string render_recommendation_json(const Recommendation& r, const ResultTable& table,
                                       const OutputContext& context) {
  const auto one_column = [](const char* name, const std::vector<std::string>& values) {
    ResultTable t;
    t.columns = {name};
    for (const std::string& v : values) t.add_row({v});
    return t;
  };
  const ResultTable cross = one_column("crossover", r.crossovers);
  const ResultTable pp_table = one_column("pp_auto", r.pp_notes);
  const ResultTable tie_table = one_column("tie", r.ties);
  const ResultTable excluded = one_column("dispatcher_left_out", r.excluded_dispatchers);
  return render_json(context, {{"rows", &table},
                               {"crossovers", &cross},
                               {"pp_auto", &pp_table},
                               {"ties", &tie_table},
                               {"dispatchers_left_out", &excluded}});
}

}  // namespace moetwin
