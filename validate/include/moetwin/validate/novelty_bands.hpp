// Uncertainty bands by kind of novelty, from leave-one-campaign-out predictions, and how often the 80%
// intervals they give contain the measured time. A held-out campaign is new to its fold in whatever
// dimensions no other campaign shares (a GPU, a stack, a model, a layout regime...): its rows' out-of-sample
// errors are what a prediction new in those dimensions can expect. The data decide which dimensions get a
// measured band; the rest get a stated prior (fitted_profile.hpp, NoveltyBand).
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

// One band per banded novelty dimension from the rows' out-of-sample predictions (`predicted` <= 0: no
// prediction) and their held-out novelty, ordered by distance: each novel row's log error beyond the
// in-family width (the rows' own signed p10 / p90), per unit of its combined distance; a dimension's growth
// (NoveltyBand::per_unit) is the 80th percentile over the rows new in it where at least kMinNoveltyBandRows
// were, else a conservative prior (the source says which and why).
std::map<std::string, NoveltyBand> novelty_bands(const std::vector<LiveRun>& runs,
                                                 const std::vector<double>& predicted,
                                                 const std::vector<Novelty>& novelty);

// The 80% interval of each row and whether the measured time falls in it.
struct RowInterval {
  double lo_s = 0;
  double hi_s = 0;
  bool inside = false;
  std::string level;    // Novelty::level() of the novelty the band was taken at
  std::string novelty;  // Novelty::summary()
  double distance = 0;  // Novelty::distance() of that novelty
};

// In sample: each row's band from `profile` at its novelty against the profile's coverage, around
// `predicted`.
std::vector<RowInterval> in_sample_intervals(const std::vector<LiveRun>& runs,
                                             const std::vector<double>& predicted,
                                             const FittedProfile& profile);
// Out of sample: each row's band at its held-out novelty, with the in-family quantiles and the novelty bands
// computed without its campaign's rows (the band itself held out, so the coverage is not true by
// construction), around its out-of-sample prediction.
std::vector<RowInterval> out_of_sample_intervals(const std::vector<LiveRun>& runs,
                                                 const std::vector<double>& predicted,
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

}  // namespace moetwin
