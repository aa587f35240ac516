// Unit-test support: the message of the InputError a call throws, for tests that check what a refusal says
// (needs common/).
#pragma once

#include <functional>
#include <string>

#include "moetwin/common/input_error.hpp"

namespace moetwin::test_support {

// f()'s InputError message, or "no error" when it returns (any other exception propagates: a bug).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace moetwin::test_support
