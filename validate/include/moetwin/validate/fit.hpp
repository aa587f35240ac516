// Fitting the twin's free parameters (fitted_profile.hpp) to measured iteration times, and
// cross-validating the fit by groups (leave-one-campaign-out).
//
// Objective: mean squared log ratio log(predicted / measured) over the rows fitted (scale-free, so a
// 4-node and a 32-node row weigh the same, and over- and under-prediction by the same factor cost the
// same); optionally its Huber form (FitOptions::huber_delta): squared up to |log ratio| = delta, linear
// beyond, so a few rows no parameter set can reach (a campaign measured on a slower day) pull the
// parameters no harder than any other row. Every parameter stays inside its physical bounds
// (free_parameters()).
//
// Method: a replay costs ~0.1-1 s per row, so the optimiser does not replay on every step. Iteration
// time is a maximum over dependency paths of sums of op durations, each linear in the parameters (they
// scale kernel, collective and A2A times or add host time per launch), so around a point it is exactly
// linear until the critical path changes. The fit (1) replays the rows at the current point and with
// each parameter moved by a finite step (the local linear model), (2) minimises the objective of that
// linear model inside the bounds (coordinate search in log space: a grid then golden-section per
// coordinate, repeated until no coordinate moves), (3) replays the rows at the minimiser and accepts
// it only if the replayed objective improved (else it halves the step in log space), and repeats from
// the new point. Reported errors always come from replays, never from the linear model.
//
// Cross-validation: for every group (campaign), the same minimisation on the rows outside the group,
// starting from the linear model at the all-rows optimum (optionally refined by replays of the training
// rows only, `refine_outer`), then a replay of every row at the fold's parameters (the group's rows for its
// out-of-sample predictions, the others for the fold's own residuals). The held-out rows' measurements
// never enter the fold's objective.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "moetwin/sim/workload.hpp"

namespace moetwin {

// Predicted iteration seconds of rows `which` under `profile`, in that order (<= 0: the row failed).
using RowTimes =
    std::function<std::vector<double>(const SimProfile& profile, const std::vector<std::size_t>& which)>;

struct FitOptions {
  std::vector<std::string> parameters;  // keys (find_free_parameter)
  int outer_iterations = 4;             // linearise-minimise-replay rounds
  double relative_step = 0.02;          // finite-difference step of the linear model (fraction of the value)
  int refine_outer = 0;                 // cross-validation: replay rounds per fold from its surrogate optimum
  double huber_delta = 0;  // > 0: Huber objective with this |log ratio| knee; 0: squared log ratio
  std::function<void(const std::string&)> progress;  // one line per round (the CLI prints it on stderr)
};

// Local linear model of the rows' times around `at`.
struct Linearization {
  SimProfile at;
  std::vector<std::size_t> rows;
  std::vector<double> base;                // replayed times at `at`
  std::vector<std::vector<double>> slope;  // [parameter k][row] seconds per unit of parameter k
};

struct FitResult {
  SimProfile profile;
  double loss = 0;                  // replayed objective at `profile`
  double start_loss = 0;            // replayed objective at the start point
  std::vector<double> predicted_s;  // replayed, for `rows` (Linearization::rows order)
  int replays = 0;                  // row-set replays spent
  int rows_failed = 0;              // rows left out because their replay failed
  Linearization model;              // the linear model at `profile`
};

// Objective of `predicted` against `measured` over the rows with a positive prediction: the mean of
// l^2 (l = log(predicted / measured)), or with huber_delta > 0 of l^2 for |l| <= delta and
// delta x (2|l| - delta) beyond (the same value and slope at the knee).
double log_ratio_loss(const std::vector<double>& predicted, const std::vector<double>& measured,
                      double huber_delta = 0);

// Fits `options.parameters` on rows `which` (measured[i] is row i's measured time).
FitResult fit_parameters(const std::vector<double>& measured, const std::vector<std::size_t>& which,
                         const SimProfile& start, const FitOptions& options, const RowTimes& times);

// Minimiser of the linear model restricted to `subset` (row indices, each present in model.rows).
SimProfile minimise_linear_model(const Linearization& model, const std::vector<double>& measured,
                                 const std::vector<std::size_t>& subset, const FitOptions& options);

struct CrossValidation {
  std::vector<double> predicted_s;          // out-of-sample prediction of every row of `which` order
  std::map<std::string, SimProfile> folds;  // group -> the parameters fitted without it
  // group -> every row of `which` replayed at that fold's parameters: its training rows in sample to the
  // fold (the fold's own spread, novelty_bands.hpp), its held-out rows out of sample (= predicted_s there).
  std::map<std::string, std::vector<double>> fold_predicted_s;
  int replays = 0;
};
// group_of[i] names row i's group. `full` is the fit on all of `which`.
CrossValidation cross_validate(const std::vector<double>& measured, const std::vector<std::size_t>& which,
                               const std::vector<std::string>& group_of, const FitResult& full,
                               const FitOptions& options, const RowTimes& times);

}  // namespace moetwin
