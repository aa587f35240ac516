// libFuzzer target: arbitrary bytes -> import_megatron_log. A garbled or truncated log must end in
// InputError; any other exception, a crash, a leak or undefined behaviour is a bug. Options fill what a
// log may leave out, so that inputs reaching the end of the parser are common.
#include <cstddef>
#include <cstdint>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/validate/megatron_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  moetwin::LogImportOptions options;
  options.model = "deepseek-v3";
  options.instance = "p6-b300.48xlarge";
  options.skip_first = static_cast<int>(size % 5) - 1;  // -1: the automatic warm-up rule
  if (size % 3 == 0) {
    // What a scenario supplies, so that logs without an argument dump reach the row too.
    options.given = {"scenario fuzz.toml", 8, 1, 1, 8, 1, 1, 1, 1, 8, 4096, 4, std::string("none"), false};
    options.dispatcher = "deepep-uccl";
  }
  try {
    const moetwin::ImportedRun run = moetwin::import_megatron_log(text, "fuzz.log", options);
    // A successful import has a full CSV row and finite statistics over at least one sample.
    if (run.row.size() != run.header.size() || run.steady_count < 1 || !(run.median_iter_s > 0) ||
        !(run.p10_iter_s <= run.median_iter_s) || !(run.median_iter_s <= run.p90_iter_s))
      __builtin_trap();
  } catch (const moetwin::InputError&) {
    // Expected for malformed input.
  }
  return 0;
}
