#include "moetwin/reports/compare_summary.hpp"

namespace moetwin {

std::vector<std::string> compare_summary_lines(const ReportInput& in) {
  std::vector<std::string> out;
  if (in.rows.empty()) return {"No scenarios compared."};
  out.push_back("Reference: " + in.cell(0, {"label"}) + ", " + in.cell(0, {"predicted_iter_s"}) +
                " s per iteration (80% band " + in.cell(0, {"predicted_lo_s"}) + " to " +
                in.cell(0, {"predicted_hi_s"}) + ").");
  for (std::size_t r = 1; r < in.rows.size(); ++r) {
    std::string line = in.cell(r, {"label"}) + ": " + in.cell(r, {"predicted_iter_s"}) + " s, " +
                       in.cell(r, {"ratio"}) + "x the reference (80% band " + in.cell(r, {"ratio_lo"}) +
                       " to " + in.cell(r, {"ratio_hi"}) + "; the two own bands alone give " +
                       in.cell(r, {"own_ratio_lo"}) + " to " + in.cell(r, {"own_ratio_hi"}) +
                       "): " + in.cell(r, {"verdict"}) + ".";
    out.push_back(line);
    const std::string& source = in.cell(r, {"band_source"});
    if (!source.empty()) out.push_back("  Band source: " + source + ".");
    const std::string& settle = in.cell(r, {"settle_with"});
    if (!settle.empty()) out.push_back("  Settling run: " + settle + ".");
  }
  return out;
}

const std::vector<std::string>& compare_table_columns() {
  static const std::vector<std::string> columns = {"label",
                                                   "nodes",
                                                   "tp",
                                                   "pp",
                                                   "ep",
                                                   "dp",
                                                   "mb",
                                                   "precision",
                                                   "dispatcher",
                                                   "predicted_iter_s",
                                                   "predicted_lo_s",
                                                   "predicted_hi_s",
                                                   "novelty_level",
                                                   "difference_s",
                                                   "ratio",
                                                   "ratio_lo",
                                                   "ratio_hi",
                                                   "own_ratio_lo",
                                                   "own_ratio_hi",
                                                   "verdict"};
  return columns;
}

}  // namespace moetwin
