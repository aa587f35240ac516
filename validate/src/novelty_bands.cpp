#include "moetwin/validate/novelty_bands.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {

namespace {

// The unfitted twin's errors: the prior where no kind of novelty was measured (fitted_profile.cpp).
constexpr double kUnmeasuredPrior = 0.5;

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
  std::map<std::string, NoveltyBand> bands;
  // Per level ("platform", "configuration"): the measured dimension with the widest band, the prior of
  // that level's unmeasured dimensions. A level with nothing measured takes the unfitted twin's +-50%:
  // held out by campaign, a new platform borrowing a new model's band covered 3 of 7 rows.
  std::map<std::string, std::string> widest;
  std::vector<std::string> unmeasured;
  std::map<std::string, int> unmeasured_rows;
  const auto level_of = [](NoveltyDimension d) {
    Novelty n;
    n.novel.push_back({d, "", ""});
    return n.level();
  };
  for (const NoveltyDimension d : banded_novelty_dimensions()) {
    std::vector<double> abs_errors;
    std::set<std::string> campaigns;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!(predicted[i] > 0) || !novelty[i].has(d)) continue;
      abs_errors.push_back(std::abs(predicted[i] / runs[i].iter_s - 1));
      campaigns.insert(runs[i].campaign);
    }
    const std::string key = to_string(d);
    const int n = static_cast<int>(abs_errors.size());
    if (n < kMinNoveltyBandRows) {
      unmeasured.push_back(key);
      unmeasured_rows[key] = n;
      continue;
    }
    // Symmetric: the held-out campaigns new in this dimension erred one way or the other; the next one new
    // in it may err the other way.
    const double p90 = percentile(abs_errors, 0.9);
    NoveltyBand b{n, -std::min(p90, 0.95), p90,
                  concat({"measured: p90 |error| of ", std::to_string(n), " held-out rows new in ", key, " (",
                          join(campaigns), ")"})};
    std::string& w = widest[level_of(d)];
    if (w.empty() || b.error_hi > bands.at(w).error_hi) w = key;
    bands[key] = std::move(b);
  }
  for (const NoveltyDimension d : banded_novelty_dimensions()) {
    const std::string key = to_string(d);
    if (std::find(unmeasured.begin(), unmeasured.end(), key) == unmeasured.end()) continue;
    const std::string level = level_of(d);
    const std::string why = concat({"prior: ", std::to_string(unmeasured_rows[key]), " held-out rows new in ",
                                    key, " (fewer than ", std::to_string(kMinNoveltyBandRows), "); "});
    const auto w = widest.find(level);
    if (w == widest.end()) {
      bands[key] = {0, -kUnmeasuredPrior, kUnmeasuredPrior,
                    concat({why, "+-50%, the unfitted twin's errors (no ", level, " novelty measured)"})};
    } else {
      const NoveltyBand& b = bands.at(w->second);
      bands[key] = {0, b.error_lo, b.error_hi,
                    concat({why, "the widest measured ", level, " band (", w->second, ") stands in"})};
    }
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
