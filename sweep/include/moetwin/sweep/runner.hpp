// Running a sweep: the points the journal does not hold yet are evaluated on a pool of threads (and, with
// MPI, over ranks: mpi_runner.hpp); every finished row goes to the journal first. When all points are
// done the outputs are written from the journal's rows in point order, so the files do not depend on the
// thread count, the rank count, or how often the sweep was interrupted.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "moetwin/common/progress.hpp"
#include "moetwin/sweep/journal.hpp"
#include "moetwin/sweep/point_result.hpp"
#include "moetwin/sweep/sweep_output.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {

struct SweepRunOptions {
  int threads = 1;  // worker threads (>= 1)
  // Compute only the first N of the points still to do, then stop as if interrupted (0 = no limit): a
  // hook for testing resumption.
  std::size_t stop_after = 0;
  // Set from outside (a SIGINT/SIGTERM handler) to stop cleanly: no new point starts, in-flight points
  // finish and are journaled. May be null.
  const std::atomic<bool>* stop = nullptr;
  ProgressOptions progress;
};

struct SweepRunStats {
  std::size_t points = 0;     // in the sweep
  std::size_t recovered = 0;  // read back from the journal
  std::size_t computed = 0;   // evaluated by this run (all ranks)
  std::size_t done = 0;       // finished now (recovered + computed)
  bool complete() const { return done == points; }
};

// Evaluates `ids` on `threads` worker threads. The calling thread hands each finished row to `deliver`
// (in completion order) and calls `idle` at least every 20 ms while it waits; workers take no new id once
// `stop` is true. Rethrows, after joining, the first exception a worker raised. Sets the process's
// allocator to keep freed replay memory for the next point (common/replay_allocator.hpp): without it
// page faults were a third of a sweep's CPU time.
void run_points(const std::vector<std::size_t>& ids, int threads,
                const std::function<PointRow(std::size_t)>& evaluate,
                const std::function<void(PointRow&&)>& deliver, const std::function<void()>& idle,
                std::atomic<bool>& stop);

// One process: evaluates the points missing from `journal`, appending each. Returns the counts; the
// sweep is complete when every point is in the journal.
SweepRunStats run_sweep_serial(const SweepSpec& spec, const SweepPredictor& predictor, SweepJournal& journal,
                               const SweepRunOptions& options);

// The journal's identity line for a sweep evaluated with a profile, a catalog and the calibration
// profiles (see journal.hpp): a changed sweep, base, profile, catalog or calibration profile makes the
// journal refuse to resume. `calibration_hash` empty: not part of the identity.
std::string sweep_journal_identity(const SweepSpec& spec, const std::string& profile_hash,
                                   const std::string& catalog_hash, const std::string& calibration_hash = "");

// FNV-1a 64 (16 hex digits) of the calibration profiles a prediction may read (calibrated_compute.hpp):
// every *.toml directly in `dir`, by name in byte order, each as its name, a NUL and its bytes.
// "none" when `dir` is empty or not a folder (the lookup is off or finds nothing).
std::string sweep_calibration_hash(const std::string& dir);

// FNV-1a 64 (16 hex digits) of the catalog's files gpus.toml, instances.toml, models.toml and
// dispatchers.toml in `catalog_dir`, in that order (what Catalog::load reads).
std::string sweep_catalog_hash(const std::string& catalog_dir);

// Output paths derived from --out PREFIX.
struct SweepPaths {
  std::string csv, hdf5, journal;
  static SweepPaths from_prefix(const std::string& prefix);  // PREFIX.csv, PREFIX.h5, PREFIX.journal
};

// Writes PREFIX.csv and PREFIX.h5 atomically from the journal's rows (all points must be there).
void write_sweep_outputs(const SweepPaths& paths, const SweepProvenance& provenance,
                         const SweepJournal& journal);

}  // namespace moetwin
