// The 80% interval and the novelty every prediction row carries (predict, validate, recommend, plan,
// sweep name them alike), and validate's table of how often the intervals hold the measured time.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/validate/novelty_bands.hpp"

namespace moetwin::cli {

// predicted_lo_s, predicted_hi_s (the 80% interval of the measured time, s), novelty_level ("covered",
// "configuration", "platform"), novelty ("dimension=value;..." of what the fit has no live runs of).
std::vector<std::string> band_columns();
std::vector<Cell> band_cells(const UncertaintyBand& band, const Novelty& novelty);
// {"level": ..., "dimensions": {"gpu": "B200", ...}, "warnings": [...]}: a prediction's novelty in JSON.
nlohmann::ordered_json novelty_json(const Novelty& novelty);

// One row per scope ("in_sample", "out_of_sample") and novelty level: rows, inside, coverage_pct,
// median_hi_lo.
ResultTable interval_coverage_table(
    const std::vector<std::pair<std::string, std::vector<IntervalCoverage>>>& scopes);
// "out of sample 79% of 58 rows (covered 81%, platform 71%), median hi/lo 1.38": one scope in a line.
std::string interval_coverage_line(const std::vector<IntervalCoverage>& coverage);

}  // namespace moetwin::cli
