// The uncertainty band of a prediction at its novelty, and the margin a dispatcher's lead must beat
// (fitted_profile.hpp: band_for, band_source, margin_uncertainty, margin_exceeds_uncertainty): the in-family
// quantiles (the fit's in-sample spread and a new campaign's, or an older profile's cross-validated ones)
// widened, in quadrature, by each new dimension's growth per unit of distance.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

double NoveltyBand::unit_width() const {
  return per_unit >= 0 ? per_unit : std::log1p(std::max(error_hi, 0.0));
}

namespace {

// The signed error quantiles of a prediction at `novelty`, and the band's source.
struct ErrorRange {
  double lo = -0.5;
  double hi = 0.5;
};
constexpr double kPriorError = 0.5;  // the unfitted twin's errors: the band where nothing was measured

// Log half-widths of a signed error range, per side (the low side's error kept above -95%).
double log_lo(double error_lo) {
  return std::max(0.0, -std::log1p(std::max(error_lo, -0.95)));
}
double log_hi(double error_hi) {
  return std::max(0.0, std::log1p(std::max(error_hi, 0.0)));
}

bool has_campaign_band(const FittedProfile& profile) {
  return profile.fitted && profile.campaign_band.per_unit >= 0 && profile.in_sample.rows > 0;
}

ErrorRange in_family_errors(const FittedProfile& profile) {
  if (has_campaign_band(profile)) {
    // The fit's own spread and a new campaign's, in quadrature per side in log space.
    const double c2 = profile.campaign_band.per_unit * profile.campaign_band.per_unit;
    const double lo = log_lo(profile.in_sample.signed_p10);
    const double hi = log_hi(profile.in_sample.signed_p90);
    return {std::expm1(-std::sqrt(lo * lo + c2)), std::expm1(std::sqrt(hi * hi + c2))};
  }
  if (profile.fitted && profile.cross_validated.rows > 0)
    return {profile.cross_validated.signed_p10, profile.cross_validated.signed_p90};
  return {-kPriorError, kPriorError};
}

// The squared log width the novel dimensions add (quadrature of per-unit growth x distance).
double novelty_width_squared(const FittedProfile& profile, const Novelty& novelty) {
  double w2 = 0;
  for (const NovelValue& v : novelty.novel) {
    const double u = growth_per_unit(profile, v.dimension);
    w2 += (u * v.distance) * (u * v.distance);
  }
  return w2;
}

// The floor of every dimension's growth: the larger of kGrowthFloorPerUnit and a new campaign's width.
double growth_floor(const FittedProfile& profile) {
  return std::max(kGrowthFloorPerUnit, has_campaign_band(profile) ? profile.campaign_band.per_unit : 0.0);
}

// A band's floor: kMeasuredFloorPerUnit where its rate was measured on enough held-out groups, else
// growth_floor.
double floor_for(const FittedProfile& profile, const NoveltyBand& band) {
  return band.groups >= kMinMeasuredGroups ? kMeasuredFloorPerUnit : growth_floor(profile);
}

ErrorRange novelty_errors(const FittedProfile& profile, const Novelty& novelty) {
  ErrorRange r = in_family_errors(profile);
  if (!profile.fitted) return r;
  const double w2 = novelty_width_squared(profile, novelty);
  if (!(w2 > 0)) return r;
  // Per side in log space: the in-family half-width and the novelty width in quadrature.
  const double lo = log_lo(r.lo);
  const double hi = log_hi(r.hi);
  r.lo = std::expm1(-std::sqrt(lo * lo + w2));
  r.hi = std::expm1(std::sqrt(hi * hi + w2));
  return r;
}

UncertaintyBand band_of(double predicted_s, const ErrorRange& e) {
  // measured = predicted / (1 + error): the largest error gives the smallest measured time. The low error
  // is not clipped at -95% here: a band that far out says so (novelty_errors keeps it above -100%).
  return {predicted_s / (1 + e.hi), predicted_s / (1 + std::max(e.lo, -0.9999))};
}

}  // namespace

