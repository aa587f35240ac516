// Built when CMake found no MPI: the sweep runs on threads only.
#include <stdexcept>

#include "moetwin/sweep/mpi_runner.hpp"

namespace moetwin {

bool sweep_mpi_built() {
  return false;
}
bool started_by_mpi_launcher() {
  return false;
}

SweepMpi::SweepMpi(int*, char***) {
  throw std::runtime_error("moetwin was built without MPI");
}
SweepMpi::~SweepMpi() = default;
void SweepMpi::abort(int) const {
  throw std::logic_error("moetwin was built without MPI");
}

SweepRunStats run_sweep_mpi(const SweepSpec&, const SweepPredictor&, SweepJournal*, const SweepRunOptions&,
                            const SweepMpi&) {
  throw std::logic_error("moetwin was built without MPI");
}

}  // namespace moetwin
