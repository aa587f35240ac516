#include "moetwin/validate/novelty_bands.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {

namespace {

// The least growth per unit of distance of a dimension no held-out campaign measured: ln 1.1, +-10% per
// unit. Held out by campaign on synthetic rows with a +-5% in-family band, the in-family width alone
// gave a campaign 4 units away (errors -20..-28%) +-23% and left 4 of its 5 rows outside.
constexpr double kMinPriorPerUnit = 0.09531017980432493;

std::string join(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

// Log half-widths per side of a residual summary's signed p10 / p90 (the low side kept above -95%).
struct Spread {
  double lo = 0;
  double hi = 0;
  int rows = 0;
  double widest() const { return std::max(lo, hi); }
};
Spread spread_of(const ResidualSummary& r) {
  if (r.rows == 0) return {};
  return {std::max(0.0, -std::log1p(std::max(r.signed_p10, -0.95))), std::max(0.0, std::log1p(r.signed_p90)),
          r.rows};
}

// A held-out row as its fold saw it.
struct HeldOut {
  std::size_t row = 0;
  std::string campaign;
  double log_error = 0;  // ln(predicted / measured) at the fold's parameters
  double spread = 0;     // the fold's in-sample log half-width on the side of log_error's sign
  double distance = 0;   // from the fold's training rows (held_out_novelty)
  const Novelty* novelty = nullptr;
};

// Percentile q of `values` weighted by `weights` (> 0): linear interpolation between the sorted values,
// value k at position (W_k - w_k) / (W - w_last) (W_k the weight up to and including value k, W the
// whole): with equal weights, percentile()'s order statistics exactly. Each held-out campaign weighing
// alike keeps one campaign of many rows from setting a band alone.
double weighted_percentile(std::vector<std::pair<double, double>> value_weight, double q) {
  if (value_weight.empty()) return 0;
  std::sort(value_weight.begin(), value_weight.end());
  double total = 0;
  for (const auto& [v, w] : value_weight) total += w;
  const double span = total - value_weight.back().second;
  if (!(span > 0)) return value_weight.front().first;
  const double at = std::clamp(q, 0.0, 1.0);
  double before = 0;  // W_k - w_k
  for (std::size_t k = 0; k + 1 < value_weight.size(); ++k) {
    const double p0 = before / span;
    before += value_weight[k].second;
    const double p1 = before / span;
    if (at <= p1) {
      const double f = p1 > p0 ? (at - p0) / (p1 - p0) : 1.0;
      return value_weight[k].first + (value_weight[k + 1].first - value_weight[k].first) * f;
    }
  }
  return value_weight.back().first;
}

// The weighted 80th percentile of `values` (one per row of `rows`), each campaign's rows together weighing 1.
double campaign_weighted_p80(const std::vector<const HeldOut*>& rows, const std::vector<double>& values) {
  std::map<std::string, int> per_campaign;
  for (const HeldOut* h : rows) ++per_campaign[h->campaign];
  std::vector<std::pair<double, double>> vw;
  for (std::size_t k = 0; k < rows.size(); ++k)
    vw.emplace_back(values[k], 1.0 / per_campaign[rows[k]->campaign]);
  return weighted_percentile(std::move(vw), 0.8);
}

NoveltyBand band_of_width(int rows, double per_unit, std::string source) {
  return NoveltyBand{rows, std::expm1(-per_unit), std::expm1(per_unit), std::move(source), per_unit};
}

std::string distance_range(const std::vector<const HeldOut*>& rows) {
  double lo = rows.front()->distance, hi = lo;
  for (const HeldOut* h : rows) {
    lo = std::min(lo, h->distance);
    hi = std::max(hi, h->distance);
  }
  return concat({format_fixed(lo, 1), "-", format_fixed(hi, 1)});
}

// ", raised to the floor ..." for a rate measured below its floor, with the floor's reason.
std::string floor_note(double floor, bool enough_groups) {
  return concat({", raised to the floor ", format_fixed(std::expm1(floor) * 100, 1), "% (",
                 enough_groups
                     ? std::string("what a measured rate can resolve, one cell's run-to-run spread: no new "
                                   "dimension is free)")
                     : concat({"measured on fewer than ", std::to_string(kMinMeasuredGroups),
                               " held-out groups: what a new campaign adds at distance 0, at least "
                               "10%)"})});
}

}  // namespace

std::vector<Novelty> held_out_novelty(const std::vector<LiveRun>& runs) {
  std::map<std::string, FitCoverage> others;  // campaign -> what the other campaigns' rows cover
  for (const LiveRun& r : runs) others.try_emplace(r.campaign);
  for (auto& [campaign, coverage] : others) {
    for (const LiveRun& r : runs) {
      if (r.campaign != campaign) coverage.add(r.scenario, r.campaign);
    }
  }
  std::vector<Novelty> out;
  out.reserve(runs.size());
  for (const LiveRun& r : runs) out.push_back(novelty_of(r.scenario, others.at(r.campaign)));
  return out;
}

ResidualSummary fold_spread(const std::vector<LiveRun>& runs, const std::vector<double>& fold_predicted,
                            const std::string& held_out) {
  std::vector<double> errors;
  for (std::size_t i = 0; i < runs.size() && i < fold_predicted.size(); ++i) {
    if (runs[i].campaign == held_out || !(fold_predicted[i] > 0)) continue;
    errors.push_back(fold_predicted[i] / runs[i].iter_s - 1);
  }
  const ErrorStats s = error_stats(errors);
  return {s.rows, s.median_abs, s.p90_abs, s.signed_p10, s.signed_p90};
}

MeasuredBands measure_bands(const std::vector<LiveRun>& runs, const FoldPredictions& folds,
                            const std::vector<Novelty>& novelty, const ResidualSummary& spread,
                            const std::string& skip, const std::vector<NeverFittedRow>& never_fitted) {
  // Every held-out row with its fold's own spread.
  std::vector<HeldOut> held;
  for (const auto& [campaign, predicted] : folds) {
    if (campaign == skip) continue;
    const Spread own = spread_of(fold_spread(runs, predicted, campaign));
    if (own.rows == 0) continue;
    for (std::size_t i = 0; i < runs.size() && i < predicted.size(); ++i) {
      if (runs[i].campaign != campaign || !(predicted[i] > 0)) continue;
      const double l = std::log(predicted[i] / runs[i].iter_s);
      held.push_back({i, campaign, l, l < 0 ? own.lo : own.hi, novelty[i].distance(), &novelty[i]});
    }
  }
  // Rows no fit has seen, predicted by the whole fit: their group (a system) is one more held-out
  // "campaign", their spread the whole fit's (never_fitted_rows).
  for (const NeverFittedRow& r : never_fitted) {
    if (r.group == skip || !(r.predicted_s > 0) || !(r.measured_s > 0)) continue;
    const double l = std::log(r.predicted_s / r.measured_s);
    held.push_back({0, r.group, l, l < 0 ? r.spread_lo : r.spread_hi, r.novelty.distance(), &r.novelty});
  }
  const Spread fit = spread_of(spread);
  MeasuredBands out;

  // A new campaign at distance 0: its rows' log error beyond their fold's spread.
  std::vector<const HeldOut*> same;
  std::vector<double> same_excess;
  std::set<std::string> same_campaigns;
  for (const HeldOut& h : held) {
    if (h.distance > 0) continue;
    same.push_back(&h);
    same_excess.push_back(std::sqrt(std::max(0.0, h.log_error * h.log_error - h.spread * h.spread)));
    same_campaigns.insert(h.campaign);
  }
  const int n_same = static_cast<int>(same.size());
  double c = 0;
  if (n_same >= kMinNoveltyBandRows) {
    c = campaign_weighted_p80(same, same_excess);
    out.campaign = band_of_width(
        n_same, c,
        concat({"measured: 80th percentile, each campaign weighing alike, of the log error beyond its fold's "
                "in-sample spread of ",
                std::to_string(n_same), " held-out rows at distance 0 (",
                std::to_string(same_campaigns.size()), " campaigns)"}));
  } else {
    // Nothing at distance 0 to measure: a new campaign is taken to add as much as the fit's own spread
    // (doubling its variance); the unfitted twin's +-50% without one.
    c = fit.rows > 0 ? fit.widest() : kUnbandedPerUnit;
    out.campaign =
        band_of_width(0, c,
                      concat({"prior: ", std::to_string(n_same), " held-out rows at distance 0 (fewer than ",
                              std::to_string(kMinNoveltyBandRows), "); ",
                              fit.rows > 0 ? "a new campaign adds the fit's own in-sample half-width"
                                           : "+-50%, the unfitted twin's errors (no error measured)"}));
  }

  // Growth per unit of distance: the novel rows' log error beyond their fold's band at distance 0.
  std::vector<const HeldOut*> novel;
  std::vector<double> novel_excess, novel_rate;
  for (const HeldOut& h : held) {
    if (!(h.distance > 0)) continue;
    const double x = std::sqrt(std::max(0.0, h.log_error * h.log_error - h.spread * h.spread - c * c));
    novel.push_back(&h);
    novel_excess.push_back(x);
    novel_rate.push_back(x / h.distance);
  }
  double widest_measured = 0;
  std::vector<std::string> unmeasured;
  std::map<std::string, int> unmeasured_rows;
  for (const NoveltyDimension d : banded_novelty_dimensions()) {
    std::vector<const HeldOut*> rows;
    std::vector<double> rates;
    std::set<std::string> campaigns;
    for (std::size_t k = 0; k < novel.size(); ++k) {
      if (!novel[k]->novelty->has(d)) continue;
      rows.push_back(novel[k]);
      rates.push_back(novel_rate[k]);
      campaigns.insert(novel[k]->campaign);
    }
    const std::string key = to_string(d);
    const int n = static_cast<int>(rows.size());
    if (n < kMinNoveltyBandRows) {
      unmeasured.push_back(key);
      unmeasured_rows[key] = n;
      continue;
    }
    // The weighted 80th percentile of the rows' rates, each held-out group (a campaign, or a system of
    // never-fitted rows) weighing alike: the rate an 80% band needs over groups like these (an 80% band
    // covers a row exactly when its rate is at least the row's). Measured on kMinMeasuredGroups held-out
    // groups or more (1: any measurement), the rate stands down to what the measurement resolves
    // (kMeasuredFloorPerUnit), the source naming its groups and how many; fewer, the floor of a new
    // campaign, at least 10%. (Session 47: a rate measured on three or more groups below the 10% floor held
    // 55% of NVIDIA's dense rows, GB200's 20-31% slow, and the floor stayed; session 48, GEMM rates from the
    // TE guide: measured 0.0-0.7% on >= 4 systems, the floor held 100% in bands 2.06x wide, so 3 groups
    // stood; session 50: the NVLink domain's rate measured on one NVL72 system held the other's rows at 80%
    // and 97%, so one group stands. fitted_profile.hpp kMinMeasuredGroups.)
    const double measured = campaign_weighted_p80(rows, rates);
    const bool enough_groups = static_cast<int>(campaigns.size()) >= kMinMeasuredGroups;
    const double floor = enough_groups ? kMeasuredFloorPerUnit : std::max(kMinPriorPerUnit, c);
    const double u = std::max(measured, floor);
    widest_measured = std::max(widest_measured, measured);
    const std::string raised = measured >= floor ? std::string() : floor_note(floor, enough_groups);
    out.growth[key] = band_of_width(
        n, u,
        concat({"measured: the 80th percentile, each held-out group (campaign or system) weighing alike, of "
                "the rows' log error beyond their fold's band at distance 0 per unit distance, of ",
                std::to_string(n), " held-out rows new in ", key, " on ", std::to_string(campaigns.size()),
                campaigns.size() == 1 ? " held-out group (" : " held-out groups (", join(campaigns),
                "; distances ", distance_range(rows), "): ", format_fixed(std::expm1(measured) * 100, 1), "%",
                raised}));
    out.growth[key].groups = static_cast<int>(campaigns.size());
  }
  // Unmeasured dimensions: one unit of distance costs the largest of the in-family half-width at distance
  // 0 (the fit's spread and a new campaign's), the 80th percentile of the novel rows' whole excess (as if
  // one unit were as new as a whole novel campaign), the widest measured rate and +-10%
  // (kMinPriorPerUnit: a tight in-family band fitted on a few campaigns says little about what is new);
  // +-50% per unit where no error was measured at all. Held out by campaign, a rate measured on one
  // campaign new in one small way (DeepSeek-V3 beside Kimi-K2: 0.6 units, no excess) gave the p5en
  // campaign (3.2 units away) the in-family band, and 3 of its 7 rows fell outside.
  const double w0 = std::sqrt(fit.widest() * fit.widest() + c * c);
  const double whole = novel.size() >= static_cast<std::size_t>(kMinNoveltyBandRows)
                           ? campaign_weighted_p80(novel, novel_excess)
                           : 0.0;
  const bool measured_any = fit.rows > 0 && !held.empty();
  const double prior =
      measured_any ? std::max({w0, whole, widest_measured, kMinPriorPerUnit}) : kUnbandedPerUnit;
  for (const std::string& key : unmeasured) {
    const std::string why = concat({"prior: ", std::to_string(unmeasured_rows[key]), " held-out rows new in ",
                                    key, " (fewer than ", std::to_string(kMinNoveltyBandRows), "); "});
    out.growth[key] = band_of_width(
        0, prior,
        !measured_any
            ? concat({why, "+-50% per unit, the unfitted twin's errors (no error measured)"})
            : concat({why,
                      "conservative rule: one unit costs the largest of the in-family half-width at "
                      "distance 0 (",
                      format_fixed(std::expm1(w0) * 100, 1), "%), the 80th-percentile excess of the ",
                      std::to_string(novel.size()), " held-out novel rows at their whole distance (",
                      format_fixed(std::expm1(whole) * 100, 1), "%) and the widest measured rate (",
                      format_fixed(std::expm1(widest_measured) * 100, 1), "%), at least 10%"}));
  }
  return out;
}

namespace {

RowInterval interval(double predicted_s, double measured_s, const FittedProfile& profile, const Novelty& n) {
  RowInterval r;
  if (!(predicted_s > 0)) return r;
  const UncertaintyBand b = band_for(profile, predicted_s, n);
  r.lo_s = b.lo_s;
  r.hi_s = b.hi_s;
  r.inside = measured_s >= b.lo_s && measured_s <= b.hi_s;
  r.level = n.level();
  r.novelty = n.summary();
  r.distance = n.distance();
  for (const NoveltyDimension d : banded_novelty_dimensions())
    if (n.has(d)) r.dimensions.push_back(d);
  r.predicted_s = predicted_s;
  r.measured_s = measured_s;
  return r;
}

}  // namespace

std::vector<RowInterval> in_sample_intervals(const std::vector<LiveRun>& runs,
                                             const std::vector<double>& predicted,
                                             const FittedProfile& profile) {
  std::vector<RowInterval> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    out.push_back(interval(predicted[i], runs[i].iter_s, profile, novelty_of(runs[i].scenario, profile)));
  return out;
}

std::vector<NeverFittedRow> never_fitted_rows(const std::vector<LiveRun>& runs,
                                              const std::vector<double>& predicted,
                                              const FittedProfile& profile) {
  const Spread fit = spread_of(profile.in_sample);
  std::vector<NeverFittedRow> out;
  for (std::size_t i = 0; i < runs.size() && i < predicted.size(); ++i) {
    const LiveRun& r = runs[i];
    out.push_back({r.scenario.name, "system " + r.scenario.instance.name, predicted[i], r.iter_s, fit.lo,
                   fit.hi, novelty_of(r.scenario, profile)});
  }
  return out;
}

std::vector<RowInterval> never_fitted_intervals(const std::vector<LiveRun>& runs,
                                                const FoldPredictions& folds,
                                                const std::vector<NeverFittedRow>& never_fitted,
                                                const FittedProfile& profile) {
  const std::vector<Novelty> novelty = held_out_novelty(runs);
  std::map<std::string, FittedProfile> group_profile;  // group -> the band measured without it
  for (const NeverFittedRow& r : never_fitted) {
    if (group_profile.count(r.group) > 0) continue;
    FittedProfile p = profile;
    MeasuredBands b = measure_bands(runs, folds, novelty, p.in_sample, r.group, never_fitted);
    p.campaign_band = std::move(b.campaign);
    p.novelty_bands = std::move(b.growth);
    group_profile.emplace(r.group, std::move(p));
  }
  std::vector<RowInterval> out;
  for (const NeverFittedRow& r : never_fitted)
    out.push_back(interval(r.predicted_s, r.measured_s, group_profile.at(r.group), r.novelty));
  return out;
}

std::vector<RowInterval> out_of_sample_intervals(const std::vector<LiveRun>& runs,
                                                 const FoldPredictions& folds, const FittedProfile& profile,
                                                 const std::vector<NeverFittedRow>& never_fitted) {
  const std::vector<Novelty> novelty = held_out_novelty(runs);
  std::map<std::string, FittedProfile> fold_profile;  // campaign -> its fold's band
  for (const auto& [campaign, predicted] : folds) {
    FittedProfile p = profile;
    p.in_sample = fold_spread(runs, predicted, campaign);
    MeasuredBands b = measure_bands(runs, folds, novelty, p.in_sample, campaign, never_fitted);
    p.campaign_band = std::move(b.campaign);
    p.novelty_bands = std::move(b.growth);
    fold_profile.emplace(campaign, std::move(p));
  }
  std::vector<RowInterval> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto it = folds.find(runs[i].campaign);
    if (it == folds.end() || i >= it->second.size()) {
      out.emplace_back();
      continue;
    }
    out.push_back(interval(it->second[i], runs[i].iter_s, fold_profile.at(runs[i].campaign), novelty[i]));
  }
  return out;
}

