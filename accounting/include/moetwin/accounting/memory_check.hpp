// The memory model against measured peaks: the rows of accounting/data/memory-checks.csv (scenarios for the
// rows of accounting/data/measured-memory.csv the model can describe) estimated and compared, with the
// error per source. What accounting/tests/memory_check_test.cpp prints and bounds; the numbers are in
// docs/2026-12-04-honest-bounds.md.
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"

namespace moetwin {

struct MemoryCheck {
  int measured_row = 0;  // 1-based data row of measured-memory.csv
  std::string source;    // short source name (the error is reported per source)
  std::string label;     // "qwen3-30b-a3b tp1 pp4 ep2 dp2 mb4 stage 3"
  std::string compare;   // "allocated", "reserved" or "total"
  double measured_bytes = 0;
  double predicted_bytes = 0;  // the part of the estimate `compare` names
  double error = 0;            // predicted / measured - 1
  std::string assumed;
};

// Reads `checks_csv` (memory-checks.csv's columns) and estimates each row with `catalog`'s models and
// instances. Throws InputError for a malformed row (file, line, column).
std::vector<MemoryCheck> check_measured_memory(const std::string& checks_csv, const Catalog& catalog);

// Per source and over all rows: rows, median |error|, the worst error (signed) and its row.
struct MemoryCheckSummary {
  std::string source;  // "all" for every row
  int rows = 0;
  double median_abs = 0;
  double worst = 0;
  int worst_row = 0;
};
std::vector<MemoryCheckSummary> summarize_memory_checks(const std::vector<MemoryCheck>& checks);

}  // namespace moetwin
