// Errors for bad input: which file, which line, which key, which value, what was expected.
// Libraries throw InputError; only main() turns it into a message and a non-zero exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace moetwin {

// Where a bad value came from. line is 1-based; 0 when unknown (e.g. a command-line flag).
struct InputLocation {
  std::string file;
  int line = 0;
};

// Thrown for every malformed input. what() reads "file:line: key: value: expected ...".
class InputError : public std::runtime_error {
 public:
  InputError(const InputLocation& where, const std::string& key, const std::string& value,
             const std::string& expected);
  // A message that is not about one key (e.g. "file not found"): "file:line: message".
  InputError(const InputLocation& where, const std::string& message);

  const InputLocation& where() const { return where_; }

 private:
  InputLocation where_;
};

// Exit codes of the CLI, documented in README.md.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int input_error = 2;    // malformed scenario, CSV, flag
inline constexpr int internal_error = 3; // a bug: an invariant failed
inline constexpr int no_device = 4;      // calibration: no GPU / NCCL / fabric provider
}  // namespace exit_code

}  // namespace moetwin
