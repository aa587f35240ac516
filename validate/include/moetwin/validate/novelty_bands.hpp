// Uncertainty bands by kind of novelty, from leave-one-campaign-out predictions, and how often the 80%
// intervals they give contain the measured time. A held-out campaign is new to its fold in whatever
// dimensions no other campaign shares (a GPU, a stack, a model, a layout regime...): its rows' out-of-sample
// errors, beyond the spread of the fold's own fit, are what a prediction new in those dimensions can expect.
// The data decide which dimensions get a measured band; the rest get a stated prior (fitted_profile.hpp,
// NoveltyBand).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// Each row's novelty relative to the rows of every other campaign: what the fold that held its campaign out
// was fitted on.
std::vector<Novelty> held_out_novelty(const std::vector<LiveRun>& runs);

// Each leave-one-campaign-out fold's predictions of every row (CrossValidation::fold_predicted_s): held-out
// campaign -> the fold's fit replayed on every row of `runs`, in order (<= 0: no prediction). The training
// rows' residuals are in sample to the fold, the held-out rows' out of sample.
using FoldPredictions = std::map<std::string, std::vector<double>>;

// The spread of a fold's own fit: the residual summary of its training rows (every row outside the
// held-out campaign with a prediction).
ResidualSummary fold_spread(const std::vector<LiveRun>& runs, const std::vector<double>& fold_predicted,
                            const std::string& held_out);

// What the folds measure of how a band grows beyond a fit's own spread, fold by fold: each held-out row's
// log error l against its fold's in-sample spread w (the signed p10 / p90 of the fold's training rows, the
// side of l's sign):
// - campaign (FittedProfile::campaign_band): the rows at distance 0 from their fold's training rows; a
//   row's excess sqrt(max(0, l^2 - w^2)); the 80th percentile, each held-out campaign weighing alike, where
//   at least kMinNoveltyBandRows rows are, else a stated prior;
// - growth per dimension (FittedProfile::novelty_bands): the novel rows (distance d > 0); a row's excess
//   beyond its fold's band at distance 0, sqrt(max(0, l^2 - w^2 - c^2)), per unit of d (a campaign new in
//   several dimensions cannot tell them apart: its rows' rate serves each); the 80th percentile over the
//   rows new in the dimension, each campaign weighing alike, where at least kMinNoveltyBandRows are, else
//   the conservative prior (novelty_bands.cpp).
// `spread` is the fit the bands will widen (the whole fit's in-sample residuals, or a fold's): the prior
// reads its width. `skip` names a fold left out of the measurement (a held-out campaign's own band must
// not be measured on its rows); "" for none.
// A row no fit has seen (NVIDIA's dense rows on DGX and NVL72 beside an EFA-only live fit), predicted by the
// whole fit exactly as a user meets it: one more piece of out-of-sample evidence. Its group (the system:
// "system dgx-gb200") weighs as one held-out campaign, however many rows it has; its in-family spread is
// the whole fit's (it was predicted at the whole fit's parameters); its novelty is against the fit's
// coverage. (Its error is measured at the fit that holds every live campaign: beside a fold without
// campaign C it is not re-predicted, a small leak accepted because these rows share no campaign.)
struct NeverFittedRow {
  std::string name;   // scenario name
  std::string group;  // the unit that weighs alike: "system " + instance
  double predicted_s = 0;
  double measured_s = 0;
  double spread_lo = 0, spread_hi = 0;  // the fit's in-sample log half-widths below / above
  Novelty novelty;
};
std::vector<NeverFittedRow> never_fitted_rows(const std::vector<LiveRun>& runs,
                                              const std::vector<double>& predicted,
                                              const FittedProfile& profile);

struct MeasuredBands {
  NoveltyBand campaign;
  std::map<std::string, NoveltyBand> growth;  // per banded dimension
};
MeasuredBands measure_bands(const std::vector<LiveRun>& runs, const FoldPredictions& folds,
                            const std::vector<Novelty>& novelty, const ResidualSummary& spread,
                            const std::string& skip = "",
                            const std::vector<NeverFittedRow>& never_fitted = {});

