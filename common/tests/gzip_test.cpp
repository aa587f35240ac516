#include "moetwin/common/gzip.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

std::string gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

TEST(Gzip, RoundTripsAndIsDeterministic) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += concat({"{\"ph\":\"X\",\"name\":\"attn.core\",\"ts\":", std::to_string(i), "},\n"});
  const std::string gz = gzip_bytes(text);
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), text.size() / 5);
  EXPECT_EQ(gunzip(gz), text);
  EXPECT_EQ(gzip_bytes(text), gz);
  EXPECT_EQ(gunzip(gzip_bytes("")), "");
}

TEST(Gzip, RecognisesGzPaths) {
  EXPECT_TRUE(is_gzip_path("trace.json.gz"));
  EXPECT_FALSE(is_gzip_path("trace.json"));
  EXPECT_FALSE(is_gzip_path(".gz"));
}

}  // namespace
}  // namespace moetwin
