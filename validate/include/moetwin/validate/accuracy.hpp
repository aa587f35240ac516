// Accuracy of predictions against measurements: error statistics per group and dispatcher-ranking
// agreement per cell. Relative error is (predicted - measured) / measured (negative: predicted faster).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "moetwin/scenario/live_runs.hpp"

namespace moetwin {

struct ErrorStats {
  int rows = 0;
  double median_abs = 0;  // of |error|
  double p90_abs = 0;     // 90th percentile of |error| (linear interpolation between order statistics)
  double mean_signed = 0;
  double signed_p10 = 0;
  double signed_p90 = 0;
};
// Percentile q in [0, 1] of `values` with linear interpolation (numpy's default); 0 for an empty set.
double percentile(std::vector<double> values, double q);
ErrorStats error_stats(const std::vector<double>& relative_errors);

// A cell: rows of one campaign with the same layout, batch, recompute and overlap — everything but the
// dispatcher. Its key names every field so that distinct layouts never merge.
std::string cell_key(const LiveRun& run);

// A measured lead that counts as a real difference between two dispatchers: 5% (the winner table's
// threshold; one dispatcher's variants of a cell spread up to 2.5%, shared/data/live-runs-p5en.csv).
inline constexpr double kDecisiveLead = 0.05;
// Predicted times within 1% of each other: the twin does not tell the two apart.
inline constexpr double kNearTie = 0.01;
struct CellRanking {
  std::string key;
  std::string campaign;
  std::vector<std::size_t> rows;  // in input order
  std::string measured_winner;    // fastest measured dispatcher
  std::string predicted_winner;   // fastest predicted dispatcher
  double measured_lead = 0;       // runner-up measured time / winner's - 1 (0 with one row)
  int pairs = 0;        // row pairs in the cell (rows of one dispatcher differ by a setting outside the key)
  int pairs_agree = 0;  // pairs whose predicted order matches the measured order
  // Pairs of two dispatchers measured at least kDecisiveLead apart (beyond the run-to-run spread of one
  // dispatcher's variants), of those how many the twin orders right, and how many it predicts within
  // kNearTie of each other (a near tie: the order it gives is no call, whichever way it falls).
  int decisive_pairs = 0;
  int decisive_agree = 0;
  int decisive_near_ties = 0;
  bool winner_right() const { return measured_winner == predicted_winner; }
};
// Cells with at least two dispatchers, in order of first appearance. predicted_s[i] belongs to runs[i];
// rows whose prediction failed (predicted_s <= 0) are left out.
std::vector<CellRanking> rank_cells(const std::vector<LiveRun>& runs, const std::vector<double>& predicted_s);

// How far each predicted margin between two dispatchers of a cell is off: for every pair of a cell's rows,
// exp(|ln(p_i / p_j) - ln(m_i / m_j)|) - 1 (0.1: the predicted time ratio is 10% off the measured one,
// whichever way). This, not the end-to-end error, is the uncertainty of a recommendation: the rows of a
// cell share the model, layout and cluster, so most of their end-to-end error is common to both. Cells in
// rank_cells order, pairs in row order.
std::vector<double> pair_margin_errors(const std::vector<CellRanking>& cells,
                                       const std::vector<LiveRun>& runs,
                                       const std::vector<double>& predicted_s);

}  // namespace moetwin
