#include "moetwin/validate/validation_report.hpp"

#include <algorithm>
#include <cmath>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/validate/accuracy.hpp"
#include "moetwin/validate/fit_workflow.hpp"

namespace moetwin {

namespace {

Cell pct(double fraction) {
  return Cell::fixed(fraction * 100, 2);
}

bool is_headline_column(const std::string& c) {
  return c == "predicted_iter_s" || c == "predicted_tflops_gpu";
}

// The rows table: the runs' own columns, the headline prediction (out of sample when there is one), the
// in-sample one beside it, the 80% interval, the status and the replay's breakdown.
ResultTable rows_table(const std::vector<std::string>& header, const std::vector<LiveRun>& runs,
                       const std::vector<RowPrediction>& preds, const std::vector<double>& headline,
                       const std::vector<double>& in_sample, const std::vector<RowInterval>& intervals,
                       bool has_cv) {
  ResultTable rows;
  rows.columns = header;
  for (const char* c : {"predicted_iter_s", "predicted_tflops_gpu", "error_pct"}) rows.columns.push_back(c);
  if (has_cv) {
    for (const char* c : {"in_sample_iter_s", "in_sample_error_pct"}) rows.columns.push_back(c);
  }
  for (const std::string& c : band_columns()) rows.columns.push_back(c);
  rows.columns.push_back("status");
  const std::vector<std::string> names = predict_columns();
  for (const std::string& c : names) {
    if (!is_headline_column(c)) rows.columns.push_back(c);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<Cell> row;
    for (const std::string& f : runs[i].row.fields) row.emplace_back(f);
    const RowPrediction& p = preds[i];
    const double t = headline[i];
    const double tflops = t > 0 ? p.detail.model_flops / (t * p.detail.gpus) / 1e12 : 0;
    row.push_back(Cell::fixed(t, 6));
    row.push_back(Cell::fixed(tflops, 2));
    row.push_back(t > 0 ? pct(t / runs[i].iter_s - 1) : Cell(""));
    if (has_cv) {
      row.push_back(Cell::fixed(in_sample[i], 6));
      row.push_back(in_sample[i] > 0 ? pct(in_sample[i] / runs[i].iter_s - 1) : Cell(""));
    }
    if (intervals[i].level.empty()) {
      for (std::size_t k = 0; k < band_columns().size(); ++k) row.emplace_back("");
    } else {
      row.push_back(Cell::fixed(intervals[i].lo_s, 6));
      row.push_back(Cell::fixed(intervals[i].hi_s, 6));
      row.emplace_back(intervals[i].level);
      row.emplace_back(intervals[i].novelty);
      row.push_back(Cell::fixed(intervals[i].distance, 2));
    }
    row.push_back(p.ok ? Cell("ok") : Cell("error: " + p.error));
    const std::vector<Cell> detail = predict_cells(p.detail);
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (!is_headline_column(names[k])) row.push_back(detail[k]);
    }
    rows.add_row(std::move(row));
  }
  return rows;
}

// One row per never-fitted row: its group, prediction, error and interval.
ResultTable never_fitted_table(const std::vector<NeverFittedRow>& rows,
                               const std::vector<RowInterval>& intervals) {
  ResultTable t;
  t.columns = {"scenario",       "group",          "iter_s", "predicted_iter_s", "error_pct",
               "band_lo_iter_s", "band_hi_iter_s", "inside", "novelty",          "novelty_distance"};
  for (std::size_t i = 0; i < rows.size() && i < intervals.size(); ++i) {
    const NeverFittedRow& r = rows[i];
    const RowInterval& b = intervals[i];
    if (!(r.predicted_s > 0)) {
      t.add_row({r.name, r.group, Cell::fixed(r.measured_s, 6), "", "", "", "", "", "", ""});
      continue;
    }
    t.add_row({r.name, r.group, Cell::fixed(r.measured_s, 6), Cell::fixed(r.predicted_s, 6),
               pct(r.predicted_s / r.measured_s - 1), Cell::fixed(b.lo_s, 6), Cell::fixed(b.hi_s, 6),
               Cell::boolean(b.inside), b.novelty, Cell::fixed(b.distance, 2)});
  }
  return t;
}

// Per system and distance bucket (by_distance, scope "never_fitted") and the rows' own table.
void add_never_fitted_rows(ValidationReport& report, const std::vector<NeverFittedRow>& never_fitted,
                           const std::vector<RowInterval>& intervals) {
  std::vector<std::string> groups;
  for (const NeverFittedRow& r : never_fitted) groups.push_back(r.group);
  for (const DistanceCoverage& c : coverage_by_distance(groups, intervals)) {
    report.by_distance.add_row({"never_fitted", c.fold, c.bucket, Cell::integer(c.rows),
                                Cell::integer(c.inside), Cell::fixed(c.share * 100, 1),
                                Cell::fixed(c.distance_min, 2), Cell::fixed(c.distance_max, 2)});
  }
  report.never_fitted = never_fitted_table(never_fitted, intervals);
}

// Per scope and novelty dimension: which dimensions the missed (or over-covered) rows are new in.
ResultTable dimension_coverage_table(
    const std::vector<std::pair<std::string, const std::vector<RowInterval>*>>& scopes) {
  ResultTable t;
  t.columns = {
      "scope",        "dimension",   "rows", "inside", "coverage_pct", "median_hi_lo", "median_abs_error_pct",
      "distance_min", "distance_max"};
  for (const auto& [scope, intervals] : scopes) {
    if (intervals == nullptr) continue;
    for (const DimensionCoverage& c : coverage_by_dimension(*intervals)) {
      t.add_row({scope, c.dimension, Cell::integer(c.rows), Cell::integer(c.inside),
                 Cell::fixed(c.share * 100, 1), Cell::fixed(c.median_hi_lo, 3),
                 Cell::fixed(c.median_abs_error * 100, 1), Cell::fixed(c.distance_min, 2),
                 Cell::fixed(c.distance_max, 2)});
    }
  }
  return t;
}

// "65 of 65 predicted by the fit: median |error| 14.1%, p90 25.7%".
std::string never_fitted_headline(const std::vector<NeverFittedRow>& never_fitted) {
  std::vector<double> e;
  for (const NeverFittedRow& r : never_fitted) {
    if (r.predicted_s > 0) e.push_back(r.predicted_s / r.measured_s - 1);
  }
  const ErrorStats s = error_stats(e);
  return std::to_string(s.rows) + " of " + std::to_string(never_fitted.size()) +
         " predicted by the fit: median |error| " + format_fixed(s.median_abs * 100, 1) + "%, p90 " +
         format_fixed(s.p90_abs * 100, 1) + "%";
}

// The profile's growth of the band with distance, per novelty dimension.
ResultTable novelty_growth_table(const FittedProfile& profile) {
  ValidationReport report;
  report.novelty_growth.columns = {"dimension", "rows", "per_unit_pct", "source"};
  if (profile.campaign_band.per_unit >= 0) {
    // Not a dimension: what any new campaign adds at distance 0 (its "per unit" is its whole width).
    const NoveltyBand& c = profile.campaign_band;
    report.novelty_growth.add_row({"(new campaign, distance 0)", Cell::integer(c.rows),
                                   Cell::fixed(std::expm1(c.per_unit) * 100, 1), c.source});
  }
  for (const auto& [dimension, b] : profile.novelty_bands) {
    report.novelty_growth.add_row(
        {dimension, Cell::integer(b.rows), Cell::fixed(std::expm1(b.unit_width()) * 100, 1), b.source});
  }
  return report.novelty_growth;
}

ResultTable parameters_table(const FittedProfile& profile) {
  ResultTable params;
  params.columns = {"parameter", "value", "unit", "lo", "hi", "fitted", "meaning"};
  std::vector<std::string> shown;
  for (const FreeParameter& fp : free_parameters()) shown.push_back(fp.key);
  for (const auto& entry : profile.sim.a2a_by_dispatcher) {
    for (const std::string& leaf : a2a_parameter_leaves()) shown.push_back(entry.first + "." + leaf);
  }
  for (const std::string& key : shown) {
    const FreeParameter& fp = *find_free_parameter(key);
    const bool moved =
        std::find(profile.fitted_keys.begin(), profile.fitted_keys.end(), key) != profile.fitted_keys.end();
    params.add_row({key, Cell::exact(get_free_parameter(profile.sim, key)), fp.unit, Cell::exact(fp.lo),
                    Cell::exact(fp.hi), Cell::boolean(moved), fp.meaning});
  }
  return params;
}

// The per-cell dispatcher ranking table and the report's wrong-winner lines; the totals for the headline.
struct CellTotals {
  int right = 0, decisive = 0, decisive_right = 0, pairs = 0, agree = 0;
  int decisive_pairs = 0, decisive_agree = 0, near_ties = 0;
};
CellTotals add_cell_rankings(ValidationReport& report, const std::vector<CellRanking>& cells) {
  report.cells.columns = {
      "cell",  "measured_winner", "predicted_winner", "winner_right",   "measured_lead_pct",
      "pairs", "pairs_agree",     "decisive_pairs",   "decisive_agree", "decisive_near_ties"};
  CellTotals t;
  for (const CellRanking& c : cells) {
    report.cells.add_row({c.key, c.measured_winner, c.predicted_winner, Cell::boolean(c.winner_right()),
                          pct(c.measured_lead), Cell::integer(c.pairs), Cell::integer(c.pairs_agree),
                          Cell::integer(c.decisive_pairs), Cell::integer(c.decisive_agree),
                          Cell::integer(c.decisive_near_ties)});
    t.right += c.winner_right() ? 1 : 0;
    t.pairs += c.pairs;
    t.agree += c.pairs_agree;
    t.decisive_pairs += c.decisive_pairs;
    t.decisive_agree += c.decisive_agree;
    t.near_ties += c.decisive_near_ties;
    if (c.measured_lead >= kDecisiveLead) {
      ++t.decisive;
      t.decisive_right += c.winner_right() ? 1 : 0;
      if (!c.winner_right())
        report.misses.push_back(c.key + ": measured " + c.measured_winner + " (+" +
                                format_fixed(c.measured_lead * 100, 1) + "%), predicted " +
                                c.predicted_winner);
    }
  }
  return t;
}

}  // namespace

