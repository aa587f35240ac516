// libFuzzer target: arbitrary bytes -> import_deepep (DeepEP / UCCL-EP test_internode.py,
// test_intranode.py, test_low_latency.py output). Malformed input must end in InputError; any other
// exception, a crash, a leak or undefined behaviour is a bug. Imported times must be finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const moetwin::ImportResult r = moetwin::import_deepep(text, "fuzz.log");
    if (r.experiments.empty()) __builtin_trap();
    for (const moetwin::Experiment& e : r.experiments) {
      if (e.name.find('/') != std::string::npos) __builtin_trap();
      for (double s : e.samples)
        if (!std::isfinite(s)) __builtin_trap();
    }
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
