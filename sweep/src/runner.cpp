#include "moetwin/sweep/runner.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/replay_allocator.hpp"

namespace moetwin {

void run_points(const std::vector<std::size_t>& ids, int threads,
                const std::function<PointRow(std::size_t)>& evaluate,
                const std::function<void(PointRow&&)>& deliver, const std::function<void()>& idle,
                std::atomic<bool>& stop) {
  keep_freed_memory_for_reuse();
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<PointRow> finished;
  std::size_t next = 0;      // next index into ids (under mutex)
  int running = 0;           // workers not yet exited (under mutex)
  std::exception_ptr error;  // first worker exception (under mutex)

  const auto worker = [&] {
    while (true) {
      std::size_t id = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stop.load() || error || next >= ids.size()) break;
        id = ids[next++];
      }
      try {
        PointRow row = evaluate(id);
        std::lock_guard<std::mutex> lock(mutex);
        finished.push_back(std::move(row));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
      ready.notify_one();
    }
    std::lock_guard<std::mutex> lock(mutex);
    --running;
    ready.notify_one();
  };

  const int n = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::size_t>(ids.size(), 1))));
  running = n;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) pool.emplace_back(worker);

  std::exception_ptr delivery_error;
  while (true) {
    std::deque<PointRow> batch;
    bool all_exited = false;
    {
      std::unique_lock<std::mutex> lock(mutex);
      ready.wait_for(lock, std::chrono::milliseconds(20), [&] { return !finished.empty() || running == 0; });
      batch.swap(finished);
      all_exited = running == 0;
    }
    // Deliver outside the lock: journaling fsyncs, and workers must not wait for the disk.
    try {
      for (PointRow& row : batch) deliver(std::move(row));
      idle();
    } catch (...) {
      if (!delivery_error) delivery_error = std::current_exception();
      stop.store(true);
    }
    if (all_exited) {
      std::lock_guard<std::mutex> lock(mutex);
      if (finished.empty()) break;
    }
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (delivery_error) std::rethrow_exception(delivery_error);
}

SweepRunStats run_sweep_serial(const SweepSpec& spec, const SweepPredictor& predictor, SweepJournal& journal,
                               const SweepRunOptions& options) {
  SweepRunStats stats;
  stats.points = spec.point_count();
  stats.recovered = journal.rows().size();
  std::vector<std::size_t> todo;
  for (std::size_t id = 0; id < stats.points; ++id) {
    if (!journal.has(id)) todo.push_back(id);
  }
  if (options.stop_after > 0 && todo.size() > options.stop_after) todo.resize(options.stop_after);
  SweepProgress progress(options.progress, stats.points, stats.recovered, todo.size());
  std::atomic<bool> stop{false};
  const auto poll_stop = [&] {
    if (options.stop && options.stop->load()) stop.store(true);
  };
  poll_stop();
  run_points(
      todo, options.threads, [&](std::size_t id) { return evaluate_point(spec, id, predictor); },
      [&](PointRow&& row) {
        journal.append(std::move(row));
        ++stats.computed;
        progress.advance();
        poll_stop();
      },
      poll_stop, stop);
  progress.finish();
  stats.done = journal.rows().size();
  return stats;
}

std::string sweep_journal_identity(const SweepSpec& spec, const std::string& profile_hash,
                                   const std::string& catalog_hash, const std::string& calibration_hash) {
  return "sweep=" + spec.content_hash + " points=" + std::to_string(spec.point_count()) +
         " columns=" + std::to_string(sweep_columns().size()) +
         " profile=" + (profile_hash.empty() ? std::string("defaults") : profile_hash) +
         " catalog=" + catalog_hash + (calibration_hash.empty() ? "" : " calibration=" + calibration_hash);
}

std::string sweep_calibration_hash(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return "none";
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".toml")
      names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  std::uint64_t h = fnv1a64("");
  for (const std::string& name : names) {
    h = fnv1a64(name + std::string(1, '\0'), h);
    h = fnv1a64(read_text_file((std::filesystem::path(dir) / name).string()), h);
  }
  return hex64(h);
}

std::string sweep_catalog_hash(const std::string& catalog_dir) {
  std::uint64_t h = fnv1a64("");
  for (const char* file : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml"}) {
    h = fnv1a64(read_text_file((std::filesystem::path(catalog_dir) / file).string()), h);
  }
  return hex64(h);
}

SweepPaths SweepPaths::from_prefix(const std::string& prefix) {
  return SweepPaths{prefix + ".csv", prefix + ".h5", prefix + ".journal"};
}

void write_sweep_outputs(const SweepPaths& paths, const SweepProvenance& provenance,
                         const SweepJournal& journal) {
  if (journal.rows().size() != provenance.points) {
    throw std::logic_error("sweep outputs written before every point is done");
  }
  write_sweep_hdf5(paths.hdf5, provenance, journal.rows());
  write_file_atomically(paths.csv, render_sweep_csv(journal.rows()));
}

}  // namespace moetwin
