// What `moetwin validate` reports of predictions against live runs: every row with its prediction, error
// and 80% interval; errors per campaign and overall; the dispatcher ranking per cell; the errors of
// predicted margins (the uncertainty of a recommendation); how often the intervals hold the measured time;
// the profile's parameters. Out of sample (with cross-validation) where there is an out-of-sample
// prediction, with the in-sample figures beside it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/validate/novelty_bands.hpp"
#include "moetwin/validate/row_predictions.hpp"

namespace moetwin {

struct ValidationReport {
  ResultTable rows;        // the CSV: the runs' columns, then prediction, error, interval, status, breakdown
  ResultTable summary;     // per campaign and "all"
  ResultTable cells;       // dispatcher ranking per cell
  ResultTable margins;     // margin errors, out of sample and / or in sample
  ResultTable parameters;  // the profile's free parameters and which the fit moved
  ResultTable intervals;   // interval coverage per scope and novelty level
  // Interval coverage per scope, leave-one-campaign-out fold and distance bucket (coverage_by_distance).
  ResultTable by_distance;
  // Interval coverage per scope and novelty dimension (coverage_by_dimension).
  ResultTable by_dimension;
  ResultTable novelty_growth;  // the profile's NoveltyBand per dimension: rows, per-unit growth, source
  // Rows no fit saw (validate --never-fitted), each with its error and its 80% interval measured without
  // its own system (never_fitted_intervals); empty without them.
  ResultTable never_fitted;
  std::vector<std::pair<std::string, std::string>> headline;  // the text's summary lines
  std::vector<std::string> misses;  // wrong winners where the measured lead is >= 5%
  bool out_of_sample = false;
};

// `header`: the runs' CSV columns (LiveRunTable::header); `predictions`: every row at `profile`;
// `out_of_sample`: every row's prediction from the fit without its campaign, or empty; `folds`: each
// fold's prediction of every row (FitWorkflowResult::folds; the out-of-sample intervals are the folds'
// own bands, out_of_sample_intervals), empty without cross-validation; `runs_label` names the runs files;
// `fit_objective` is FitWorkflowResult::objective, or "" without a fit.
ValidationReport make_validation_report(const std::vector<std::string>& header,
                                        const std::vector<LiveRun>& runs,
                                        const std::vector<RowPrediction>& predictions,
                                        const std::vector<double>& out_of_sample,
                                        const FoldPredictions& folds, const FittedProfile& profile,
                                        const std::string& runs_label, const std::string& fit_objective,
                                        const std::vector<NeverFittedRow>& never_fitted = {});

// The headline, parameters, per campaign, a brief per-row table, the ranking and the wrong winners.
std::string render_validation_text(const ValidationReport& report);
// {"context", "rows", "summary", "cells", "margins", "parameters", "intervals", "intervals_by_distance",
// "intervals_by_dimension", "novelty_growth", "never_fitted"}.
std::string render_validation_json(const ValidationReport& report, const OutputContext& context);

// One row per scope ("in_sample", "out_of_sample") and novelty level: rows, inside, coverage_pct,
// median_hi_lo.
ResultTable interval_coverage_table(
    const std::vector<std::pair<std::string, std::vector<IntervalCoverage>>>& scopes);
// "79% of 58 rows inside their 80% interval, median hi/lo 1.38 (covered 81% of 40, platform 71% of 7)":
// one scope in a line.
std::string interval_coverage_line(const std::vector<IntervalCoverage>& coverage);

}  // namespace moetwin
