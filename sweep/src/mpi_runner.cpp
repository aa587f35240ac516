#include "moetwin/sweep/mpi_runner.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

// Message tags. Rank r -> 0: kResult (one journal line), then kDone once it has no more points.
// 0 -> r: kStop (take no new point), then kFinish after every rank reported kDone. Messages between one
// pair of ranks arrive in the order they were sent (MPI's non-overtaking rule), so kStop never arrives
// after kFinish.
constexpr int kResult = 1;
constexpr int kDone = 2;
constexpr int kStop = 3;
constexpr int kFinish = 4;

std::string receive_text(int source, int tag, MPI_Status& status) {
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return text;
}

void send_text(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

void send_empty(int dest, int tag) {
  MPI_Send(nullptr, 0, MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

void receive_empty(int source, int tag) {
  MPI_Recv(nullptr, 0, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// Rank 0 sends its content hash; a rank that read a different sweep file (another version on another
// machine) must not mix its rows in.
void check_same_sweep(const SweepSpec& spec, const SweepMpi& mpi) {
  std::string hash = spec.content_hash;
  hash.resize(16, ' ');
  std::string root = hash;
  MPI_Bcast(root.data(), 16, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (root != hash) {
    throw InputError({spec.path, 0}, "rank " + std::to_string(mpi.rank()) + " read a sweep with hash " +
                                         spec.content_hash + ", rank 0 one with hash " + root +
                                         ": every rank must read the same sweep file");
  }
}

}  // namespace

bool sweep_mpi_built() {
  return true;
}

bool started_by_mpi_launcher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

SweepMpi::SweepMpi(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("the MPI library does not support MPI_THREAD_FUNNELED");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

SweepMpi::~SweepMpi() {
  MPI_Finalize();
}

void SweepMpi::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

SweepRunStats run_sweep_mpi(const SweepSpec& spec, const SweepPredictor& predictor, SweepJournal* journal,
                            const SweepRunOptions& options, const SweepMpi& mpi) {
  const bool root = mpi.rank() == 0;
  if (root != (journal != nullptr)) throw std::logic_error("sweep: the journal belongs to rank 0 alone");
  check_same_sweep(spec, mpi);
  SweepRunStats stats;
  stats.points = spec.point_count();

  // Rank 0 lists the points the journal lacks; everyone receives the list.
  std::vector<std::uint64_t> todo;
  if (root) {
    stats.recovered = journal->rows().size();
    for (std::size_t id = 0; id < stats.points; ++id) {
      if (!journal->has(id)) todo.push_back(id);
    }
    if (options.stop_after > 0 && todo.size() > options.stop_after) todo.resize(options.stop_after);
  }
  std::uint64_t count = todo.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  todo.resize(count);
  MPI_Bcast(todo.data(), static_cast<int>(count), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(mpi.rank()); i < todo.size();
       i += static_cast<std::size_t>(mpi.size())) {
    mine.push_back(static_cast<std::size_t>(todo[i]));
  }

  const auto evaluate = [&](std::size_t id) { return evaluate_point(spec, id, predictor); };
  std::atomic<bool> stop{false};
  const std::size_t columns = sweep_columns().size();

  if (!root) {
    const auto poll = [&] {
      if (options.stop && options.stop->load()) stop.store(true);
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, kStop, MPI_COMM_WORLD, &flag, &status);
      if (flag) {
        receive_empty(0, kStop);
        stop.store(true);
      }
    };
    run_points(
        mine, options.threads, evaluate,
        [&](PointRow&& row) {
          send_text(SweepJournal::encode(row), 0, kResult);
          ++stats.computed;
        },
        poll, stop);
    send_empty(0, kDone);
    while (true) {  // drain a late kStop, then wait for kFinish
      MPI_Status status;
      MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG == kFinish) {
        receive_empty(0, kFinish);
        break;
      }
      receive_empty(0, status.MPI_TAG);
    }
    return stats;
  }

  if (options.progress.out) {
    *options.progress.out << "sweep: " << mpi.size() << " MPI ranks x " << options.threads << " threads\n";
  }
  SweepProgress progress(options.progress, stats.points, stats.recovered, todo.size());
  std::vector<std::size_t> per_rank(static_cast<std::size_t>(mpi.size()), 0);
  int ranks_done = 0;
  bool stop_sent = false;
  const auto record = [&](PointRow&& row) {
    journal->append(std::move(row));
    ++stats.computed;
    progress.advance();
  };
  const auto poll = [&] {
    int flag = 1;
    while (flag) {
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) break;
      if (status.MPI_TAG == kResult) {
        const std::string line = receive_text(status.MPI_SOURCE, kResult, status);
        PointRow row;
        if (!SweepJournal::decode(line, columns, row)) {
          throw std::runtime_error("sweep: rank " + std::to_string(status.MPI_SOURCE) +
                                   " sent a corrupt row");
        }
        record(std::move(row));
        ++per_rank[static_cast<std::size_t>(status.MPI_SOURCE)];
      } else if (status.MPI_TAG == kDone) {
        receive_empty(status.MPI_SOURCE, kDone);
        ++ranks_done;
      } else {
        throw std::runtime_error("sweep: unexpected MPI message tag " + std::to_string(status.MPI_TAG));
      }
    }
    if (options.stop && options.stop->load()) stop.store(true);
    if (stop.load() && !stop_sent) {
      for (int r = 1; r < mpi.size(); ++r) send_empty(r, kStop);
      stop_sent = true;
    }
  };
  poll();
  run_points(
      mine, options.threads, evaluate,
      [&](PointRow&& row) {
        record(std::move(row));
        ++per_rank[0];
        poll();
      },
      poll, stop);
  while (ranks_done < mpi.size() - 1) {
    poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int r = 1; r < mpi.size(); ++r) send_empty(r, kFinish);
  progress.finish();
  if (options.progress.out) {
    *options.progress.out << "sweep: points computed per rank:";
    for (std::size_t r = 0; r < per_rank.size(); ++r)
      *options.progress.out << " r" << r << "=" << per_rank[r];
    *options.progress.out << "\n";
  }
  stats.done = journal->rows().size();
  return stats;
}

}  // namespace moetwin