std::vector<IntervalCoverage> interval_coverage(const std::vector<RowInterval>& intervals) {
  std::vector<IntervalCoverage> out;
  for (const char* level : {"covered", "configuration", "platform", "all"}) {
    IntervalCoverage c;
    c.level = level;
    std::vector<double> ratios;
    for (const RowInterval& r : intervals) {
      if (r.level.empty() || (c.level != "all" && r.level != c.level)) continue;
      ++c.rows;
      c.inside += r.inside ? 1 : 0;
      ratios.push_back(r.hi_s / r.lo_s);
    }
    if (c.rows == 0) continue;
    c.share = static_cast<double>(c.inside) / c.rows;
    c.median_hi_lo = percentile(ratios, 0.5);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace moetwin

namespace moetwin {

std::string distance_bucket(double distance) {
  if (!(distance > 0)) return "0";
  if (distance <= 1) return "(0,1]";
  if (distance <= 2) return "(1,2]";
  if (distance <= 4) return "(2,4]";
  return ">4";
}

std::vector<DistanceCoverage> coverage_by_distance(const std::vector<LiveRun>& runs,
                                                   const std::vector<RowInterval>& intervals) {
  std::vector<std::string> fold_of_row;
  for (const LiveRun& r : runs) fold_of_row.push_back(r.campaign);
  return coverage_by_distance(fold_of_row, intervals);
}

std::vector<DistanceCoverage> coverage_by_distance(const std::vector<std::string>& fold_of_row,
                                                   const std::vector<RowInterval>& intervals) {
  std::vector<DistanceCoverage> out;
  const auto add = [&out](const std::string& fold, const RowInterval& r) {
    const std::string bucket = distance_bucket(r.distance);
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const DistanceCoverage& c) { return c.fold == fold && c.bucket == bucket; });
    if (it == out.end()) {
      out.push_back({fold, bucket, 0, 0, 0, r.distance, r.distance});
      it = out.end() - 1;
    }
    ++it->rows;
    it->inside += r.inside ? 1 : 0;
    it->share = static_cast<double>(it->inside) / it->rows;
    it->distance_min = std::min(it->distance_min, r.distance);
    it->distance_max = std::max(it->distance_max, r.distance);
  };
  for (std::size_t i = 0; i < fold_of_row.size() && i < intervals.size(); ++i) {
    if (intervals[i].level.empty()) continue;
    add(fold_of_row[i], intervals[i]);
  }
  for (std::size_t i = 0; i < fold_of_row.size() && i < intervals.size(); ++i) {
    if (intervals[i].level.empty()) continue;
    add("all", intervals[i]);
  }
  // Folds in first-row order, each fold's buckets by distance; "all" last, by distance.
  std::stable_sort(out.begin(), out.end(), [](const DistanceCoverage& a, const DistanceCoverage& b) {
    if ((a.fold == "all") != (b.fold == "all")) return b.fold == "all";
    if (a.fold == "all") return a.distance_min < b.distance_min;
    return false;
  });
  return out;
}

std::vector<DimensionCoverage> coverage_by_dimension(const std::vector<RowInterval>& intervals) {
  struct Acc {
    DimensionCoverage c;
    std::vector<double> ratios, errors;
  };
  std::vector<std::string> keys = {"none"};
  for (const NoveltyDimension d : banded_novelty_dimensions()) keys.emplace_back(to_string(d));
  std::map<std::string, Acc> acc;
  const auto add = [&acc](const std::string& key, const RowInterval& r) {
    Acc& a = acc[key];
    if (a.c.rows == 0) a.c.distance_min = a.c.distance_max = r.distance;
    ++a.c.rows;
    a.c.inside += r.inside ? 1 : 0;
    a.c.distance_min = std::min(a.c.distance_min, r.distance);
    a.c.distance_max = std::max(a.c.distance_max, r.distance);
    a.ratios.push_back(r.hi_s / r.lo_s);
    a.errors.push_back(std::abs(r.predicted_s / r.measured_s - 1));
  };
  for (const RowInterval& r : intervals) {
    if (r.level.empty() || !(r.measured_s > 0)) continue;
    if (r.dimensions.empty()) add("none", r);
    for (const NoveltyDimension d : r.dimensions) add(to_string(d), r);
  }
  std::vector<DimensionCoverage> out;
  for (const std::string& key : keys) {
    const auto it = acc.find(key);
    if (it == acc.end()) continue;
    DimensionCoverage c = it->second.c;
    c.dimension = key;
    c.share = static_cast<double>(c.inside) / c.rows;
    c.median_hi_lo = percentile(it->second.ratios, 0.5);
    c.median_abs_error = percentile(it->second.errors, 0.5);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace moetwin
