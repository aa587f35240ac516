// A string as a double-quoted literal that is valid both as JSON and as a TOML basic string: quote and
// backslash escaped, control characters (< 0x20, and DEL) as \u00XX. Bytes >= 0x80 pass through (UTF-8).
// Used wherever moetwin writes a name or path into JSON (traces, net) or TOML (profiles).
#pragma once

#include <string>

namespace moetwin {

std::string quoted_string(const std::string& text);

}  // namespace moetwin
