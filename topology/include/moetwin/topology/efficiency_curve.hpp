// Achieved fraction of a link's bandwidth by message size: a parsed, validated value type, shaped like
// SimGrid's FactorSet (src/kernel/resource/FactorSet.hpp, "network/bandwidth-factor"): sorted bands of
// (min_bytes, factor); a message of s bytes gets the factor of the last band with min_bytes <= s.
// The defaults ship with the collective models (collectives.hpp); calibration profiles replace them.
#pragma once

#include <string>
#include <vector>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

class EfficiencyCurve {
 public:
  struct Band {
    double min_bytes = 0;  // bytes, >= 0, finite; bands strictly increasing
    double factor = 1;     // achieved / nominal bandwidth, in (0, 1]
    friend bool operator==(const Band&, const Band&) = default;
  };

  // Validates on construction: at least one band, the first starting at 0 bytes, min_bytes strictly
  // increasing and finite, every factor in (0, 1]. Throws InputError located at `where`.
  explicit EfficiencyCurve(std::vector<Band> bands, const InputLocation& where = {"efficiency curve", 0});
  // One band: the same factor at every size.
  static EfficiencyCurve constant(double factor);
  // SimGrid's FactorSet text: "min_bytes:factor;min_bytes:factor;..." with bands in ascending order,
  // e.g. "0:0.5;65536:0.8;1048576:0.9". Throws InputError naming the bad band.
  static EfficiencyCurve parse(const std::string& text, const InputLocation& where);

  // Factor for a message of `message_bytes` (>= 0).
  double factor(double message_bytes) const;
  const std::vector<Band>& bands() const { return bands_; }
  // The parse() format, with exact numbers (round-trips).
  std::string to_string() const;

  friend bool operator==(const EfficiencyCurve&, const EfficiencyCurve&) = default;

 private:
  std::vector<Band> bands_;
};

}  // namespace moetwin