ValidationReport make_validation_report(const std::vector<std::string>& header,
                                        const std::vector<LiveRun>& runs,
                                        const std::vector<RowPrediction>& preds,
                                        const std::vector<double>& oos, const FoldPredictions& folds,
                                        const FittedProfile& profile, const std::string& runs_label,
                                        const std::string& fit_objective,
                                        const std::vector<NeverFittedRow>& never_fitted) {
  ValidationReport report;
  std::vector<double> in_sample;
  for (const RowPrediction& r : preds) in_sample.push_back(r.ok ? r.iteration_s : 0);
  const bool has_cv = !oos.empty();
  report.out_of_sample = has_cv;
  const std::vector<double>& headline = has_cv ? oos : in_sample;

  // The 80% interval: out of sample (the band held out with the row's campaign) with --cv, else the
  // profile's band at the row's novelty against the profile's coverage.
  const std::vector<RowInterval> in_intervals = in_sample_intervals(runs, in_sample, profile);
  const std::vector<RowInterval> oos_intervals =
      has_cv ? out_of_sample_intervals(runs, folds, profile, never_fitted) : std::vector<RowInterval>{};
  const std::vector<RowInterval> never_intervals =
      has_cv ? never_fitted_intervals(runs, folds, never_fitted, profile) : std::vector<RowInterval>{};
  report.rows =
      rows_table(header, runs, preds, headline, in_sample, has_cv ? oos_intervals : in_intervals, has_cv);

  // Per campaign and overall.
  const RowErrors head = row_errors(runs, headline);
  const RowErrors ins = row_errors(runs, in_sample);
  ResultTable& summary = report.summary;
  summary.columns = {"campaign", "rows", "median_abs_error_pct", "p90_abs_error_pct",
                     "mean_signed_error_pct"};
  if (has_cv) {
    for (const char* c : {"in_sample_median_abs_error_pct", "in_sample_p90_abs_error_pct"})
      summary.columns.push_back(c);
  }
  auto add_summary = [&](const std::string& name, const std::vector<double>& e,
                         const std::vector<double>& e_in) {
    const ErrorStats s = error_stats(e);
    std::vector<Cell> row = {name, Cell::integer(s.rows), pct(s.median_abs), pct(s.p90_abs),
                             pct(s.mean_signed)};
    if (has_cv) {
      const ErrorStats si = error_stats(e_in);
      row.push_back(pct(si.median_abs));
      row.push_back(pct(si.p90_abs));
    }
    summary.add_row(std::move(row));
  };
  for (const auto& [campaign, e] : head.by_campaign) add_summary(campaign, e, ins.by_campaign.at(campaign));
  add_summary("all", head.all, ins.all);

  // Dispatcher ranking per cell.
  const std::vector<CellRanking> cells = rank_cells(runs, headline);
  const CellTotals t = add_cell_rankings(report, cells);

  // Margin errors: the uncertainty of a recommendation (recommend, plan).
  report.margins.columns = {"scope", "pairs", "median_abs_error_pct", "p90_abs_error_pct"};
  auto add_margins = [&](const std::string& scope, const MarginResidualSummary& m) {
    report.margins.add_row({scope, Cell::integer(m.pairs), pct(m.median_abs), pct(m.p90_abs)});
  };
  const MarginResidualSummary head_margin = margin_residual_summary(cells, runs, headline);
  add_margins(has_cv ? "out_of_sample" : "in_sample", head_margin);
  MarginResidualSummary in_margin;  // with --cv: the in-sample margins beside the out-of-sample ones
  if (has_cv) {
    in_margin = margin_residual_summary(rank_cells(runs, in_sample), runs, in_sample);
    add_margins("in_sample", in_margin);
  }

  // How often the 80% intervals hold the measured time, per novelty level.
  std::vector<std::pair<std::string, std::vector<IntervalCoverage>>> coverage_scopes = {
      {"in_sample", interval_coverage(in_intervals)}};
  if (has_cv)
    coverage_scopes.insert(coverage_scopes.begin(), {"out_of_sample", interval_coverage(oos_intervals)});
  if (!never_intervals.empty())
    coverage_scopes.push_back({"never_fitted", interval_coverage(never_intervals)});
  report.intervals = interval_coverage_table(coverage_scopes);
  // Out of sample, per fold and distance bucket: does the band hold as the held-out rows reach farther?
  report.by_distance.columns = {"scope",  "fold",         "distance_bucket", "rows",
                                "inside", "coverage_pct", "distance_min",    "distance_max"};
  for (const auto& [scope, intervals] : std::vector<std::pair<std::string, const std::vector<RowInterval>*>>{
           {"out_of_sample", &oos_intervals}, {"in_sample", &in_intervals}}) {
    if (scope == "out_of_sample" && !has_cv) continue;
    for (const DistanceCoverage& c : coverage_by_distance(runs, *intervals)) {
      report.by_distance.add_row({scope, c.fold, c.bucket, Cell::integer(c.rows), Cell::integer(c.inside),
                                  Cell::fixed(c.share * 100, 1), Cell::fixed(c.distance_min, 2),
                                  Cell::fixed(c.distance_max, 2)});
    }
  }
  add_never_fitted_rows(report, never_fitted, never_intervals);
  report.by_dimension = dimension_coverage_table({{"out_of_sample", has_cv ? &oos_intervals : nullptr},
                                                  {"in_sample", &in_intervals},
                                                  {"never_fitted", &never_intervals}});
  report.novelty_growth = novelty_growth_table(profile);
  report.parameters = parameters_table(profile);

  const ErrorStats all = error_stats(head.all);
  std::vector<std::pair<std::string, std::string>>& kv = report.headline;
  kv = {
      {"runs", runs_label + " (" + std::to_string(runs.size()) + " rows, " + std::to_string(head.all.size()) +
                   " predicted)"},
      {"profile", profile_label(profile)},
      {"errors", std::string(has_cv ? "out of sample (" + profile.cv_scheme + ")" : "in sample") +
                     ": median |error| " + format_fixed(all.median_abs * 100, 1) + "%, p90 " +
                     format_fixed(all.p90_abs * 100, 1) + "%, mean signed " +
                     format_fixed(all.mean_signed * 100, 1) + "%"},
  };
  if (!never_fitted.empty()) kv.push_back({"never-fitted rows", never_fitted_headline(never_fitted)});
  if (has_cv) {
    const ErrorStats si = error_stats(ins.all);
    kv.push_back({"in sample", "median |error| " + format_fixed(si.median_abs * 100, 1) + "%, p90 " +
                                   format_fixed(si.p90_abs * 100, 1) + "%"});
  }
  kv.push_back({"dispatcher winner", std::to_string(t.right) + " of " + std::to_string(cells.size()) +
                                         " cells right; " + std::to_string(t.decisive_right) + " of " +
                                         std::to_string(t.decisive) + " where the measured lead is >= 5%"});
  // Row pairs include one dispatcher's variants (a setting outside the cell key), whose order is run-to-run
  // noise; the dispatcher pairs measured >= 5% apart are the decisions a user books on.
  kv.push_back({"pairwise order",
                concat({std::to_string(t.agree), " of ", std::to_string(t.pairs), " row pairs agree; of ",
                        std::to_string(t.decisive_pairs), " dispatcher pairs measured >= ",
                        format_fixed(kDecisiveLead * 100, 0), "% apart ", std::to_string(t.decisive_agree),
                        " agree, ", std::to_string(t.near_ties), " predicted within ",
                        format_fixed(kNearTie * 100, 0), "% of each other (no call)"})});
  std::string m = std::string(has_cv ? "out of sample" : "in sample") +
                  ": predicted time ratio of two dispatchers on one cell off by median " +
                  format_fixed(head_margin.median_abs * 100, 1) + "%, p90 " +
                  format_fixed(head_margin.p90_abs * 100, 1) + "% (" + std::to_string(head_margin.pairs) +
                  " pairs)";
  if (has_cv) {
    m += "; in sample " + format_fixed(in_margin.median_abs * 100, 1) + "% / " +
         format_fixed(in_margin.p90_abs * 100, 1) + "%";
  }
  kv.push_back({"margin error", m});
  for (const auto& [scope, coverage] : coverage_scopes) {
    kv.push_back({scope == "in_sample"      ? "80% interval, in sample"
                  : scope == "never_fitted" ? "80% interval, never-fitted rows"
                                            : "80% interval, out of sample",
                  interval_coverage_line(coverage)});
  }
  if (!fit_objective.empty()) kv.push_back({"objective", fit_objective});
  return report;
}

