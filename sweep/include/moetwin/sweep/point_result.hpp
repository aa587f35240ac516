// One evaluated sweep point as a row of the result table: the full scenario, the status, the prediction,
// the memory verdict and the uncertainty band. Cells are kept as exact text (integers in decimal, reals
// in shortest round-trip form, booleans "true"/"false", "" for no value), so a row read back from the
// journal is the very row that was computed, and every output rendered from rows is byte-identical
// whether a sweep ran at once, in threads, over MPI ranks or resumed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/novelty.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {

enum class ColumnType { integer, real, text, boolean };

struct SweepColumn {
  std::string name;
  ColumnType type = ColumnType::text;
  int digits = 0;       // reals: digits after the point in the CSV (the HDF5 file keeps the full double)
  std::string unit;     // "s", "GiB", "tokens/s", "TFLOP/s", "" for counts and text
  std::string meaning;  // one line (README and HDF5 attribute)
};

// The columns of every sweep output, in order. The first is "point" (the id), the second "status":
//   ok       predicted (the memory verdict is in "fits": a point that does not fit is still predicted)
//   invalid  breaks a scenario rule or the replay cannot represent it; "error" says which
//   failed   the prediction hit an internal error (a bug); "error" holds its message
const std::vector<SweepColumn>& sweep_columns();
std::size_t sweep_column(const std::string& name);  // index; std::logic_error when unknown

struct PointRow {
  std::size_t id = 0;
  std::vector<std::string> cells;  // sweep_columns() order
};

// How points are predicted: which profile, and from it the predict options and the uncertainty band.
// The one seam between the sweep and the profile machinery (sim/fitted_profile.hpp).
class SweepPredictor {
 public:
  virtual ~SweepPredictor() = default;
  virtual PredictOptions options_for(const Scenario& scenario) const = 0;
  // Band [lo_s, hi_s] around the predicted iteration time of `scenario`, predicted with `used`
  // (options_for's, as the prediction ran); false when the profile gives none. For a dispatcher the
  // profile has no runs of, it spans the scenario's predictions with each measured relative's A2A terms,
  // and for a stack without rows the answer on the stack it inherits from (a2a_term_spread,
  // sim/fitted_profile.hpp), which it may replay with `used`.
  virtual bool band(const Scenario& scenario, const PredictOptions& used, double predicted_s, double& lo_s,
                    double& hi_s) const = 0;
  // Whose A2A terms the prediction of `scenario` used (a2a_terms_label, sim/fitted_profile.hpp): "fitted"
  // (its dispatcher's own, learned on its live runs), "generic" (a dispatcher without runs: the median of
  // its measured relatives') or "defaults" (an unfitted profile).
  virtual std::string a2a_terms(const Scenario& scenario) const = 0;
  // Where `scenario` lies outside the profile's live runs (novelty_of, sim/fitted_profile.hpp); covered
  // by default (a predictor without a fitted profile has nothing to compare with).
  virtual Novelty novelty(const Scenario& /*scenario*/) const { return {}; }
};

// Builds, validates, predicts and renders point `id`. Never throws for a bad point: it becomes an
// invalid (or failed) row. Safe to call from several threads at once.
PointRow evaluate_point(const SweepSpec& spec, std::size_t id, const SweepPredictor& predictor);

}  // namespace moetwin
