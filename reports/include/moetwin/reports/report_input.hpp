// The inputs of `moetwin report`: the CSV or JSON outputs of plan, sweep, validate, recommend, predict and
// compare, read
// back as a table of text cells, with their kind detected from the columns and a SHA-256 of the bytes
// (the report's context block lists both, so a report names exactly what it was made from).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace moetwin {

enum class ReportKind { plan, sweep, validate, recommend, predict, compare };
const char* to_string(ReportKind kind);

struct ReportInput {
  std::string path;
  std::string sha256;  // of the file's bytes, lowercase hex
  ReportKind kind = ReportKind::plan;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column ("" when absent)
  // From a JSON input's "context" block (or the plan summary), "" when not recorded.
  std::string moetwin_version, git_revision, profile, command;
  // plan: the deadline in days from a JSON input's plan summary or a deadline_days column, "" when none.
  std::string deadline_days;

  // Index of the first of `names` present; npos when none is.
  std::size_t find(const std::vector<std::string>& names) const;
  bool has(const std::string& name) const { return find({name}) != npos; }
  // The cell of `row` in the first present column of `names`; "" when none is present.
  const std::string& cell(std::size_t row, const std::vector<std::string>& names) const;
  // The same, parsed as a number; NaN when absent, empty or not a number.
  double number(std::size_t row, const std::vector<std::string>& names) const;
  // False when the row's "fits" column says false (a sweep point over the GPU's HBM): such a point would
  // not run, so it is never drawn or named as the fastest. True without the column.
  bool fits(std::size_t row) const { return cell(row, {"fits"}) != "false"; }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

// Kind from the columns, first rule that matches:
//   compare: ratio, ratio_lo, ratio_hi, verdict;
//   plan: days, node_hours, pareto;   recommend: winner, margin_pct, lo_s, hi_s;
//   validate: error_pct, predicted_iter_s;   sweep: point, status, and iteration_s or predicted_iter_s;
//   predict: scenario, predicted_iter_s (`predict SCENARIO`; `predict --runs` output reads as validate:
//   its iter_err_pct column is validate's error_pct).
// Throws InputError at `path` naming the four signatures when none matches.
ReportKind detect_report_kind(const std::vector<std::string>& columns, const std::string& path);

// Reads a CSV (comment lines '#') or a JSON document ({"context": {...}, "<table>": [{...}, ...]}; the
// rows are the first of "options", "rows", "points", "runs" present, else the first array of objects).
// Throws InputError for an unreadable, malformed or unrecognised file, and for an HDF5 file (.h5: a sweep's
// PREFIX.h5; the report reads the PREFIX.csv written beside it).
ReportInput load_report_input(const std::string& path);
// The same from text already read (tests); `path` names it in messages and decides CSV vs JSON (".json").
ReportInput parse_report_input(const std::string& text, const std::string& path);

// SHA-256 (FIPS 180-4) of `bytes`, lowercase hex.
std::string sha256_hex(const std::string& bytes);

}  // namespace moetwin
