// `moetwin-calibrate stamp`: checks a database written before the stamp by reading it in a child process
// (libhdf5 can crash or loop forever on a damaged file: issue 44), then stamps it (calibration_db.hpp).
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "calibration_db_image.hpp"
#include "child_process.hpp"
#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/db_file_stamp.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/safe_file.hpp"

namespace moetwin {

namespace {

// The child's error message travels through a pipe; more than this is cut (an InputError is one line).
constexpr std::size_t kMaxChildMessageBytes = 64 * 1024;
constexpr std::string_view kHdf5Signature{"\x89HDF\r\n\x1a\n", 8};

bool same_number(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Whether two databases hold the same data, NaN equal to NaN (a sample can be NaN).
bool same_data(const CalibrationDb& a, const CalibrationDb& b) {
  Provenance pa = a.provenance, pb = b.provenance;
  if (!same_number(pa.sm_clock_hz, pb.sm_clock_hz) || !same_number(pa.mem_clock_hz, pb.mem_clock_hz))
    return false;
  pa.sm_clock_hz = pb.sm_clock_hz = pa.mem_clock_hz = pb.mem_clock_hz = 0;
  if (!(pa == pb) || a.experiments.size() != b.experiments.size()) return false;
  for (auto i = a.experiments.begin(), j = b.experiments.begin(); i != a.experiments.end(); ++i, ++j) {
    const Experiment& x = i->second;
    const Experiment& y = j->second;
    if (i->first != j->first || x.name != y.name || x.kind != y.kind || x.unit != y.unit ||
        x.labels != y.labels || x.params.size() != y.params.size() || x.samples.size() != y.samples.size())
      return false;
    for (auto p = x.params.begin(), q = y.params.begin(); p != x.params.end(); ++p, ++q)
      if (p->first != q->first || !same_number(p->second, q->second)) return false;
    for (std::size_t k = 0; k < x.samples.size(); ++k)
      if (!same_number(x.samples[k], y.samples[k])) return false;
  }
  return true;
}

// In the child: parse `file`, write it, stamped, to `staged` and read that back: the same data, or the
// child fails. Never returns.
[[noreturn]] void stamp_in_child(std::string_view file, const std::string& path, const std::string& staged,
                                 int fd) {
  // A crash is a plain signal that the parent reports: libfabric's PSM providers (libpsm2,
  // libinfinipath, loaded with moetwin-calibrate) install a SIGSEGV handler that prints a backtrace and
  // exits 1, and sanitizers install theirs.
  restore_crash_signals();
  int code = 0;
  std::string message;
  try {
    const CalibrationDb db = parse_calibration_db_image(file, path);
    write_calibration_db(db, staged);
    if (!same_data(db, read_calibration_db(staged))) {
      code = 3;
      message = "internal error: the stamped copy " + staged + " reads back different data";
    }
  } catch (const InputError& e) {
    code = 2;
    message = e.what();
  } catch (const std::exception& e) {
    code = 3;
    message = std::string("internal error: ") + e.what();
  }
  write_to_parent(fd, message);
  ::_exit(code);  // not exit(): the parent's atexit handlers and buffered output are the parent's
}

}  // namespace

std::string stamp_calibration_db(const std::string& path, double timeout_s) {
  namespace fs = std::filesystem;
  if (!(timeout_s > 0 && timeout_s <= 86400))
    throw InputError({"--timeout", 0}, "--timeout", std::to_string(timeout_s), "seconds in (0, 86400]");
  const std::string bytes = read_database_bytes(path);
  if (has_db_stamp(bytes)) {
    const CalibrationDb db = read_calibration_db_bytes(bytes, path);  // refuses a stamp that does not match
    return path + ": already stamped, checksum verified (" + std::to_string(db.experiments.size()) +
           " experiments); left as it is";
  }
  if (bytes.compare(0, kHdf5Signature.size(), kHdf5Signature) != 0)
    read_calibration_db_bytes(bytes, path);  // throws: neither stamped nor HDF5
  const std::string staged = path + ".stamp-" + std::to_string(::getpid());
  const ChildOutcome child = run_in_child([&](int fd) { stamp_in_child(bytes, path, staged, fd); }, timeout_s,
                                          kMaxChildMessageBytes);
  const auto remove_staged = [&] {
    std::error_code ec;
    fs::remove(staged, ec);
    // The child's writer's temporary file (common/safe_file.hpp), left behind when it was killed.
    const fs::path folder =
        fs::path(staged).parent_path().empty() ? fs::path(".") : fs::path(staged).parent_path();
    const std::string name = fs::path(staged).filename().string();
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (is_staged_name_for(entry.path().filename().string(), name)) fs::remove(entry.path(), ec);
  };
  const std::string nothing_written = ": the file is damaged; it was left as it is";
  if (child.timed_out) {
    remove_staged();
    throw InputError({path, 0}, "libhdf5 did not finish reading it within " + seconds_text(timeout_s) +
                                    " s (the shipped 1.6 MB databases take about a second)" +
                                    nothing_written);
  }
  if (WIFSIGNALED(child.status)) {
    remove_staged();
    const int sig = WTERMSIG(child.status);
    throw InputError({path, 0}, "libhdf5 crashed reading it (signal " + std::to_string(sig) + ", " +
                                    ::strsignal(sig) + ")" + nothing_written);
  }
  const int code = WIFEXITED(child.status) ? WEXITSTATUS(child.status) : -1;
  if (code != 0) {
    remove_staged();
    if (code == 2) {
      // The child's InputError already names the file.
      const std::string prefix = path + ": ";
      const std::string what =
          child.message.rfind(prefix, 0) == 0 ? child.message.substr(prefix.size()) : child.message;
      throw InputError({path, 0}, what + "; it was left as it is");
    }
    throw InputError({path, 0}, "reading it failed in the child process (exit " + std::to_string(code) +
                                    (child.message.empty() ? "" : ": " + child.message) + ")" +
                                    nothing_written);
  }
  CalibrationDb db;
  try {
    db = read_calibration_db(staged);  // what the child wrote, stamp verified
  } catch (...) {
    remove_staged();
    throw;
  }
  std::error_code ec;
  fs::rename(staged, path, ec);
  if (ec) {
    remove_staged();
    throw InputError({path, 0}, "cannot rename the stamped file into place: " + ec.message());
  }
  return path + ": stamped (" + std::to_string(db.experiments.size()) +
         " experiments; the data are those it held, the HDF5 bytes are rewritten)";
}

}  // namespace moetwin
