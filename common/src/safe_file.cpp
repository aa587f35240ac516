#include "moetwin/common/safe_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

constexpr const char* kStagedSuffix = ".tmp-moetwin";
constexpr int kHexDigits = 16;  // 64 random bits: not guessable before the file exists

std::string random_hex() {
  // getrandom(2) through random_device: unpredictable, unlike a pid or a clock.
  std::random_device rd;
  const std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(kHexDigits, '0');
  for (int i = 0; i < kHexDigits; ++i) s[static_cast<std::size_t>(i)] = kDigits[(v >> (4 * i)) & 0xf];
  return s;
}

// Writes all of `content` to `fd`; false with errno set on a failure.
bool write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Writes `content` to an open stdio stream and closes it, every error caught: a full disk shows at the
// write, at the flush or only at the close (NFS, quotas). Returns "" or the system's reason.
std::string write_and_close(std::FILE* f, const std::string& content) {
  std::string error;
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size())
    error = std::strerror(errno);
  if (std::fflush(f) != 0 && error.empty()) error = std::strerror(errno);
  if (std::ferror(f) && error.empty()) error = "write error";
  if (std::fclose(f) != 0 && error.empty()) error = std::strerror(errno);
  return error;
}

}  // namespace

StagedFile::StagedFile(const std::string& target) : target_(target) {
  // In the target's folder: the rename stays on one file system, so it is atomic.
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = concat({target, ".", random_hex(), kStagedSuffix});
    // O_EXCL: fails on anything already there, a link included (dangling or not); O_NOFOLLOW says so
    // explicitly. 0666 less the umask: the permissions an ordinary new file gets.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) return;
    if (errno != EEXIST) break;
  }
  throw InputError({target, 0},
                   concat({"cannot create a temporary file beside it (", std::strerror(errno), ")"}));
}

StagedFile::~StagedFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(path_.c_str());
}

void StagedFile::write(const std::string& content) {
  if (!write_all(fd_, content))
    throw InputError({target_, 0}, concat({"write error: ", std::strerror(errno), " (nothing written)"}));
}

void StagedFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0)
    throw InputError({target_, 0}, concat({"write error: ", std::strerror(errno), " (nothing written)"}));
  // rename(2) replaces whatever is at the target, a link included, without following it.
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    throw InputError({target_, 0},
                     concat({"cannot rename temporary file into place (", std::strerror(errno), ")"}));
  }
  committed_ = true;
}

bool is_staged_name_for(const std::string& name, const std::string& target_name) {
  const std::string suffix = kStagedSuffix;
  const std::size_t want = target_name.size() + 1 + kHexDigits + suffix.size();
  if (name.size() != want || name.compare(0, target_name.size(), target_name) != 0) return false;
  if (name[target_name.size()] != '.' || name.compare(want - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  for (std::size_t i = target_name.size() + 1; i < want - suffix.size(); ++i)
    if (std::strchr("0123456789abcdef", name[i]) == nullptr || name[i] == '\0') return false;
  return true;
}

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw InputError({path, 0}, "is a directory, expected a file to write");
  const fs::path parent = target.parent_path();
  if (parent.empty()) return;  // the current directory
  const fs::file_status st = fs::status(parent, ec);
  if (st.type() == fs::file_type::not_found) {
    throw InputError({path, 0},
                     concat({"output folder ", parent.string(), " does not exist (create it first)"}));
  }
  if (st.type() != fs::file_type::directory) {
    throw InputError({path, 0}, concat({"output folder ", parent.string(), " is not a folder"}));
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  check_output_path(path);
  std::error_code ec;
  // A device, pipe or socket (/dev/stdout, /dev/full, a FIFO) cannot be replaced by a rename (renaming
  // over /dev/full would turn the device into a file): written in place, and its errors reported.
  // /dev/stdout of a command redirected into a file is a link to a regular file: written in place too.
  const fs::file_status st = fs::status(path, ec);
  const bool device_path = path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0;
  if (!ec && fs::exists(st) && (!fs::is_regular_file(st) || device_path)) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr)
      throw InputError({path, 0}, concat({"cannot open for writing: ", std::strerror(errno)}));
    const std::string error = write_and_close(f, content);
    if (!error.empty()) throw InputError({path, 0}, concat({"write error: ", error, " (output lost)"}));
    return;
  }
  // The temporary file never outlives a failure: a full disk leaves neither it nor a truncated output.
  StagedFile staged(path);
  staged.write(content);
  staged.commit();
}

std::string close_standard_output() {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  const int err = errno;
  // Closing stdout reports what only the close sees (NFS, quotas); nothing is written after this.
  if (std::fclose(stdout) != 0 && !failed) return concat({"write error: ", std::strerror(errno)});
  if (failed) return concat({"write error: ", err != 0 ? std::strerror(err) : "stream error"});
  return {};
}

int check_standard_output() {
  // Output that did not reach its file is a failure, not a success with the output lost.
  const std::string error = close_standard_output();
  if (error.empty()) return exit_code::ok;
  std::cerr << "error: standard output: " << error << " (output lost)\n";
  return exit_code::input_error;
}

}  // namespace moetwin
