// One string from pieces, appended in order.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace moetwin {

// concat({"n", std::to_string(nodes), "."}) has the characters of "n" + std::to_string(nodes) + ".".
// Use it for a chain that starts with a literal followed by a temporary std::string: GCC 12 at -O3
// inlines that operator+(const char*, std::string&&) into an insert at position 0 and raises a
// -Wrestrict false positive on its memcpy. Appending never takes that path.
inline std::string concat(std::initializer_list<std::string_view> pieces) {
  std::size_t size = 0;
  for (const std::string_view piece : pieces) size += piece.size();
  std::string out;
  out.reserve(size);
  for (const std::string_view piece : pieces) out.append(piece);
  return out;
}

}  // namespace moetwin
