#include "moetwin/reports/prediction_columns.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "moetwin/common/numbers.hpp"

namespace moetwin {

std::vector<std::string> predict_columns() {
  std::vector<std::string> c = {"predicted_iter_s", "predicted_tokens_s", "predicted_tflops_gpu",
                                "microbatches",     "critical_rank",      "critical_stage",
                                "compute_s_median", "compute_s_max"};
  for (const char* k : kCommClassNames) c.push_back(std::string("exposed_") + k + "_s_max");
  for (const char* k : {"host_wait", "bubble", "idle"}) c.push_back(std::string(k) + "_s_max");
  c.push_back("events");
  c.push_back("ops");
  return c;
}

std::vector<Cell> predict_cells(const Prediction& p) {
  std::vector<Cell> row = {Cell::fixed(p.iteration_s, 6),          Cell::fixed(p.tokens_per_s, 1),
                           Cell::fixed(p.model_tflops_per_gpu, 2), Cell::integer(p.microbatches),
                           Cell::integer(p.critical_rank),         Cell::integer(p.critical_stage),
                           Cell::fixed(p.compute.median_s, 6),     Cell::fixed(p.compute.max_s, 6)};
  for (const RankSpread& e : p.exposed) row.push_back(Cell::fixed(e.max_s, 6));
  for (const RankSpread* s : {&p.host_wait, &p.bubble, &p.idle}) row.push_back(Cell::fixed(s->max_s, 6));
  row.push_back(Cell::integer(static_cast<std::int64_t>(p.events)));
  row.push_back(Cell::integer(static_cast<std::int64_t>(p.ops)));
  return row;
}

std::vector<std::string> band_columns() {
  return {"predicted_lo_s", "predicted_hi_s", "novelty_level", "novelty", "novelty_distance"};
}

std::vector<Cell> band_cells(const UncertaintyBand& band, const Novelty& novelty) {
  return {Cell::fixed(band.lo_s, 6), Cell::fixed(band.hi_s, 6), Cell(novelty.level()),
          Cell(novelty.summary()), Cell::fixed(novelty.distance(), 2)};
}

nlohmann::ordered_json novelty_json(const Novelty& novelty) {
  nlohmann::ordered_json j;
  j["level"] = novelty.level();
  nlohmann::ordered_json dims = nlohmann::ordered_json::object();
  for (const NovelValue& v : novelty.novel) {
    const char* key = to_string(v.dimension);
    // The layout dimension may be new in several ways (pp regime, TP degree, EP span): joined with ';'.
    dims[key] = dims.contains(key) ? dims[key].get<std::string>() + ";" + v.value : v.value;
  }
  j["dimensions"] = dims;
  // Per new value, its distance from the fit (novelty units); and the combined distance (quadrature).
  nlohmann::ordered_json distances = nlohmann::ordered_json::array();
  for (const NovelValue& v : novelty.novel)
    distances.push_back(
        {{"dimension", to_string(v.dimension)}, {"value", v.value}, {"distance", v.distance}});
  j["distances"] = distances;
  j["distance"] = novelty.distance();
  j["warnings"] = novelty.warnings();
  // The nearest fitted rows (joint novelty) and how far each is, when the profile records its rows.
  if (!novelty.nearest.empty()) {
    nlohmann::ordered_json nearest = nlohmann::ordered_json::array();
    for (const NearestRow& r : novelty.nearest) nearest.push_back({{"row", r.key}, {"distance", r.distance}});
    j["nearest_fitted_rows"] = nearest;
  }
  return j;
}

std::string profile_label(const FittedProfile& p) {
  if (!p.fitted) return "unfitted defaults (no fitted profile)";
  std::string s = p.path + " (fitted " + p.fitted_at + " on " + p.fitted_on;
  if (p.cross_validated.rows > 0) {
    s += "; " + p.cv_scheme + " median |error| " + format_fixed(p.cross_validated.median_abs * 100, 1) +
         "%, p90 " + format_fixed(p.cross_validated.p90_abs * 100, 1) + "%";
  }
  return s + ")";
}

}  // namespace moetwin
