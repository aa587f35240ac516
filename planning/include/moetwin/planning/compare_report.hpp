// The renderings of a Comparison: one row per scenario (the CSV, which `moetwin report` reads back, and
// the JSON's "rows"), the text summary (predictions, each against the first with its band, verdict, the
// band's source and the settling run) and the JSON document.
#pragma once

#include <string>

#include "moetwin/planning/compare.hpp"
#include "moetwin/reports/result_table.hpp"

namespace moetwin {

// Columns: label, scenario, model, instance, nodes, gpus, tp, pp, vpp, ep, dp, mb, gbs, recompute,
// precision, dispatcher, routing, stack, predicted_iter_s, predicted_lo_s, predicted_hi_s, novelty_level,
// novelty, a2a_terms, predicted_tokens_s, predicted_tflops_gpu, node_hours_per_1e9_tokens, reference (the
// first), differs (';'-separated dimensions), difference_s, ratio, ratio_lo, ratio_hi (the 80% band),
// own_ratio_lo, own_ratio_hi (the ratio of the two own bands), ratio_uncertainty_pct, verdict ("reference",
// "beyond the uncertainty", "within the uncertainty"), band_source, settle_with, settle_node_hours.
ResultTable comparison_table(const Comparison& c);
std::string render_comparison_text(const Comparison& c);
// {"context", "rows" (the table)}.
std::string render_comparison_json(const Comparison& c, const OutputContext& context);

}  // namespace moetwin
