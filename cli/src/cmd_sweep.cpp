// `moetwin sweep SWEEP.toml`: predict every point of a grid (sweep/README.md) on threads, or over MPI
// ranks when started by mpirun, resumable through a journal; writes PREFIX.csv and PREFIX.h5 when every
// point is done. Wiring only: the work is in the sweep library.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "commands.hpp"
#include "delegated_commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/models/calibrated_compute.hpp"
#include "moetwin/sweep/mpi_runner.hpp"
#include "moetwin/sweep/profile_predictor.hpp"
#include "moetwin/sweep/runner.hpp"

namespace moetwin::cli {

namespace {

// Set by the first SIGINT/SIGTERM; the handler is reset after one call (SA_RESETHAND), so a second signal
// ends the process at once (the journal stays valid either way).
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "signal handlers may only touch lock-free atomics");

extern "C" void on_stop_signal(int signo) {
  g_stop.store(true);
  g_signal.store(signo);
  const char message[] = "\nsweep: stopping after the points in flight (signal again to abort)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
  (void)ignored;
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND;  // a second signal takes the default action: ends the process
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

struct Options {
  std::string sweep;
  std::string out;
  int threads = 0;
  std::string profile;
  std::string network;
  bool keep_journal = false;
  std::size_t stop_after = 0;
  std::size_t progress_every = 0;
};

std::string summary(const SweepJournal& journal) {
  std::size_t ok = 0, fit = 0, invalid = 0, failed = 0;
  const std::size_t status = sweep_column("status");
  const std::size_t fits = sweep_column("fits");
  for (const auto& [id, row] : journal.rows()) {
    if (row.cells[status] == "ok") {
      ++ok;
      if (row.cells[fits] == "true") ++fit;
    } else if (row.cells[status] == "invalid") {
      ++invalid;
    } else {
      ++failed;
    }
  }
  return std::to_string(ok) + " ok (" + std::to_string(fit) + " fit in HBM), " + std::to_string(invalid) +
         " invalid, " + std::to_string(failed) + " failed";
}

// Runs the sweep; returns the process exit code (0, or 128 + signal when interrupted by one).
int run(const Options& o, const GlobalOptions& global, SweepMpi* mpi) {
  const bool root = !mpi || mpi->rank() == 0;
  const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
  const Catalog catalog = Catalog::load(catalog_dir);
  const std::string catalog_hash = sweep_catalog_hash(catalog_dir);
  const SweepSpec spec = load_sweep_file(o.sweep, catalog);
  ProfileInfo profile;
  const std::unique_ptr<SweepPredictor> predictor = make_profile_predictor(o.profile, profile, o.network);
  const std::string prefix = o.out.empty() ? std::filesystem::path(o.sweep).stem().string() : o.out;
  const SweepPaths paths = SweepPaths::from_prefix(prefix);

  SweepRunOptions run;
  run.threads =
      o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run.stop_after = o.stop_after;
  run.stop = &g_stop;
  if (root) {
    run.progress.out = &std::cerr;
    run.progress.tty = ::isatty(STDERR_FILENO) != 0;
    run.progress.every = o.progress_every;
  }

  std::optional<SweepJournal> journal;
  if (root) {
    // Predictions read the GPU's calibration profile from the default folder (calibrated_compute.hpp).
    journal.emplace(paths.journal,
                    sweep_journal_identity(spec, profile.hash, catalog_hash,
                                           sweep_calibration_hash(default_calibration_dir())),
                    sweep_columns().size(), spec.point_count());
    if (journal->dropped() > 0) {
      std::cerr << "sweep: dropped " << journal->dropped() << " torn or corrupt journal line(s) of "
                << paths.journal << "\n";
    }
  }
  const SweepRunStats stats = mpi ? run_sweep_mpi(spec, *predictor, journal ? &*journal : nullptr, run, *mpi)
                                  : run_sweep_serial(spec, *predictor, *journal, run);
  if (!root) return 0;
  if (!stats.complete()) {
    std::cerr << "sweep: interrupted: " << stats.done << " of " << stats.points << " points done and kept in "
              << paths.journal << "; run the same command again to resume\n";
    const int signo = g_signal.load();
    return signo ? 128 + signo : 0;
  }
  SweepProvenance provenance;
  provenance.sweep_file = o.sweep;
  provenance.sweep_hash = spec.content_hash;
  provenance.sweep_name = spec.name;
  provenance.base_file = spec.base_path;
  provenance.profile_path = profile.path;
  provenance.profile_hash = profile.hash;
  provenance.seed = spec.base.routing.seed;
  provenance.catalog_dir = catalog_dir;
  provenance.catalog_hash = catalog_hash;
  provenance.points = stats.points;
  write_sweep_outputs(paths, provenance, *journal);
  std::cerr << "sweep: " << stats.points << " points: " << summary(*journal) << "; wrote " << paths.csv
            << " and " << paths.hdf5 << "\n";
  if (!o.keep_journal) journal->remove();
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand("sweep", delegated_command("sweep").description);
  auto o = std::make_shared<Options>();
  cmd->add_option("SWEEP", o->sweep, "Sweep file (.toml, sweep/README.md)")->required();
  cmd->add_option("--out", o->out,
                  "Output prefix: PREFIX.csv, PREFIX.h5 and the journal PREFIX.journal (default: the sweep "
                  "file's stem in the current directory)");
  cmd->add_option("--threads", o->threads, "Worker threads per process (default: all hardware threads)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--profile", o->profile,
                  "Fitted profile file, or none for the unfitted defaults (default: $MOETWIN_PROFILE or "
                  "the shipped calibrate/profiles/fitted/live-fit.toml)");
  add_network_option(cmd, o->network);
  cmd->add_flag("--keep-journal", o->keep_journal, "Keep PREFIX.journal after the outputs are written");
  cmd->add_option("--stop-after", o->stop_after,
                  "Stop as if interrupted after computing N points (testing resumption)");
  cmd->add_option("--progress-every", o->progress_every,
                  "Without a terminal: a progress line every N points (default: every 10%)");
  cmd->callback([o, &global] {
    int code = 0;
    {
      std::unique_ptr<SweepMpi> mpi;
      if (started_by_mpi_launcher() && sweep_mpi_built()) mpi = std::make_unique<SweepMpi>(nullptr, nullptr);
      install_stop_handlers();
      try {
        code = run(*o, global, mpi.get());
      } catch (const std::exception& e) {
        // One rank's error is invisible to the others, which would wait for it forever: end the job.
        if (mpi && mpi->size() > 1) {
          std::cerr << "error: rank " << mpi->rank() << ": " << e.what() << '\n';
          mpi->abort(dynamic_cast<const InputError*>(&e) ? exit_code::input_error
                                                         : exit_code::internal_error);
        }
        throw;
      }
    }
    // An interrupted sweep exits 128 + signal, as a shell expects; CLI11 callbacks have no exit code.
    if (code != 0) std::exit(code);
  });
}

}  // namespace moetwin::cli
