// libFuzzer target: arbitrary bytes -> parse_sweep (sweep TOML) with the shipped catalog. Malformed input
// must end in InputError; any other exception, a crash, a leak or undefined behaviour is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)moetwin::parse_sweep(text, MOETWIN_FUZZ_SWEEP_PATH, moetwin_fuzz::catalog());
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
