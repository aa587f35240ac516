// A sweep over MPI ranks (Open MPI: `mpirun -n K moetwin sweep ...`). Rank 0 owns the journal and the
// outputs; it sends every rank the list of points still to do, each rank takes every K-th of them (static
// round-robin) and evaluates them on its own threads, and sends each finished row to rank 0, which
// journals it. Only the main thread of a rank calls MPI (MPI_THREAD_FUNNELED). The files rank 0 writes
// are the serial run's, byte for byte: rows are rendered in point order whoever computed them.
// Without MPI at build time (find_package(MPI) failed), SweepMpi throws and sweep_mpi_built() is false.
#pragma once

#include "moetwin/sweep/runner.hpp"

namespace moetwin {

// True when this binary was built with MPI.
bool sweep_mpi_built();
// True when this process was started by an MPI launcher (Open MPI's OMPI_COMM_WORLD_SIZE or PMIx's
// PMIX_RANK in the environment). A plain run never initialises MPI.
bool started_by_mpi_launcher();

class SweepMpi {
 public:
  SweepMpi(int* argc, char*** argv);  // MPI_Init_thread(FUNNELED); std::runtime_error without MPI
  ~SweepMpi();                        // MPI_Finalize
  SweepMpi(const SweepMpi&) = delete;
  SweepMpi& operator=(const SweepMpi&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends every rank of the job (MPI_Abort): for an error on one rank that the others cannot see.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Called by every rank. `journal` is rank 0's (nullptr on the others). Rank 0 returns the whole job's
// counts; another rank returns its own (points it computed), with done = 0.
SweepRunStats run_sweep_mpi(const SweepSpec& spec, const SweepPredictor& predictor, SweepJournal* journal,
                            const SweepRunOptions& options, const SweepMpi& mpi);

}  // namespace moetwin
