// The renderings of a Recommendation: the table of every point (the CSV, and the JSON's "rows"), the text
// summary (a brief table with footnoted statuses, the uncertainty rule, winners, ties with their settling
// runs, crossovers) and the JSON document.
#pragma once

#include <string>
#include <vector>

#include "moetwin/planning/recommend.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// One row per point, in Recommendation::points order. Columns: model, instance, nodes, tp, pp, vpp, ep, dp,
// mb, dispatcher, status, predicted_iter_s, predicted_lo_s, predicted_hi_s, novelty_level, novelty,
// a2a_terms, winner, margin_pct, margin_uncertainty_pct, margin_exceeds_uncertainty, behind_winner_pct,
// behind_beyond_uncertainty, settle_with, settle_node_hours, settle_margin_after_pct, the rest of
// predict_columns(), then scaling_reference_nodes, speedup, scaling_efficiency (the point's dispatcher and
// micro-batch against its smallest node count), node_hours_per_1e9_tokens and, with --tokens, days,
// days_lo, days_hi, node_hours, cost_usd (plan's arithmetic, training_cost.hpp). A point whose status is
// not "ok" has only the first eleven.
ResultTable recommendation_table(const Recommendation& r, const FittedProfile& profile);

// `columns` of `table` with every status other than "ok" shortened to its kind and a footnote number
// ("invalid [1]", "does not fit [2]"), and the footnotes' full texts numbered in order of first
// appearance: a reason is never cut to fit a column.
struct FootnotedTable {
  ResultTable table;
  std::vector<std::string> footnotes;
};
FootnotedTable footnote_statuses(const ResultTable& table, const std::vector<std::string>& columns);

// `table` is recommendation_table(r, profile); `scenario_path` as given on the command line.
std::string render_recommendation_text(const Recommendation& r, const ResultTable& table,
                                       const FittedProfile& profile, const std::string& scenario_path);
// {"context", "rows" (table), "crossovers", "pp_auto", "ties"}.
std::string render_recommendation_json(const Recommendation& r, const ResultTable& table,
                                       const OutputContext& context);

}  // namespace moetwin
