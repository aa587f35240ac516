// The bounded reader (issue 55 item 3): endless and huge inputs end in an InputError naming the file, the
// limit and the variable that raises it; a file within the limits reads whole.
#include "moetwin/common/bounded_read.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

constexpr InputKind kSmall{"test kind", 1024, 10};

std::string temp_file(const std::string& name, const std::string& content) {
  const fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

std::string error_of(const std::string& path, const InputKind& kind) {
  return test_support::error_of([&] { read_input_file(path, kind); });
}

TEST(BoundedRead, FileWithinTheLimitsReadsWhole) {
  const std::string content = "a\nb\nc\n" + std::string(1000, 'x');
  const std::string p = temp_file("bounded-ok", content);
  EXPECT_EQ(read_input_file(p, kSmall), content);
  fs::remove(p);
}

TEST(BoundedRead, TooManyBytesNamesTheLimitAndTheVariable) {
  const std::string p = temp_file("bounded-bytes", std::string(1025, 'x'));
  EXPECT_EQ(
      error_of(p, kSmall),
      p + ": larger than 1024 bytes, the limit for a test kind (set MOETWIN_MAX_INPUT_MIB to raise it)");
  fs::remove(p);
}

TEST(BoundedRead, TooManyLinesNamesTheLineAndTheVariable) {
  const std::string p = temp_file("bounded-lines", std::string(11, '\n'));
  EXPECT_EQ(
      error_of(p, kSmall),
      p + ":11: more than 10 lines, the limit for a test kind (set MOETWIN_MAX_INPUT_LINES to raise it)");
  fs::remove(p);
}

// /dev/zero and /dev/urandom never end: refused at the limit, in well under a second for 16 MiB.
TEST(BoundedRead, EndlessDevicesEndAtTheLimit) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    if (!fs::exists(device)) continue;
    const auto start = std::chrono::steady_clock::now();
    const std::string e = error_of(device, input_kind::toml);
    EXPECT_EQ(e.rfind(std::string(device) + ":", 0), 0u) << e;
    EXPECT_NE(e.find("the limit for a TOML file"), std::string::npos) << e;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

// A 10 GB sparse file is refused from its size, before a byte is read.
TEST(BoundedRead, HugeSparseFileIsRefusedFromItsSize) {
  const fs::path p = fs::temp_directory_path() / ("bounded-sparse-" + std::to_string(::getpid()));
  { std::ofstream(p, std::ios::binary) << ""; }
  std::error_code ec;
  fs::resize_file(p, 10ull * 1000 * 1000 * 1000, ec);
  if (ec) GTEST_SKIP() << "cannot make a sparse file: " << ec.message();
  const auto start = std::chrono::steady_clock::now();
  const std::string e = error_of(p.string(), input_kind::log);
  EXPECT_EQ(
      e, p.string() + ": larger than 128 MiB, the limit for a log (set MOETWIN_MAX_INPUT_MIB to raise it)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  fs::remove(p);
}

TEST(BoundedRead, EnvironmentRaisesAndChecksTheLimits) {
  const std::string p = temp_file("bounded-env", std::string(2000, 'x'));
  ::setenv(kMaxInputMibVariable, "1", 1);
  EXPECT_EQ(read_input_file(p, kSmall).size(), 2000u);
  EXPECT_EQ(effective_limits(kSmall).max_bytes, 1024u * 1024u);
  ::setenv(kMaxInputMibVariable, "lots", 1);
  EXPECT_EQ(error_of(p, kSmall),
            "environment: MOETWIN_MAX_INPUT_MIB: \"lots\": a whole number in [1, 1048576]");
  ::unsetenv(kMaxInputMibVariable);
  ::setenv(kMaxInputLinesVariable, "0", 1);
  EXPECT_NE(error_of(p, kSmall).find("MOETWIN_MAX_INPUT_LINES: \"0\""), std::string::npos);
  ::unsetenv(kMaxInputLinesVariable);
  fs::remove(p);
}

TEST(BoundedRead, MissingFileAndFolderAreNamed) {
  EXPECT_EQ(error_of("/nonexistent/x.toml", kSmall), "/nonexistent/x.toml: no such file");
  EXPECT_EQ(error_of(fs::temp_directory_path().string(), kSmall),
            fs::temp_directory_path().string() + ": is a directory, expected a file");
}

}  // namespace
}  // namespace moetwin
