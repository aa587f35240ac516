// libFuzzer target: arbitrary bytes -> parse_calibration_profile (the calibration profile TOML sim reads).
// Malformed input must end in InputError; any other exception, a crash, a leak or undefined behaviour is a
// bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/profile/calibration_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)moetwin::parse_calibration_profile(text, "fuzz.toml");
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
