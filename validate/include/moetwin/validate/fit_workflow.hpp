// The fit workflow of `moetwin validate --fit`: which parameters, in which stages, the fitted profile's
// provenance and residuals, and the cross-validation that gives every prediction its band.
//
// Default parameters in two stages: the set the rows can pin down (default_parameters.hpp) is chosen first
// with the compute and collective time scales judged at no time shares (at the starting profile, the
// unfitted defaults with host and A2A times far below the runs', the shares say little about the fitted
// world), fitted, and chosen again at the shares of the fitted rows; when that set is wider, the fit runs
// again from the first one's optimum (its objective's start stays the first one's).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/validate/accuracy.hpp"
#include "moetwin/validate/novelty_bands.hpp"
#include "moetwin/validate/row_predictions.hpp"

namespace moetwin {

struct FitWorkflowOptions {
  std::vector<std::string> parameters;  // keys to fit; empty: the default set, in two stages
  int outer_iterations = 4;             // linearise-minimise-replay rounds (FitOptions)
  int cv_refine = 0;                    // replay rounds per fold from its first estimate
  double huber = 0.1;                   // the objective's Huber knee in |log ratio|; 0: squared
  // "none" or "leave-one-campaign-out": every row's out-of-sample prediction from the fit without its
  // campaign, and from them the profile's cross-validated residuals, novelty bands and margin errors.
  std::string cv = "none";
  // Provenance written into the profile.
  std::string fitted_at;  // UTC date, e.g. today_utc()
  std::string fitted_on;  // the rows: runs file(s) and the rows left out
  std::string path = "(not written)";
  // With cv: rows no fit sees (validate --never-fitted), predicted by the fitted profile; their errors join
  // the held-out evidence of the novelty bands (NeverFittedRow). Empty: none.
  std::function<std::vector<NeverFittedRow>(const FittedProfile& fitted)> never_fitted;
};

// How the workflow reports its progress (each may be empty). A stage is one fit or the cross-validation.
struct FitObserver {
  std::function<void(const std::string& line)> message;  // "fitting 9 parameters on 51 rows", ...
  // A stage begins: its label ("validate --fit", "validate --cv"), the replays of the row set it is
  // expected to take and its first step ("round 1/4", "fold 1/9").
  std::function<void(const std::string& label, std::size_t replays, const std::string& step)> stage_begin;
  std::function<void(const std::string& step)> step;      // the stage moved on: "round 2/4", "fold 3/9"
  std::function<void()> replayed;                         // one replay of the row set done
  std::function<void(const std::string& line)> fit_line;  // the fit's own progress line (FitOptions)
  std::function<void()> stage_end;
};

// Predictions of rows `which` under a profile (predict_rows in the CLI; tests stand in a closed form).
using RowPredictor = std::function<std::vector<RowPrediction>(const std::vector<std::size_t>& which,
                                                              const FittedProfile& profile)>;

struct FitWorkflowResult {
  FittedProfile profile;              // start's, with the fitted parameters, provenance and residuals
  std::vector<double> out_of_sample;  // per row with cross-validation (<= 0: no prediction); else empty
  FoldPredictions folds;              // with cross-validation: each fold's prediction of every row
  std::vector<NeverFittedRow> never_fitted;  // with cross-validation and options.never_fitted
  std::string objective;  // "mean squared log ratio 0.1234 -> 0.0123 (57 replays of the row set)"
};

// Throws InputError for a key that is no free parameter (--params), naming the keys there are.
void check_fit_parameters(const std::vector<std::string>& keys);

// Fits `start` on `runs` (measured iter_s). Throws InputError as check_fit_parameters.
FitWorkflowResult fit_profile(const std::vector<LiveRun>& runs, const FittedProfile& start,
                              const FitWorkflowOptions& options, const RowPredictor& predict,
                              const FitObserver& observer = {});

// Today's date in UTC, "2026-12-02".
std::string today_utc();

// Relative errors predicted / measured - 1 of the rows with a prediction (predicted[i] > 0), and per
// campaign.
struct RowErrors {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_campaign;
};
RowErrors row_errors(const std::vector<LiveRun>& runs, const std::vector<double>& predicted);
// The profile's summary of relative errors (error_stats).
ResidualSummary residual_summary(const std::vector<double>& errors);
// The profile's summary of the errors of the predicted time ratios of every pair of dispatchers measured
// on one cell of `cells` (rank_cells of the same predictions).
MarginResidualSummary margin_residual_summary(const std::vector<CellRanking>& cells,
                                              const std::vector<LiveRun>& runs,
                                              const std::vector<double>& predicted);

}  // namespace moetwin
