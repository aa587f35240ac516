// Byte-size arguments of the CLI (net --bytes).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "commands.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::cli {

// "64MiB", "1.5GiB", "512KiB", "1MB", "4096" (bytes); binary and decimal suffixes.
double parse_size(const std::string& text) {
  const InputLocation where{"--bytes", 0};
  std::size_t split = 0;
  while (split < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.' || text[split] == 'e' ||
          text[split] == 'E' || text[split] == '+')) {
    ++split;
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + split, value);
  if (split == 0 || ec != std::errc() || ptr != text.data() + split) {
    throw InputError(where, "bytes", text, "expected a size such as 64MiB, 1GiB, 512KiB, 1MB or 4096");
  }
  std::string unit = text.substr(split);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1}, {"B", 1}, {"KiB", kKiB}, {"MiB", kMiB}, {"GiB", kGiB}, {"KB", 1e3}, {"MB", 1e6}, {"GB", kGB}};
  for (const auto& [name, scale] : kUnits) {
    if (unit == name) {
      const double bytes = value * scale;
      if (!(bytes >= 0) || bytes > 1e15) {
        throw InputError(where, "bytes", text, "expected a size in [0, 1e15] bytes");
      }
      return bytes;
    }
  }
  throw InputError(where, "bytes", text, "expected a unit among B, KiB, MiB, GiB, KB, MB, GB");
}

}  // namespace moetwin::cli
