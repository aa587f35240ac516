// libFuzzer target: arbitrary bytes -> import_nccl_tests (with and without --op). A garbled, truncated or
// interleaved log must end in InputError; any other exception, a crash, a leak or undefined behaviour is a
// bug. An import that succeeds must hold finite, positive times.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moetwin::NcclTestsOptions options;
  if (size % 2 == 1) options.op = "all_reduce";
  options.keep_wrong = size % 3 == 0;
  try {
    const moetwin::ImportResult r = moetwin::import_nccl_tests(text, "fuzz.log", options);
    if (r.experiments.empty()) __builtin_trap();
    for (const moetwin::Experiment& e : r.experiments) {
      if (e.samples.empty() || e.name.find('/') != std::string::npos) __builtin_trap();
      for (double s : e.samples)
        if (!std::isfinite(s)) __builtin_trap();
    }
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
