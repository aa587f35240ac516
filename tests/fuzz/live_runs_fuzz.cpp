// libFuzzer target: arbitrary bytes -> the live-run CSV reader (parse_csv + parse_live_runs, every row
// validated like a scenario against the shipped catalog). Malformed input must end in InputError; any
// other exception, a crash, a leak or undefined behaviour is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/live_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const moetwin::CsvTable table = moetwin::parse_csv(text, "fuzz.csv");
    const moetwin::LiveRunTable runs = moetwin::parse_live_runs(table, moetwin_fuzz::catalog());
    for (const auto& run : runs.runs)
      if (!(run.iter_s > 0)) __builtin_trap();
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
