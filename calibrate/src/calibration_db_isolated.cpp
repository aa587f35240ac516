// Every libhdf5 read of a database runs in a child process with a time and memory limit (issue 55 item
// 1): the stamp (XXH64) proves a file undamaged, not harmless, since anyone can recompute it; four crafted
// databases with a correct stamp crashed libhdf5 (H5HG_read, H5A__close) or hung it past 30 s. The child
// parses the image and sends the database back through a pipe in a plain length-prefixed encoding that
// the parent decodes with every length checked; a crash, a hang or the memory limit is an InputError
// naming the file.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "calibration_db_image.hpp"
#include "child_process.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/sanitizers.hpp"

namespace moetwin {

namespace {

// libhdf5 reads the shipped 1.6 MB databases in about 0.65 s; a damaged image that makes it loop is cut
// after 2 s plus 4 s per MiB (8.4 s for the largest shipped), or $MOETWIN_DB_READ_TIMEOUT_S.
constexpr double kBaseTimeoutS = 2;
constexpr double kTimeoutPerMibS = 4;
// Address space the child may add to what the process has mapped: libhdf5 holds the image (the core
// driver's copy) and its metadata cache; 1 GiB plus 16x the image is far above the ~40 MB a shipped
// database takes and far below the machine.
constexpr std::uint64_t kBaseMemoryBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMemoryPerImageByte = 16;

constexpr bool kSanitized = kAddressSanitizer || kMemorySanitizer;

// --- the encoding: u64 counts and lengths, raw doubles (the child and parent are one binary) ---

void put_u64(std::string& out, std::uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_f64(std::string& out, double v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

std::string encode(const CalibrationDb& db) {
  std::string out;
  const Provenance& p = db.provenance;
  for (const std::string* s :
       {&p.gpu_name, &p.driver_version, &p.cuda_version, &p.cublas_version, &p.nccl_version,
        &p.libfabric_version, &p.provider, &p.host, &p.time_utc, &p.git_revision, &p.tool})
    put_str(out, *s);
  put_u64(out, static_cast<std::uint64_t>(p.gpu_count));
  put_u64(out, static_cast<std::uint64_t>(p.sm_count));
  put_f64(out, p.sm_clock_hz);
  put_f64(out, p.mem_clock_hz);
  put_u64(out, db.experiments.size());
  for (const auto& [name, e] : db.experiments) {
    put_str(out, e.name);
    put_str(out, e.kind);
    put_str(out, e.unit);
    put_u64(out, e.params.size());
    for (const auto& [k, v] : e.params) {
      put_str(out, k);
      put_f64(out, v);
    }
    put_u64(out, e.labels.size());
    for (const auto& [k, v] : e.labels) {
      put_str(out, k);
      put_str(out, v);
    }
    put_u64(out, e.samples.size());
    for (const double v : e.samples) put_f64(out, v);
  }
  return out;
}

// Reads the encoding back; every count and length is checked against what is left.
class Decoder {
 public:
  explicit Decoder(std::string_view bytes) : rest_(bytes) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    take(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    take(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = count(1);
    std::string s(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return s;
  }
  // A count of items at least `item_bytes` long each: never more than the bytes left could hold.
  std::uint64_t count(std::uint64_t item_bytes) {
    const std::uint64_t n = u64();
    if (n > rest_.size() / item_bytes) throw std::runtime_error("the child's database encoding is cut");
    return n;
  }
  bool done() const { return rest_.empty(); }

 private:
  void take(void* to, std::size_t n) {
    if (rest_.size() < n) throw std::runtime_error("the child's database encoding is cut");
    std::memcpy(to, rest_.data(), n);
    rest_.remove_prefix(n);
  }
  std::string_view rest_;
};

CalibrationDb decode(std::string_view bytes) {
  Decoder d(bytes);
  CalibrationDb db;
  Provenance& p = db.provenance;
  for (std::string* s : {&p.gpu_name, &p.driver_version, &p.cuda_version, &p.cublas_version, &p.nccl_version,
                         &p.libfabric_version, &p.provider, &p.host, &p.time_utc, &p.git_revision, &p.tool})
    *s = d.str();
  p.gpu_count = static_cast<std::int64_t>(d.u64());
  p.sm_count = static_cast<std::int64_t>(d.u64());
  p.sm_clock_hz = d.f64();
  p.mem_clock_hz = d.f64();
  const std::uint64_t experiments = d.count(8 * 6);
  for (std::uint64_t i = 0; i < experiments; ++i) {
    Experiment e;
    e.name = d.str();
    e.kind = d.str();
    e.unit = d.str();
    for (std::uint64_t n = d.count(16); n > 0; --n) {
      std::string k = d.str();
      e.params[k] = d.f64();
    }
    for (std::uint64_t n = d.count(16); n > 0; --n) {
      std::string k = d.str();
      e.labels[k] = d.str();
    }
    const std::uint64_t samples = d.count(8);
    e.samples.reserve(samples);
    for (std::uint64_t n = 0; n < samples; ++n) e.samples.push_back(d.f64());
    const std::string name = e.name;
    db.experiments.emplace(name, std::move(e));
  }
  if (!d.done()) throw std::runtime_error("the child's database encoding has bytes left over");
  return db;
}

double timeout_for(std::size_t image_bytes) {
  if (const char* env = std::getenv("MOETWIN_DB_READ_TIMEOUT_S"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    errno = 0;
    const double s = std::strtod(env, &end);
    if (*end != '\0' || errno != 0 || !(s > 0) || s > 86400)
      throw InputError({"environment", 0}, "MOETWIN_DB_READ_TIMEOUT_S", env, "seconds in (0, 86400]");
    return s;
  }
  // An instrumented build (ASan at -O0 in CI) runs our side of the read several times slower.
  const double slowdown = kSanitized ? 4 : 1;
  return slowdown * (kBaseTimeoutS + kTimeoutPerMibS * static_cast<double>(image_bytes) / (1024.0 * 1024.0));
}

// The process's address space now (bytes): /proc/self/statm's first field, in pages.
std::uint64_t mapped_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// In the child: parse, send "0" + the encoding, "2" + an InputError's message or "3" + another error's.
[[noreturn]] void read_in_child(std::string_view file, const std::string& path, int fd, double timeout_s) {
  restore_crash_signals();
  // CPU time too: a hang that the parent's kill somehow missed still ends.
  const rlim_t cpu = static_cast<rlim_t>(std::ceil(timeout_s)) + 1;
  rlimit cpu_limit{cpu, cpu + 1};
  ::setrlimit(RLIMIT_CPU, &cpu_limit);
  if (!kSanitized) {  // the sanitizers reserve terabytes of address space for their shadow memory
    // On top of what the process has mapped already (CUDA's reservations after `gpu` runs are tens of GB).
    const rlim_t memory = mapped_bytes() + kBaseMemoryBytes + kMemoryPerImageByte * file.size();
    rlimit as_limit{memory, memory};
    ::setrlimit(RLIMIT_AS, &as_limit);
  }
  std::string reply;
  int code = 0;
  try {
    reply = "0" + encode(parse_calibration_db_image(file, path));
  } catch (const InputError& e) {
    code = 2;
    reply = std::string("2") + e.what();
  } catch (const std::bad_alloc&) {
    code = 2;
    reply = "2" + path + ": libhdf5 ran out of its memory limit reading it (a damaged or crafted file)";
  } catch (const std::exception& e) {
    code = 3;
    reply = std::string("3") + e.what();
  }
  write_to_parent(fd, reply);
  ::_exit(code);  // not exit(): the parent's atexit handlers and buffered output are the parent's
}

}  // namespace

CalibrationDb parse_calibration_db_image_isolated(std::string_view file, const std::string& path) {
  const double timeout_s = timeout_for(file.size());
  // The encoding is smaller than the parsed database, which is bounded by the file's size times the
  // per-sample overhead; 64x the image is far above it.
  const ChildOutcome child = run_in_child([&](int fd) { read_in_child(file, path, fd, timeout_s); },
                                          timeout_s, 64 * file.size() + (1u << 20));
  const std::string damaged = " (a damaged or crafted file; the stamp proves it unchanged, not harmless)";
  if (child.timed_out) {
    throw InputError({path, 0}, "libhdf5 did not finish reading it within " + format_fixed(timeout_s, 1) +
                                    " s (set MOETWIN_DB_READ_TIMEOUT_S for a slower machine)" + damaged);
  }
  if (WIFSIGNALED(child.status)) {
    const int sig = WTERMSIG(child.status);
    throw InputError({path, 0}, "libhdf5 crashed reading it (signal " + std::to_string(sig) + ", " +
                                    ::strsignal(sig) + ")" + damaged);
  }
  const int code = WIFEXITED(child.status) ? WEXITSTATUS(child.status) : -1;
  const char kind = child.message.empty() ? '?' : child.message.front();
  if (code == 2 && kind == '2') {
    // The child's InputError names the file already: thrown again as it was.
    const std::string what = child.message.substr(1);
    const std::string prefix = path + ": ";
    throw InputError({path, 0}, what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
  }
  if (code == 0 && kind == '0') return decode(std::string_view(child.message).substr(1));
  if (code == 3 && kind == '3') throw std::runtime_error(child.message.substr(1));
  throw InputError({path, 0},
                   "reading it failed in the child process (exit " + std::to_string(code) + ")" + damaged);
}

}  // namespace moetwin
