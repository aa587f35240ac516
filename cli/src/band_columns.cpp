#include "band_columns.hpp"

#include "moetwin/common/numbers.hpp"

namespace moetwin::cli {

std::vector<std::string> band_columns() {
  return {"predicted_lo_s", "predicted_hi_s", "novelty_level", "novelty"};
}

std::vector<Cell> band_cells(const UncertaintyBand& band, const Novelty& novelty) {
  return {Cell::fixed(band.lo_s, 6), Cell::fixed(band.hi_s, 6), Cell(novelty.level()),
          Cell(novelty.summary())};
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
  j["warnings"] = novelty.warnings();
  return j;
}

ResultTable interval_coverage_table(
    const std::vector<std::pair<std::string, std::vector<IntervalCoverage>>>& scopes) {
  ResultTable t;
  t.columns = {"scope", "novelty_level", "rows", "inside", "coverage_pct", "median_hi_lo"};
  for (const auto& [scope, coverage] : scopes) {
    for (const IntervalCoverage& c : coverage) {
      t.add_row({scope, c.level, Cell::integer(c.rows), Cell::integer(c.inside),
                 Cell::fixed(c.share * 100, 1), Cell::fixed(c.median_hi_lo, 3)});
    }
  }
  return t;
}

std::string interval_coverage_line(const std::vector<IntervalCoverage>& coverage) {
  std::string all;
  std::string levels;
  for (const IntervalCoverage& c : coverage) {
    const std::string share = format_fixed(c.share * 100, 0) + "%";
    if (c.level == "all") {
      all = share + " of " + std::to_string(c.rows) + " rows inside their 80% interval, median hi/lo " +
            format_fixed(c.median_hi_lo, 2);
    } else {
      levels += (levels.empty() ? "" : ", ") + c.level + " " + share + " of " + std::to_string(c.rows);
    }
  }
  return all + " (" + levels + ")";
}

}  // namespace moetwin::cli
