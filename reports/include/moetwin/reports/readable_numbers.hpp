#pragma once
// Numbers as a reader takes them in: the report's tables and sentences show 4 significant figures (whole
// numbers from 1,000 up), while the CSV and JSON it reads keep every digit. A plan's "5.236121 s" reads
// "5.236 s"; an 80% band "3.891891 to 7.185405" reads "3.892 to 7.185". Numbers already that short, whole
// numbers, and words holding digits (versions, dates, campaign names) are left as they are.

#include <string>

namespace moetwin {

// The number a whole table cell holds, shortened to 4 significant figures when it has more; any other
// cell unchanged.
std::string readable_cell(const std::string& cell);

// Every decimal number in running text with 5 or more digits after its point, shortened like a cell. A
// number counts only as a word of its own: "nemo-26.04.01", "h200x2" or "1e-05" stay whole.
std::string shorten_long_decimals(const std::string& text);

}  // namespace moetwin
