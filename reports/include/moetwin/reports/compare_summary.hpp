// What `moetwin report` shows of a `moetwin compare` output (planning/compare_report.hpp writes it): the
// summary lines (each scenario against the first: ratio, its 80% band, the verdict, the band's source and
// the settling run) and the table's columns.
#pragma once

#include <string>
#include <vector>

#include "moetwin/reports/report_input.hpp"

namespace moetwin {

std::vector<std::string> compare_summary_lines(const ReportInput& input);
const std::vector<std::string>& compare_table_columns();

}  // namespace moetwin
