// The renderings of one prediction (`moetwin predict SCENARIO`): the per-rank breakdown table, the text
// summary, and the JSON document with its warnings; and the warning lines of row-driven predictions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

// Per category (compute, exposed_<class>, host_wait, bubble, idle): min, median and max over ranks and
// the critical rank's own time, seconds.
ResultTable breakdown_table(const Prediction& p);

// "warning: <w>\n" per warning: dispatcher validity and novelty warnings go to stdout in text, to
// stderr with CSV (which has no place for them).
std::string warning_lines(const std::vector<std::string>& warnings);

// {"context", each table, ["novelty"], "warnings" (always present)}, 2-space indented.
std::string render_prediction_json(const OutputContext& context,
                                   const std::vector<std::pair<std::string, const ResultTable*>>& tables,
                                   const std::vector<std::string>& warnings,
                                   const Novelty* novelty = nullptr);

// Scenario, layout, dispatcher and cost models, stack, profile, sources, the iteration with its 80%
// interval and novelty, throughput, critical rank, the warnings and the per-rank breakdown.
// `memory`: the memory line ("252.1 of 268.2 GiB (94%) per GPU ..."), omitted when empty. `spread`: the
// prediction's spread over the terms it might have (a2a_term_spread: the band every command prints); null:
// band_for at the prediction alone.
std::string render_prediction_text(const Scenario& s, const Prediction& p, const FittedProfile& profile,
                                   const std::string& memory = "", const TermSpread* spread = nullptr);
// Why a band spans more than its prediction's own (the A2A terms of measured relatives, the inherited
// stack's answer), for outputs; "" when it does not.
std::string term_spread_text(const Scenario& s, const TermSpread& spread);

}  // namespace moetwin