std::string render_validation_text(const ValidationReport& report) {
  ResultTable brief;
  brief.columns = {"campaign",         "mb",       "vpp", "overlap", "dispatcher", "iter_s",
                   "predicted_iter_s", "error_pct"};
  if (report.out_of_sample) brief.columns.push_back("in_sample_error_pct");
  for (const auto& r : report.rows.rows) {
    std::vector<Cell> b;
    for (const std::string& c : brief.columns) b.push_back(r[report.rows.column(c)]);
    brief.add_row(std::move(b));
  }
  std::string content = render_key_values(report.headline) + "\nparameters:\n" +
                        render_text(report.parameters) + "\nper campaign:\n" + render_text(report.summary) +
                        "\nper row:\n" + render_text(brief) + "\ndispatcher ranking per cell:\n" +
                        render_text(report.cells);
  if (!report.misses.empty()) {
    content += "\nwrong winner where the measured lead is >= 5%:\n";
    for (const std::string& m : report.misses) content += "  " + m + "\n";
  }
  if (!report.by_distance.rows.empty()) {
    content += "\n80% interval per fold (held-out campaign) and distance from the fit (novelty units):\n" +
               render_text(report.by_distance);
  }
  if (!report.by_dimension.rows.empty()) {
    content += "\n80% interval per novelty dimension (a row new in several counts under each):\n" +
               render_text(report.by_dimension);
  }
  if (!report.never_fitted.rows.empty()) {
    ResultTable brief_never;
    brief_never.columns = {"scenario",       "group",          "iter_s", "predicted_iter_s", "error_pct",
                           "band_lo_iter_s", "band_hi_iter_s", "inside", "novelty_distance"};
    for (const auto& r : report.never_fitted.rows) {
      std::vector<Cell> b;
      for (const std::string& c : brief_never.columns) b.push_back(r[report.never_fitted.column(c)]);
      brief_never.add_row(std::move(b));
    }
    content += "\nnever-fitted rows (predicted by the fit; band measured without the row's system):\n" +
               render_text(brief_never);
  }
  if (!report.novelty_growth.rows.empty()) {
    content += "\nband growth per unit of distance (combined in quadrature with the in-family band):\n" +
               render_text(report.novelty_growth);
  }
  return content;
}

