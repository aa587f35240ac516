// The calibration database: what one node measured (or what an imported tool log reported), kept as
// raw samples plus summary statistics, with the provenance needed to trust or reject it later.
//
// HDF5 layout (schema version kCalibrationDbSchemaVersion, written as root attribute "schema_version"):
//   /                       attrs: format = "moetwin-calibration", schema_version (int)
//   /provenance             attrs: gpu_name, gpu_count, sm_count, sm_clock_hz, mem_clock_hz, driver_version,
//                                  cuda_version, cublas_version, nccl_version, libfabric_version,
//                                  provider, host, time_utc, git_revision, tool
//   /experiments/<name>     attrs: kind, unit, median, mean, p10, p90, min, max, count,
//                                  "param:<key>" (double) for numeric parameters,
//                                  "label:<key>" (string) for string parameters
//                           dataset "samples" (double[count]): the raw samples, in `unit`
// Experiment names are flat (no '/'), e.g. "gemm.m8192.n8192.k8192".
//
// The file: a 512-byte stamp (magic, schema version, length and XXH64 checksum of the rest; the HDF5
// user block, db_file_stamp.hpp) followed by the HDF5 file in the 1.8 format (metadata checksums on).
// The reader checks the stamp before libhdf5 parses anything, so a damaged file is an InputError naming
// it, never a crash or a hang inside libhdf5; it then bounds every count it reads by the file's size.
// Files written before the stamp (before 2026-12-04) are refused until `moetwin-calibrate stamp FILE`
// has read them once, in a child process that a crash or hang cannot take down, and rewritten them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace moetwin {

inline constexpr int kCalibrationDbSchemaVersion = 1;
// Largest database the reader loads (it holds the file in memory twice while parsing): 256 MiB, ~160x
// the largest shipped one (calibrate/data/h200-run5.h5, 1.6 MB stamped, a full `all` run).
inline constexpr std::uint64_t kMaxCalibrationDbBytes = std::uint64_t{256} << 20;

// Where and with what the samples were taken. Unknown strings stay empty, unknown numbers 0.
struct Provenance {
  std::string gpu_name;        // e.g. "NVIDIA H200"
  std::int64_t gpu_count = 0;  // GPUs visible to the run
  std::int64_t sm_count = 0;   // multiprocessors per GPU
  double sm_clock_hz = 0;      // maximum SM clock, Hz
  double mem_clock_hz = 0;     // maximum memory clock, Hz
  std::string driver_version;
  std::string cuda_version;
  std::string cublas_version;
  std::string nccl_version;
  std::string libfabric_version;
  std::string provider;      // libfabric provider of fabric runs ("efa", "tcp", "shm")
  std::string host;          // hostname
  std::string time_utc;      // ISO 8601, e.g. "2026-11-29T08:00:00Z"
  std::string git_revision;  // moetwin revision that took the samples
  std::string tool;          // "moetwin-calibrate gemm", "import nccl-tests", ...

#if __cplusplus >= 202002L  // CUDA sources (C++17) include this header too
  bool operator==(const Provenance&) const = default;
#endif
};

// Order statistics of a sample set. Percentiles interpolate linearly between order statistics
// (the "linear" method of numpy.percentile), so they are exact for the hand-computed test values.
struct SummaryStats {
  std::int64_t count = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double median = 0;
  double p10 = 0;
  double p90 = 0;

#if __cplusplus >= 202002L  // CUDA sources (C++17) include this header too
  bool operator==(const SummaryStats&) const = default;
#endif
};

SummaryStats summarize(const std::vector<double>& samples);
// q in [0, 1]; `sorted` must be sorted ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

struct Experiment {
  std::string name;                           // unique in the db, no '/'
  std::string kind;                           // "gemm", "nccl", "fabric_latency", "nccl_tests", ...
  std::string unit;                           // unit of `samples`, e.g. "s"
  std::map<std::string, double> params;       // numeric parameters (m, n, k, bytes, ranks ...)
  std::map<std::string, std::string> labels;  // string parameters (op, dtype, provider ...)
  std::vector<double> samples;                // raw samples in `unit`

  SummaryStats stats() const { return summarize(samples); }
  double param(const std::string& key) const;  // throws std::out_of_range naming the key
#if __cplusplus >= 202002L                     // CUDA sources (C++17) include this header too
  bool operator==(const Experiment&) const = default;
#endif
};

struct CalibrationDb {
  Provenance provenance;
  std::map<std::string, Experiment> experiments;  // keyed by name: deterministic order

  // Adds or replaces the experiment of the same name. Throws std::invalid_argument on a bad name.
  void put(Experiment experiment);
  // Experiments of one kind, in name order.
  std::vector<const Experiment*> of_kind(const std::string& kind) const;
};

// Whether two experiments of one name measured the same thing: same kind, unit and numeric parameters,
// leaving out what a run chooses rather than what it measures: `algo_index`, the cuBLASLt candidate a
// GEMM run found fastest, flips between runs of the same shape (run 7: three back-to-back runs on one
// lease picked different candidates for some shapes).
bool same_measurement(const Experiment& a, const Experiment& b);
// Adds a repeated run (`repeat`, read from `path`) to `db`: each experiment's samples join those of the
// experiment of the same name in `db`, so its statistics span every run; experiments only `repeat` has
// are added. Throws InputError naming `path` and the experiment when the two did not measure the same
// thing (same_measurement). Provenance stays `db`'s.
void pool_repeated_run(CalibrationDb& db, const CalibrationDb& repeat, const std::string& path);

// Writes atomically (temporary file in the same directory, then rename): a failed or interrupted
// write never leaves a half-written database. Stamps the file. Throws InputError if the path is not
// writable.
void write_calibration_db(const CalibrationDb& db, const std::string& path);
// Throws InputError naming `path` for a missing file, a directory, a file over kMaxCalibrationDbBytes, an
// unstamped file (with the command that stamps it), a stamp that does not match the bytes (damage), and
// whatever libhdf5 or the layout check refuses after that.
CalibrationDb read_calibration_db(const std::string& path);
// The same from a whole file's bytes; `path` names them in errors (the fuzz target's entry).
CalibrationDb read_calibration_db_bytes(std::string_view file, const std::string& path);
// Reads `path` when it exists, else returns an empty db (used to append to a database).
CalibrationDb read_or_create_calibration_db(const std::string& path);

// `moetwin-calibrate stamp`: checks and stamps a database written before the stamp, in place (atomic).
// libhdf5 reads the unstamped file in a child process: a crash or a read that takes longer than
// `timeout_s` seconds ends the child, and the file is refused as damaged (InputError naming it); nothing
// is written then. The child writes the database through write_calibration_db to a file beside `path`,
// which this process reads back (stamp verified) before renaming it over `path`: the data are the same,
// the HDF5 bytes are new. A file already stamped is verified and left as it is; one whose stamp does not
// match is refused, never re-stamped. Returns what happened, one line for the user.
std::string stamp_calibration_db(const std::string& path, double timeout_s);

}  // namespace moetwin

namespace moetwin {
// Provenance fields every tool knows: host, UTC time now, moetwin git revision, `tool`.
Provenance base_provenance(const std::string& tool);
}  // namespace moetwin
