// libFuzzer target: arbitrary bytes -> load_fitted_profile (the TOML `validate --fit` writes), through a
// scratch file since the loader reads a path. Malformed input must end in InputError; any other exception,
// a crash, a leak or undefined behaviour is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_file.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/sim/fitted_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = moetwin_fuzz::scratch_path(".toml");
  moetwin_fuzz::write_file(path, data, size);
  try {
    (void)moetwin::load_fitted_profile(path);
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
