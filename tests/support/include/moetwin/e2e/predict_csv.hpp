// End-to-end test support: `moetwin predict ... --format csv` read back as a table, for the golden tests that
// pin a cell's predicted iteration and check the same row through --runs (needs common/ for the CSV reader).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>

#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin::e2e {

// The table `moetwin --catalog <repository catalog> predict ARGS --format csv` prints, its output captured
// under `dir`. A run that does not exit 0 fails the test (its stderr in the message) and gives an empty
// table, so the caller's row-count assertion stops the test there.
inline CsvTable predict_csv(const std::string& args, const std::filesystem::path& dir) {
  const CliRun r = run_moetwin("predict " + args + " --format csv", dir);
  EXPECT_EQ(r.code, 0) << "predict " << args << ": " << r.err;
  if (r.code != 0) return {};
  return parse_csv(r.out, (dir / "stdout.txt").string());
}

// The field `column` of row `row` of `t`.
inline std::string field(const CsvTable& t, std::size_t row, const std::string& column) {
  return t.rows.at(row).fields.at(t.column(column));
}

// A live cell pinned by a golden test: its scenario file predicts `golden` seconds (as printed, to the
// nanosecond) within `tolerance` (a fraction) of the measured `measured_s`, and row `row` of `predict --runs
// runs_csv` (a table of `rows` rows) is that cell, with the same time.
struct GoldenCell {
  std::string scenario;  // path of the scenario file
  std::string golden;    // predicted_iter_s as printed
  double measured_s = 0;
  double tolerance = 0;
  std::string runs_csv;  // path of the live-run table holding the cell
  std::size_t rows = 0;
  std::size_t row = 0;
};

// Checks `cell` (use under ASSERT_NO_FATAL_FAILURE) and leaves the --runs table in `*runs` for the caller's
// own checks on the other rows.
inline void expect_golden_cell(const GoldenCell& cell, const std::filesystem::path& dir, CsvTable* runs) {
  const CsvTable t = predict_csv(cell.scenario, dir);
  ASSERT_EQ(t.rows.size(), 1u);
  const std::string predicted = field(t, 0, "predicted_iter_s");
  EXPECT_EQ(predicted, cell.golden);
  EXPECT_NEAR(std::stod(predicted) / cell.measured_s, 1.0, cell.tolerance);
  // The same row through --runs gives the same time: the scenario file is that row.
  *runs = predict_csv("--runs " + cell.runs_csv, dir);
  ASSERT_EQ(runs->rows.size(), cell.rows);
  EXPECT_EQ(field(*runs, cell.row, "predicted_iter_s"), predicted);
}

}  // namespace moetwin::e2e
