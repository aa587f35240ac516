// The data behind the report's figures, prepared from the inputs (report_input.hpp) as plain numbers:
// what gnuplot.hpp draws and what the tests check. No plotting here.
#pragma once

#include <string>
#include <vector>

#include "moetwin/reports/report_input.hpp"

namespace moetwin {

struct BandPoint {
  double x = 0;
  double y = 0;
  double lo = 0;  // NaN when the input has no band
  double hi = 0;
};

struct Series {
  std::string name;
  std::vector<BandPoint> points;  // ascending x
};

// Where two series swap order between consecutive common x values x0 < x1 (log2-linear interpolation of
// the difference): `faster_before` is the faster one at x0, `faster_after` at x1.
struct Crossover {
  std::string faster_before;
  std::string faster_after;
  double x = 0;
};

// Iteration time vs nodes, one series per dispatcher (the fastest row of each (dispatcher, nodes)).
struct NodesFigure {
  std::string title;  // "kimi-k2 on p6-b300.48xlarge"
  std::vector<Series> series;
  std::vector<Crossover> crossovers;
};

// Stacked time breakdown, one bar per row.
struct BreakdownFigure {
  std::string title;                        // says "first N of M rows" when rows were left out
  std::size_t usable_rows = 0;              // rows that could be drawn; bars.size() of them are
  std::vector<std::string> bars;            // bar labels, unique (row_label, then "#row" on a tie)
  std::vector<std::string> components;      // stack order, bottom first
  std::vector<std::vector<double>> values;  // [bar][component], seconds
  // Each bar's predicted iteration time and, for validate rows, the measured one (seconds; NaN when the row
  // has none). The components are maxima over ranks taken on different ranks, so the stack is an upper view
  // of where the time goes and can exceed the iteration: the marks show the iteration itself.
  std::vector<double> iteration;
  std::vector<double> measured;
};

// Predicted vs measured iteration time (validate).
struct ScatterFigure {
  std::string title;
  std::vector<std::string> labels;
  std::vector<double> measured;
  std::vector<double> predicted;
  double within10 = 0;  // fraction of points with |error| <= 10%
  double within20 = 0;
};

// Plan: every option's (days, cost), the Pareto front and the recommended option.
struct ParetoFigure {
  std::string title;
  std::vector<std::string> front_labels;  // the front's options (nodes, layout, dispatcher), fastest first
  std::string recommended_label;
  double deadline_days = 0;  // > 0: drawn as a vertical line
  std::string cost_label;    // "cost (USD)" or "node-hours" when the plan had no price
  std::vector<double> days, cost;
  std::vector<double> front_days, front_cost;  // fastest first
  double recommended_days = 0, recommended_cost = 0;
  bool has_recommended = false;
};

// Whether values spanning [lo, hi] are drawn on a log axis: all positive and hi > 3 lo (a linear axis
// would squeeze the small values into a sliver).
bool wants_log_axis(double lo, double hi);

// A short label of a row: campaign (validate), n<nodes> tp pp vpp ep mb, "ov" with MoE A2A overlap, the
// dispatcher. Used for bars and points.
std::string row_label(const ReportInput& in, std::size_t row);

// Crossovers of every pair of series (name order), by ascending x then names.
std::vector<Crossover> find_crossovers(const std::vector<Series>& series);

// From recommend and sweep inputs (rows with a dispatcher, nodes and a predicted iteration time; sweep
// rows whose status is not "ok" are skipped). One figure per (model, instance); empty when not applicable.
std::vector<NodesFigure> nodes_figures(const ReportInput& in);
// Components present among compute_s_max, exposed_{tp,ep,pp,dp}_s_max, host_wait_s_max, bubble_s_max;
// bars for the first `max_bars` usable rows (plan: ranked order; recommend: winners only); the title says
// how many were left out. Empty when the input has none of the columns.
BreakdownFigure breakdown_figure(const ReportInput& in, std::size_t max_bars = 12);
// validate: measured iter_s vs predicted_iter_s. Empty (no points) otherwise.
ScatterFigure scatter_figure(const ReportInput& in);
// plan: days vs cost_usd (node_hours when cost_usd is empty), the front's and the recommendation's labels,
// the deadline (ReportInput::deadline_days). Empty (no points) otherwise.
ParetoFigure pareto_figure(const ReportInput& in);

}  // namespace moetwin
