#include "moetwin/common/bounded_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

// A positive whole number from the environment variable `name`, or `fallback` when it is unset or empty.
std::uint64_t limit_from_environment(const char* name, std::uint64_t fallback, std::uint64_t max) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  const std::string_view s(text);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v == 0 || v > max)
    throw InputError({"environment", 0}, name, concat({"\"", s, "\""}),
                     concat({"a whole number in [1, ", std::to_string(max), "]"}));
  return v;
}

std::string mib_text(std::uint64_t bytes) {
  return bytes % input_kind::kMiB == 0 ? std::to_string(bytes / input_kind::kMiB) + " MiB"
                                       : std::to_string(bytes) + " bytes";
}

[[noreturn]] void too_large(const std::string& path, const InputKind& kind) {
  throw InputError({path, 0}, concat({"larger than ", mib_text(kind.max_bytes), ", the limit for a ",
                                      kind.name, " (set ", kMaxInputMibVariable, " to raise it)"}));
}

// Closes a descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

InputKind effective_limits(const InputKind& kind) {
  InputKind k = kind;
  // 1 TiB and 2^40 lines: past that the limit is no limit.
  const std::uint64_t mib = limit_from_environment(kMaxInputMibVariable, 0, 1u << 20);
  if (mib != 0) k.max_bytes = mib * input_kind::kMiB;
  k.max_lines = limit_from_environment(kMaxInputLinesVariable, k.max_lines, std::uint64_t{1} << 40);
  return k;
}

std::string read_input_file(const std::string& path, const InputKind& kind_in) {
  const InputKind kind = effective_limits(kind_in);
  // O_NONBLOCK is not used: a FIFO's writer is awaited like a shell's `cat` would.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT) throw InputError({path, 0}, "no such file");
    throw InputError({path, 0}, concat({"cannot open file for reading (", std::strerror(errno), ")"}));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    throw InputError({path, 0}, concat({"read error (", std::strerror(errno), ")"}));
  if (S_ISDIR(st.st_mode)) throw InputError({path, 0}, "is a directory, expected a file");
  // A regular file's size is known: a 10 GB (sparse) file is refused before a byte is read.
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kind.max_bytes) too_large(path, kind);
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  std::uint64_t lines = 0;
  char buffer[64 * 1024];
  while (true) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError({path, 0}, concat({"read error (", std::strerror(errno), ")"}));
    if (n == 0) break;
    const auto got = static_cast<std::size_t>(n);
    if (text.size() + got > kind.max_bytes) too_large(path, kind);
    lines += static_cast<std::uint64_t>(std::count(buffer, buffer + got, '\n'));
    if (lines > kind.max_lines) {
      throw InputError({path, static_cast<int>(std::min<std::uint64_t>(kind.max_lines + 1, INT32_MAX))},
                       concat({"more than ", std::to_string(kind.max_lines), " lines, the limit for a ",
                               kind.name, " (set ", kMaxInputLinesVariable, " to raise it)"}));
    }
    text.append(buffer, got);
  }
  return text;
}

}  // namespace moetwin
