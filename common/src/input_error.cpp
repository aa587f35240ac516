#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {
std::string prefix(const InputLocation& where) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  // Not ":" + std::to_string(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
  if (where.line > 0) out.append(":").append(std::to_string(where.line));
  return out;
}
}  // namespace

InputError::InputError(const InputLocation& where, const std::string& key, const std::string& value,
                       const std::string& expected)
    : std::runtime_error(prefix(where) + ": " + key + ": " + value + ": " + expected), where_(where) {}

InputError::InputError(const InputLocation& where, const std::string& message)
    : std::runtime_error(prefix(where) + ": " + message), where_(where) {}

}  // namespace moetwin
