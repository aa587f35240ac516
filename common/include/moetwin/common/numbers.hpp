// Deterministic number formatting for machine outputs (CSV/JSON/text): the same double always
// prints the same characters, independent of locale and stream state.
#pragma once

#include <string>

namespace moetwin {

// Shortest round-trip representation (std::to_chars): for values that must survive a round trip.
std::string format_exact(double value);
// Fixed number of digits after the decimal point, e.g. format_fixed(3.14159, 3) == "3.142".
std::string format_fixed(double value, int digits);
// Significant digits, e.g. format_significant(123456.0, 3) == "1.23e+05".
std::string format_significant(double value, int digits);

// Units used across the project (SI): bytes, seconds, bytes/s, FLOP/s.
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;   // decimal gigabyte (vendor datasheets)
inline constexpr double kTB = 1e12;  // decimal terabyte

}  // namespace moetwin