// The 80% interval of each row and whether the measured time falls in it.
struct RowInterval {
  double lo_s = 0;
  double hi_s = 0;
  bool inside = false;
  std::string level;    // Novelty::level() of the novelty the band was taken at
  std::string novelty;  // Novelty::summary()
  double distance = 0;  // Novelty::distance() of that novelty
  // The dimensions that novelty is new in (distinct, in NoveltyDimension order), and the row's times.
  std::vector<NoveltyDimension> dimensions;
  double predicted_s = 0;
  double measured_s = 0;
};

// In sample: each row's band from `profile` at its novelty against the profile's coverage, around
// `predicted`.
std::vector<RowInterval> in_sample_intervals(const std::vector<LiveRun>& runs,
                                             const std::vector<double>& predicted,
                                             const FittedProfile& profile);
// Out of sample: each row's band at its held-out novelty around its fold's prediction, fold-consistent:
// the in-family spread is its fold's own (fold_spread), the campaign band and the growth are measured on
// every other fold (measure_bands with `skip` = its campaign: the band itself held out, so the coverage is
// not true by construction).
std::vector<RowInterval> out_of_sample_intervals(const std::vector<LiveRun>& runs,
                                                 const FoldPredictions& folds, const FittedProfile& profile,
                                                 const std::vector<NeverFittedRow>& never_fitted = {});
// Each never-fitted row's 80% interval around its prediction, its band measured without its own group
// (measure_bands with `skip` = the group: the coverage of a system is not true by construction).
std::vector<RowInterval> never_fitted_intervals(const std::vector<LiveRun>& runs,
                                                const FoldPredictions& folds,
                                                const std::vector<NeverFittedRow>& never_fitted,
                                                const FittedProfile& profile);

// Coverage per novelty level ("covered", "configuration", "platform") and "all".
struct IntervalCoverage {
  std::string level;
  int rows = 0;
  int inside = 0;
  double share = 0;         // inside / rows
  double median_hi_lo = 0;  // median hi_s / lo_s: how wide the intervals are
};
std::vector<IntervalCoverage> interval_coverage(const std::vector<RowInterval>& intervals);

}  // namespace moetwin

namespace moetwin {

// Distance buckets of the coverage check: "0", "(0,1]", "(1,2]", "(2,4]", ">4" (novelty units).
std::string distance_bucket(double distance);

// Coverage of the 80% intervals per leave-one-campaign-out fold (the held-out campaign) and distance
// bucket, then per bucket over every fold (fold "all"): how the band holds as predictions reach farther.
struct DistanceCoverage {
  std::string fold;
  std::string bucket;
  int rows = 0;
  int inside = 0;
  double share = 0;
  double distance_min = 0, distance_max = 0;
};
std::vector<DistanceCoverage> coverage_by_distance(const std::vector<LiveRun>& runs,
                                                   const std::vector<RowInterval>& intervals);
// The same with each row's fold named directly (never-fitted rows: their group).
std::vector<DistanceCoverage> coverage_by_distance(const std::vector<std::string>& fold_of_row,
                                                   const std::vector<RowInterval>& intervals);

// Coverage of the 80% intervals per novelty dimension: every row new in a dimension counts under it (a row
// new in several counts under each), rows new in none under "none". Which dimensions carry the rows a band
// misses or over-covers (issue 53: is a floor standing in where held-out data exist?). In
// banded_novelty_dimensions() order after "none"; dimensions without rows are left out.
struct DimensionCoverage {
  std::string dimension;
  int rows = 0;
  int inside = 0;
  double share = 0;             // inside / rows
  double median_hi_lo = 0;      // median hi_s / lo_s
  double median_abs_error = 0;  // median |predicted / measured - 1|
  double distance_min = 0, distance_max = 0;
};
std::vector<DimensionCoverage> coverage_by_dimension(const std::vector<RowInterval>& intervals);

}  // namespace moetwin
