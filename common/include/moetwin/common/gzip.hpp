// gzip (RFC 1952) of a byte string, for large outputs such as traces: `predict --trace X.json.gz`.
#pragma once

#include <string>

namespace moetwin {

// The gzip file of `data` (zlib level 6, no file name, modification time 0): the same input always gives
// the same bytes. Perfetto and chrome://tracing open gzipped traces directly.
std::string gzip_bytes(const std::string& data);

// True when `path` ends in ".gz".
bool is_gzip_path(const std::string& path);

}  // namespace moetwin
