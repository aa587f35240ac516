#include "moetwin/common/quoted_string.hpp"

namespace moetwin {

std::string quoted_string(const std::string& text) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace moetwin