std::string render_validation_json(const ValidationReport& report, const OutputContext& context) {
  std::vector<std::pair<std::string, const ResultTable*>> tables = {
      {"rows", &report.rows},
      {"summary", &report.summary},
      {"cells", &report.cells},
      {"margins", &report.margins},
      {"parameters", &report.parameters},
      {"intervals", &report.intervals},
      {"intervals_by_distance", &report.by_distance},
      {"intervals_by_dimension", &report.by_dimension},
      {"novelty_growth", &report.novelty_growth}};
  // Only with --never-fitted: the output without it stays as it was.
  if (!report.never_fitted.rows.empty()) tables.push_back({"never_fitted", &report.never_fitted});
  return render_json(context, tables);
}

ResultTable interval_coverage_table(
    const std::vector<std::pair<std::string, std::vector<IntervalCoverage>>>& scopes) {
  ResultTable t;
  t.columns = {"scope", "novelty_level", "rows", "inside", "coverage_pct", "median_hi_lo"};
  for (const auto& [scope, coverage] : scopes) {
    for (const IntervalCoverage& c : coverage) {
      t.add_row({scope, c.level, Cell::integer(c.rows), Cell::integer(c.inside),
                 Cell::fixed(c.share * 100, 1), Cell::fixed(c.median_hi_lo, 3)});
    }
  }
  return t;
}

std::string interval_coverage_line(const std::vector<IntervalCoverage>& coverage) {
  std::string all;
  std::string levels;
  for (const IntervalCoverage& c : coverage) {
    const std::string share = format_fixed(c.share * 100, 0) + "%";
    if (c.level == "all") {
      all = share + " of " + std::to_string(c.rows) + " rows inside their 80% interval, median hi/lo " +
            format_fixed(c.median_hi_lo, 2);
    } else {
      levels += (levels.empty() ? "" : ", ") + c.level + " " + share + " of " + std::to_string(c.rows);
    }
  }
  return all + " (" + levels + ")";
}

}  // namespace moetwin
