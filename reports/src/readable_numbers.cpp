#include "moetwin/reports/readable_numbers.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

constexpr int kSignificant = 4;

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// A plain decimal: optional '-', digits, '.', digits. No exponent, no sign '+', nothing around it.
bool is_plain_decimal(const std::string& s) {
  std::size_t i = s.empty() || s[0] != '-' ? 0 : 1;
  const std::size_t int_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == int_start || i == s.size() || s[i] != '.') return false;
  const std::size_t frac_start = ++i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i == s.size() && i > frac_start;
}

// Significant digits written: leading zeros do not count, trailing ones after the point do.
int significant_digits(const std::string& s) {
  int n = 0;
  bool leading = true;
  for (char c : s) {
    if (!is_digit(c)) continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

std::string shorten(double x) {
  const double a = std::fabs(x);
  if (a == 0) return "0";
  if (a >= 1000) return format_fixed(x, 0);
  if (a < 1e-3) return format_significant(x, kSignificant);
  const int decimals = kSignificant - 1 - static_cast<int>(std::floor(std::log10(a)));
  return format_fixed(x, decimals < 0 ? 0 : decimals);
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

}  // namespace

std::string readable_cell(const std::string& cell) {
  if (!is_plain_decimal(cell) || significant_digits(cell) <= kSignificant) return cell;
  const double x = std::strtod(cell.c_str(), nullptr);
  return std::isfinite(x) ? shorten(x) : cell;
}

std::string shorten_long_decimals(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const bool starts_word = is_digit(text[i]) && (i == 0 || !word_char(text[i - 1]));
    if (!starts_word) {
      out += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && is_digit(text[j])) ++j;
    std::size_t frac = 0;
    if (j + 1 < text.size() && text[j] == '.' && is_digit(text[j + 1])) {
      std::size_t k = j + 1;
      while (k < text.size() && is_digit(text[k])) ++k;
      frac = k - j - 1;
      j = k;
    }
    // A word of its own: what follows is no letter, digit, '_' or another '.' part ("26.04.01"); a
    // sentence's full stop ("... 5.236121.") still ends it.
    const bool ends_word =
        j == text.size() ||
        !(word_char(text[j]) && !(text[j] == '.' && (j + 1 == text.size() || !is_digit(text[j + 1]))));
    const std::string number = text.substr(i, j - i);
    out += frac >= 5 && ends_word ? readable_cell(number) : number;
    i = j;
  }
  return out;
}

}  // namespace moetwin
