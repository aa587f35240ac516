// libFuzzer target: arbitrary bytes -> parse_scenario with the shipped catalog. A malformed scenario must
// end in InputError; any other exception, a crash, a leak or undefined behaviour is a bug (the uncaught
// exception aborts, which libFuzzer reports with the input that caused it).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const moetwin::Scenario s = moetwin::parse_scenario(text, "fuzz.toml", moetwin_fuzz::catalog());
    // A scenario that passed validation must have a pipeline layout (validation built one already).
    const moetwin::PipelineLayout layout = moetwin::make_pipeline_layout(s.model, s.parallel, {s.source, 0});
    (void)layout;
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