double growth_per_unit(const FittedProfile& profile, NoveltyDimension dimension) {
  const auto it = profile.novelty_bands.find(to_string(dimension));
  if (it == profile.novelty_bands.end()) {
    // A dimension the profile predates: the profile's prior for unmeasured dimensions (its widest band
    // without rows), else the unfitted twin's +-50%.
    double prior = -1;
    for (const auto& [key, band] : profile.novelty_bands)
      if (band.rows == 0) prior = std::max(prior, band.unit_width());
    return prior > 0 ? std::max(prior, growth_floor(profile)) : kUnbandedPerUnit;
  }
  return std::max(it->second.unit_width(), floor_for(profile, it->second));
}

std::string growth_floor_reason(const FittedProfile& profile, NoveltyDimension dimension) {
  const auto it = profile.novelty_bands.find(to_string(dimension));
  if (it == profile.novelty_bands.end()) return "";
  const double floor = floor_for(profile, it->second);
  if (it->second.unit_width() >= floor) return "";
  const bool measured = it->second.groups >= kMinMeasuredGroups;
  const bool campaign = has_campaign_band(profile) && profile.campaign_band.per_unit > kGrowthFloorPerUnit;
  return concat(
      {"floor +-", format_fixed(std::expm1(floor) * 100, 1), "% per unit (",
       measured   ? "what a rate measured on held-out groups can resolve: one cell's run-to-run spread"
       : campaign ? "what a new campaign adds at distance 0: a value few held-out groups tried is at "
                    "least as uncertain as a new campaign of a family it covers"
                  : "the least growth of any dimension, kGrowthFloorPerUnit",
       "; the held-out rows measured ", format_fixed(std::expm1(it->second.unit_width()) * 100, 1), "%",
       it->second.groups > 0 ? concat({" on ", std::to_string(it->second.groups),
                                       it->second.groups == 1 ? " held-out group" : " held-out groups"})
                             : std::string(),
       ")"});
}

std::vector<std::string> band_composition(const FittedProfile& profile, const Novelty& novelty) {
  std::vector<std::string> out;
  const auto pct = [](double log_width) {
    return concat({"+-", format_fixed(std::expm1(log_width) * 100, 1), "%"});
  };
  const ErrorRange in = in_family_errors(profile);
  if (!profile.fitted) {
    out.push_back("unfitted profile: +-50%, the size of the unfitted twin's errors");
    return out;
  }
  if (has_campaign_band(profile)) {
    out.push_back(concat({"in-sample spread (", std::to_string(profile.in_sample.rows),
                          " rows): ", format_fixed(profile.in_sample.signed_p10 * 100, 1), "% / +",
                          format_fixed(profile.in_sample.signed_p90 * 100, 1), "%"}));
    out.push_back(concat({"a new campaign at distance 0: ", pct(profile.campaign_band.per_unit), " (",
                          profile.campaign_band.source, ")"}));
  }
  out.push_back(concat({"in family (in quadrature): ", format_fixed(in.lo * 100, 1), "% / +",
                        format_fixed(in.hi * 100, 1), "% error"}));
  for (const NovelValue& v : novelty.novel) {
    const double u = growth_per_unit(profile, v.dimension);
    const auto it = profile.novelty_bands.find(to_string(v.dimension));
    const std::string floor = growth_floor_reason(profile, v.dimension);
    out.push_back(
        concat({to_string(v.dimension), " ", v.value, ": ", pct(u), " per unit x ",
                format_fixed(v.distance, 2), " units = ", pct(u * v.distance), " (",
                it == profile.novelty_bands.end()
                    ? std::string("no band in the profile: its prior for unmeasured dimensions, or +-50%")
                : floor.empty() ? it->second.source
                                : floor,
                ")"}));
  }
  const ErrorRange at = novelty_errors(profile, novelty);
  out.push_back(
      concat({"combined (in quadrature, distance ", format_fixed(novelty.distance(), 2),
              "): measured time within -", format_fixed((1 - 1 / (1 + at.hi)) * 100, 1), "% / +",
              format_fixed((1 / (1 + std::max(at.lo, -0.9999)) - 1) * 100, 1), "% of the prediction"}));
  for (const NearestRow& r : novelty.nearest)
    out.push_back(concat({"nearest fitted row, ", format_fixed(r.distance, 2), " units: ", r.key}));
  return out;
}

