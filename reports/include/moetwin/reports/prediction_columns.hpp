// What every prediction row carries (predict, validate, recommend; plan and sweep name theirs alike), so
// that all row-driven outputs name and format the same quantities the same way: the replay's summary, the
// 80% interval of the measured time with the prediction's novelty, and the fitted profile it came from.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

// Names of the CommClass values in column names, by CommClass.
inline constexpr const char* kCommClassNames[kCommClasses] = {"tp", "ep", "pp", "dp"};

// predicted_iter_s, predicted_tokens_s, predicted_tflops_gpu, microbatches, critical rank and stage,
// compute median/max, exposed_<class>_s_max, host_wait/bubble/idle max, events, ops (seconds unless named).
std::vector<std::string> predict_columns();
std::vector<Cell> predict_cells(const Prediction& p);

// predicted_lo_s, predicted_hi_s (the 80% interval of the measured time, s), novelty_level ("covered",
// "configuration", "platform"), novelty ("dimension=value;..." of what the fit has no live runs of),
// novelty_distance (Novelty::distance(), novelty units: how far the prediction reaches beyond the fit).
std::vector<std::string> band_columns();
std::vector<Cell> band_cells(const UncertaintyBand& band, const Novelty& novelty);
// {"level": ..., "dimensions": {"gpu": "B200", ...}, "distances": [{"dimension", "value", "distance"}...],
// "distance": combined, "warnings": [...]}: a prediction's novelty in JSON.
nlohmann::ordered_json novelty_json(const Novelty& novelty);

// "calibrate/profiles/fitted/live-fit.toml (fitted 2026-11-29 on ...; leave-one-campaign-out median
// |error| 6.1%, p90 ...)" or "unfitted defaults (no fitted profile)".
std::string profile_label(const FittedProfile& profile);

}  // namespace moetwin
