#include "moetwin/common/gzip.hpp"

#include <zlib.h>

#include <stdexcept>

namespace moetwin {

std::string gzip_bytes(const std::string& data) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's; the default header has mtime 0.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 32);
  // zlib's API takes non-const input; deflate only reads it.
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t written = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  out.resize(written);
  return out;
}

bool is_gzip_path(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

}  // namespace moetwin