UncertaintyBand band_for(const FittedProfile& profile, double predicted_s) {
  return band_of(predicted_s, in_family_errors(profile));
}

UncertaintyBand band_for(const FittedProfile& profile, double predicted_s, const Novelty& novelty) {
  return band_of(predicted_s, novelty_errors(profile, novelty));
}

std::string band_source(const FittedProfile& profile, const Novelty& novelty) {
  if (!profile.fitted) return "unfitted profile: +-50%, the size of the unfitted twin's errors";
  std::string s =
      has_campaign_band(profile) ? concat({"in-sample spread (", std::to_string(profile.in_sample.rows),
                                           " rows) and a new campaign's +-",
                                           format_fixed(std::expm1(profile.campaign_band.per_unit) * 100, 0),
                                           "% (", profile.campaign_band.source, ") in quadrature"})
      : profile.cross_validated.rows > 0 ? concat({"cross-validated (", profile.cv_scheme, ", ",
                                                   std::to_string(profile.cross_validated.rows), " rows)"})
                                         : std::string("no cross-validation in the profile: +-50%");
  std::string widened;
  for (const NovelValue& v : novelty.novel) {
    const auto it = profile.novelty_bands.find(to_string(v.dimension));
    widened += widened.empty() ? "" : "; ";
    widened +=
        concat({to_string(v.dimension), " ", v.value, " at distance ", format_fixed(v.distance, 1), ": "});
    if (it == profile.novelty_bands.end()) {
      widened +=
          concat({"+-", format_fixed(std::expm1(growth_per_unit(profile, v.dimension)) * 100, 0),
                  "% per unit (no band in the profile: its prior for unmeasured dimensions, or the unfitted "
                  "twin's +-50%)"});
    } else {
      const std::string floor = growth_floor_reason(profile, v.dimension);
      widened += concat({"+-", format_fixed(std::expm1(growth_per_unit(profile, v.dimension)) * 100, 0),
                         "% per unit, ", floor.empty() ? it->second.source : floor});
    }
  }
  return widened.empty() ? s
                         : concat({s, ", widened in quadrature (combined distance ",
                                   format_fixed(novelty.distance(), 1), ") for ", widened});
}

double margin_uncertainty(const FittedProfile& profile) {
  if (!profile.fitted || profile.cross_validated_margin.pairs == 0) return -1;
  return profile.cross_validated_margin.p90_abs;
}

bool margin_exceeds_uncertainty(const FittedProfile& profile, double winner_s, double runner_up_s) {
  return margin_exceeds_uncertainty(profile, winner_s, runner_up_s, Novelty{});
}

double margin_uncertainty(const FittedProfile& profile, const Novelty& novelty) {
  const double u = margin_uncertainty(profile);
  if (u < 0) return u;
  const ErrorRange in = in_family_errors(profile);
  const ErrorRange at = novelty_errors(profile, novelty);
  const double width_in = std::log((1 + in.hi) / (1 + std::max(in.lo, -0.95)));
  const double width_at = std::log((1 + at.hi) / (1 + std::max(at.lo, -0.95)));
  return width_in > 0 ? u * std::max(1.0, width_at / width_in) : u;
}

bool margin_exceeds_uncertainty(const FittedProfile& profile, double winner_s, double runner_up_s,
                                const Novelty& novelty) {
  const double u = margin_uncertainty(profile, novelty);
  if (u < 0) return band_for(profile, winner_s, novelty).hi_s < band_for(profile, runner_up_s, novelty).lo_s;
  return runner_up_s / winner_s - 1 > u;
}

}  // namespace moetwin
