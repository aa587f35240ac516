#include "moetwin/validate/novelty_bands.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

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

}  // namespace

std::vector<Novelty> held_out_novelty(const std::vector<LiveRun>& runs) {
  std::map<std::string, FitCoverage> others;  // campaign -> what the other campaigns' rows cover
  for (const LiveRun& r : runs) others.try_emplace(r.campaign);
  for (auto& [campaign, coverage] : others) {
    for (const LiveRun& r : runs) {
      if (r.campaign != campaign) coverage.add(r.scenario);
    }
  }
  std::vector<Novelty> out;
  out.reserve(runs.size());
  for (const LiveRun& r : runs) out.push_back(novelty_of(r.scenario, others.at(r.campaign)));
  return out;
}

std::map<std::string, NoveltyBand> novelty_bands(const std::vector<LiveRun>& runs,
                                                 const std::vector<double>& predicted,
                                                 const std::vector<Novelty>& novelty) {
  // The in-family half-widths in log space, as the profile's cross-validated quantiles give them (every
  // predicted row's error, fit_workflow.cpp).
  std::vector<double> errors;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (predicted[i] > 0) errors.push_back(predicted[i] / runs[i].iter_s - 1);
  }
  const ErrorStats in_family = error_stats(errors);
  const double w_lo = errors.empty() ? 0 : std::max(0.0, -std::log1p(std::max(in_family.signed_p10, -0.95)));
  const double w_hi = errors.empty() ? 0 : std::max(0.0, std::log1p(in_family.signed_p90));
  // Per held-out novel row: the log width beyond the in-family one its error needed (0 when inside it), and
  // that excess per unit of its combined distance (the row's new dimensions are taken to share one rate:
  // a campaign new in several at once cannot tell them apart).
  std::vector<double> excess(runs.size(), -1), rate(runs.size(), -1);
  std::vector<double> all_excess;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double d = novelty[i].distance();
    if (!(predicted[i] > 0) || !(d > 0)) continue;
    const double l = std::log(predicted[i] / runs[i].iter_s);
    const double side = l < 0 ? w_lo : w_hi;
    excess[i] = std::sqrt(std::max(0.0, l * l - side * side));
    rate[i] = excess[i] / d;
    all_excess.push_back(excess[i]);
  }
  std::map<std::string, NoveltyBand> bands;
  const auto band_of_rate = [](int rows, double per_unit, std::string source) {
    return NoveltyBand{rows, std::expm1(-per_unit), std::expm1(per_unit), std::move(source), per_unit};
  };
  double widest_measured = 0;
  std::vector<std::string> unmeasured;
  std::map<std::string, int> unmeasured_rows;
  for (const NoveltyDimension d : banded_novelty_dimensions()) {
    std::vector<double> rates, distances;
    std::set<std::string> campaigns;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (rate[i] < 0 || !novelty[i].has(d)) continue;
      rates.push_back(rate[i]);
      distances.push_back(novelty[i].distance());
      campaigns.insert(runs[i].campaign);
    }
    const std::string key = to_string(d);
    const int n = static_cast<int>(rates.size());
    if (n < kMinNoveltyBandRows) {
      unmeasured.push_back(key);
      unmeasured_rows[key] = n;
      continue;
    }
    // The 80th percentile: an 80% band covers a row exactly when its rate is at least the row's.
    const double u = percentile(rates, 0.8);
    widest_measured = std::max(widest_measured, u);
    bands[key] = band_of_rate(
        n, u,
        concat({"measured: 80th percentile of the excess log error per unit distance of ", std::to_string(n),
                " held-out rows new in ", key, " (", join(campaigns), "; combined distances ",
                format_fixed(*std::min_element(distances.begin(), distances.end()), 1), "-",
                format_fixed(*std::max_element(distances.begin(), distances.end()), 1), ")"}));
  }
  // Unmeasured dimensions: one unit of distance costs the largest of the in-family half-width, the 80th
  // percentile of the held-out novel rows' whole excess (as if one unit were as new as a whole novel
  // campaign), the widest measured rate and +-10% (kMinPriorPerUnit: a tight in-family band fitted on a few
  // campaigns says little about what is new); +-50% per unit where no error was measured at all. Held out by
  // campaign, a rate measured on one campaign new in one small way (DeepSeek-V3 beside Kimi-K2: 0.6 units,
  // no excess) gave the p5en campaign (3.2 units away) the in-family band, and 3 of its 7 rows fell outside.
  const double w0 = std::max(w_lo, w_hi);
  const double novel_excess =
      all_excess.size() >= static_cast<std::size_t>(kMinNoveltyBandRows) ? percentile(all_excess, 0.8) : 0.0;
  const double prior =
      errors.empty() ? kUnbandedPerUnit : std::max({w0, novel_excess, widest_measured, kMinPriorPerUnit});
  for (const std::string& key : unmeasured) {
    const std::string why = concat({"prior: ", std::to_string(unmeasured_rows[key]), " held-out rows new in ",
                                    key, " (fewer than ", std::to_string(kMinNoveltyBandRows), "); "});
    bands[key] = band_of_rate(
        0, prior,
        errors.empty()
            ? concat({why, "+-50% per unit, the unfitted twin's errors (no error measured)"})
            : concat({why, "conservative rule: one unit costs the largest of the in-family half-width (",
                      format_fixed(std::expm1(w0) * 100, 1), "%), the 80th-percentile excess of the ",
                      std::to_string(all_excess.size()), " held-out novel rows at their whole distance (",
                      format_fixed(std::expm1(novel_excess) * 100, 1), "%) and the widest measured rate (",
                      format_fixed(std::expm1(widest_measured) * 100, 1), "%), at least 10%"}));
  }
  return bands;
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

std::vector<RowInterval> out_of_sample_intervals(const std::vector<LiveRun>& runs,
                                                 const std::vector<double>& predicted,
                                                 const FittedProfile& profile) {
  const std::vector<Novelty> novelty = held_out_novelty(runs);
  std::map<std::string, FittedProfile> without;  // campaign -> the profile's bands without its rows
  for (const LiveRun& r : runs) {
    if (without.count(r.campaign)) continue;
    std::vector<LiveRun> rest;
    std::vector<double> rest_predicted;
    std::vector<Novelty> rest_novelty;
    std::vector<double> errors;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].campaign == r.campaign) continue;
      rest.push_back(runs[i]);
      rest_predicted.push_back(predicted[i]);
      rest_novelty.push_back(novelty[i]);
      if (predicted[i] > 0) errors.push_back(predicted[i] / runs[i].iter_s - 1);
    }
    FittedProfile p = profile;
    const ErrorStats s = error_stats(errors);
    p.cross_validated = {s.rows, s.median_abs, s.p90_abs, s.signed_p10, s.signed_p90};
    p.novelty_bands = novelty_bands(rest, rest_predicted, rest_novelty);
    without.emplace(r.campaign, std::move(p));
  }
  std::vector<RowInterval> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    out.push_back(interval(predicted[i], runs[i].iter_s, without.at(runs[i].campaign), novelty[i]));
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
  for (std::size_t i = 0; i < runs.size() && i < intervals.size(); ++i) {
    if (intervals[i].level.empty()) continue;
    add(runs[i].campaign, intervals[i]);
  }
  for (std::size_t i = 0; i < runs.size() && i < intervals.size(); ++i) {
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

}  // namespace moetwin
