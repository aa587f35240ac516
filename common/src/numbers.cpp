#include "moetwin/common/numbers.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace moetwin {
namespace {
std::string to_chars_string(double value, std::chars_format fmt, int precision, bool use_precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  auto res = use_precision ? std::to_chars(buf.data(), buf.data() + buf.size(), value, fmt, precision)
                           : std::to_chars(buf.data(), buf.data() + buf.size(), value);
  std::string out(buf.data(), res.ptr);
  if (out == "-0" || out.rfind("-0.", 0) == 0) {
    // Normalise negative zero so outputs do not differ by the sign of a zero.
    bool all_zero = true;
    for (char c : out) {
      if (c >= '1' && c <= '9') all_zero = false;
    }
    if (all_zero) out.erase(0, 1);
  }
  return out;
}
}  // namespace

std::string format_exact(double value) { return to_chars_string(value, std::chars_format::general, 0, false); }

std::string format_fixed(double value, int digits) {
  return to_chars_string(value, std::chars_format::fixed, digits, true);
}

std::string format_significant(double value, int digits) {
  return to_chars_string(value, std::chars_format::general, digits, true);
}

}  // namespace moetwin
