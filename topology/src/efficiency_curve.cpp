#include "moetwin/topology/efficiency_curve.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

#include "moetwin/common/numbers.hpp"

namespace moetwin {

namespace {

double parse_number(const std::string& text, const InputLocation& where, const std::string& key) {
  double value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw InputError(where, key, text, "expected a number");
  }
  return value;
}

}  // namespace

EfficiencyCurve::EfficiencyCurve(std::vector<Band> bands, const InputLocation& where)
    : bands_(std::move(bands)) {
  if (bands_.empty())
    throw InputError(where, "bands", "(none)", "expected at least one (min_bytes, factor) band");
  for (std::size_t i = 0; i < bands_.size(); ++i) {
    const Band& b = bands_[i];
    const std::string key = "band " + std::to_string(i) + " min_bytes";
    if (!std::isfinite(b.min_bytes) || b.min_bytes < 0) {
      throw InputError(where, key, format_exact(b.min_bytes), "expected a finite size >= 0 bytes");
    }
    if (i == 0 && b.min_bytes != 0) {
      throw InputError(where, key, format_exact(b.min_bytes),
                       "expected 0 (the first band covers all small sizes)");
    }
    if (i > 0 && !(b.min_bytes > bands_[i - 1].min_bytes)) {
      throw InputError(
          where, key, format_exact(b.min_bytes),
          "expected > " + format_exact(bands_[i - 1].min_bytes) + " (bands strictly increasing)");
    }
    if (!(b.factor > 0 && b.factor <= 1)) {
      throw InputError(where, "band " + std::to_string(i) + " factor", format_exact(b.factor),
                       "expected a fraction in (0, 1]");
    }
  }
}

EfficiencyCurve EfficiencyCurve::constant(double factor) {
  return EfficiencyCurve({Band{0, factor}});
}

EfficiencyCurve EfficiencyCurve::parse(const std::string& text, const InputLocation& where) {
  std::vector<Band> bands;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t semi = std::min(text.find(';', pos), text.size());
    const std::string item = text.substr(pos, semi - pos);
    const std::size_t colon = item.find(':');
    const std::string key = "band " + std::to_string(bands.size());
    if (colon == std::string::npos) throw InputError(where, key, item, "expected min_bytes:factor");
    bands.push_back(Band{parse_number(item.substr(0, colon), where, key + " min_bytes"),
                         parse_number(item.substr(colon + 1), where, key + " factor")});
    pos = semi + 1;
  }
  return EfficiencyCurve(std::move(bands), where);
}

double EfficiencyCurve::factor(double message_bytes) const {
  double f = bands_.front().factor;
  for (const Band& b : bands_) {
    if (b.min_bytes > message_bytes) break;
    f = b.factor;
  }
  return f;
}

std::string EfficiencyCurve::to_string() const {
  std::string out;
  for (const Band& b : bands_) {
    if (!out.empty()) out += ';';
    out += format_exact(b.min_bytes) + ":" + format_exact(b.factor);
  }
  return out;
}

}  // namespace moetwin
