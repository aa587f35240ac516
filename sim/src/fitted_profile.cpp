#include "moetwin/sim/fitted_profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "moetwin/catalog/strict_toml.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/sim/dispatcher_moe_cost.hpp"

#ifndef MOETWIN_DEFAULT_PROFILE
#define MOETWIN_DEFAULT_PROFILE "calibrate/profiles/live-fit.toml"
#endif

namespace moetwin {

namespace {

constexpr int kProfileSchemaVersion = 1;

// Bounds: wide enough that the fit is free to find the answer, narrow enough that a parameter cannot
// absorb a missing mechanism by going unphysical.
//  - compute_time_scale 0.7-4: nothing runs faster than ~1.4x the catalog efficiencies (which are
//    already below peak); 4x (~15-20% of peak) is the worst MoE training MFU reported for small shapes.
//  - launch_s 2-80 us: CUDA's back-to-back launch floor (~2-4 us, calibrate launch benchmark on H200)
//    up to Python-heavy eager ops with autograd bookkeeping (PyTorch profiler: 20-60 us per op).
//  - collective_time_scale / a2a_time_scale 0.7-10: NCCL over EFA reaching 1.4x the closed form would
//    beat line rate; 10x covers small-message latency-bound collectives on a congested fabric.
const std::vector<FreeParameter>& parameter_table() {
  static const std::vector<FreeParameter> table = {
      {"compute_time_scale", "x", 0.7, 4.0, "GPU kernel time over its roofline time (catalog efficiencies)"},
      {"launch_s", "s", 2e-6, 80e-6, "host time per forward kernel launch (backward: half)"},
      {"collective_time_scale", "x", 0.7, 10.0,
       "NCCL TP/PP/DP collective time over the topology closed form"},
      {"a2a_time_scale", "x", 0.7, 10.0, "dispatch/combine A2A time over the dispatcher model"},
  };
  return table;
}

double* field(SimProfile& p, int index) {
  switch (index) {
    case 0:
      return &p.compute_time_scale;
    case 1:
      return &p.launch_s;
    case 2:
      return &p.collective_time_scale;
    case 3:
      return &p.a2a_time_scale;
    default:
      throw std::logic_error("free parameter index out of range");
  }
}

ResidualSummary read_residuals(StrictTable t) {
  ResidualSummary r;
  r.rows = t.int32("rows", 0, 1000000);
  r.median_abs = t.number("median_abs_error", 0, 100);
  r.p90_abs = t.number("p90_abs_error", 0, 100);
  r.signed_p10 = t.number("signed_error_p10", -1, 100);
  r.signed_p90 = t.number("signed_error_p90", -1, 100);
  if (r.signed_p10 > r.signed_p90) {
    throw InputError(t.where("signed_error_p10"), t.name("signed_error_p10"), format_exact(r.signed_p10),
                     "<= signed_error_p90 (" + format_exact(r.signed_p90) + ")");
  }
  t.finish();
  return r;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string residual_toml(const std::string& name, const std::string& comment, const ResidualSummary& r) {
  return "\n[" + name + "]  # " + comment + "\nrows = " + std::to_string(r.rows) +
         "\nmedian_abs_error = " + format_exact(r.median_abs) +
         "\np90_abs_error = " + format_exact(r.p90_abs) +
         "\nsigned_error_p10 = " + format_exact(r.signed_p10) +
         "\nsigned_error_p90 = " + format_exact(r.signed_p90) + "\n";
}

}  // namespace

const std::vector<FreeParameter>& free_parameters() {
  return parameter_table();
}

int free_parameter_index(const std::string& key) {
  const auto& t = parameter_table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

double get_free_parameter(const SimProfile& profile, int index) {
  SimProfile copy = profile;
  return *field(copy, index);
}

void set_free_parameter(SimProfile& profile, int index, double value) {
  *field(profile, index) = value;
  if (index == 1) profile.backward_launch_s = value * kBackwardLaunchRatio;
}

FittedProfile load_fitted_profile(const std::string& path) {
  const toml::table root_table = parse_toml(read_text_file(path), path);
  StrictTable root(root_table, path, "");
  FittedProfile p;
  p.path = path;
  p.fitted = true;
  p.schema_version = root.int32("schema_version", kProfileSchemaVersion, kProfileSchemaVersion);
  p.fitted_at = root.string("fitted_at");
  p.fitted_on = root.string("fitted_on");
  p.git_revision = root.string("git_revision");
  p.cv_scheme = root.string("cv_scheme");
  {
    std::optional<StrictTable> params = root.table("parameters");
    if (!params) throw InputError({path, 0}, "parameters", "", "a [parameters] table");
    const auto& t = parameter_table();
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!params->has(t[i].key)) continue;
      set_free_parameter(p.sim, static_cast<int>(i), params->number(t[i].key, t[i].lo, t[i].hi));
      p.fitted_keys.push_back(t[i].key);
    }
    params->finish();
  }
  std::optional<StrictTable> in_sample = root.table("in_sample");
  std::optional<StrictTable> cv = root.table("cross_validated");
  if (!in_sample) throw InputError({path, 0}, "in_sample", "", "an [in_sample] table");
  if (!cv) throw InputError({path, 0}, "cross_validated", "", "a [cross_validated] table");
  p.in_sample = read_residuals(std::move(*in_sample));
  p.cross_validated = read_residuals(std::move(*cv));
  root.finish();
  return p;
}

std::string default_fitted_profile_path() {
  if (const char* env = std::getenv("MOETWIN_PROFILE"); env != nullptr && *env != '\0') return env;
  return MOETWIN_DEFAULT_PROFILE;
}

FittedProfile resolve_fitted_profile(const std::string& spec) {
  if (spec == "none") return FittedProfile{};
  if (spec.empty()) {
    const std::string path = default_fitted_profile_path();
    if (!std::filesystem::exists(path)) return FittedProfile{};
    return load_fitted_profile(path);
  }
  if (!std::filesystem::exists(spec))
    throw InputError({"", 0}, "--profile", spec, "an existing profile file or none");
  return load_fitted_profile(spec);
}

std::string fitted_profile_toml(const FittedProfile& p) {
  std::string s =
      "# moetwin fitted profile (written by `moetwin validate --fit`; format: sim/include/moetwin/sim/"
      "fitted_profile.hpp).\n# The twin's free parameters fitted against measured iteration times, and the "
      "residuals that\n# give every prediction its uncertainty band.\n";
  s += "schema_version = " + std::to_string(kProfileSchemaVersion) + "\n";
  s += "fitted_at = " + quoted(p.fitted_at) + "\n";
  s += "fitted_on = " + quoted(p.fitted_on) + "\n";
  s += "git_revision = " + quoted(p.git_revision) + "\n";
  s += "cv_scheme = " + quoted(p.cv_scheme) + "\n";
  s += "\n[parameters]\n";
  const auto& t = parameter_table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (std::find(p.fitted_keys.begin(), p.fitted_keys.end(), t[i].key) == p.fitted_keys.end()) continue;
    s += t[i].key + " = " + format_exact(get_free_parameter(p.sim, static_cast<int>(i))) + "  # " +
         t[i].unit + ", bounds [" + format_exact(t[i].lo) + ", " + format_exact(t[i].hi) +
         "]: " + t[i].meaning + "\n";
  }
  s += residual_toml("in_sample", "relative error (predicted - measured) / measured, fitted on every row",
                     p.in_sample);
  s += residual_toml("cross_validated", "out of sample: each row predicted by the fit without its group",
                     p.cross_validated);
  return s;
}

PredictOptions predict_options_for(const Scenario& scenario, const FittedProfile& profile) {
  PredictOptions o;
  o.profile = profile.sim;
  o.seams.moe = std::make_shared<DispatcherMoeCost>(scenario);
  return o;
}

UncertaintyBand band_for(const FittedProfile& profile, double predicted_s) {
  double p10 = -0.5;
  double p90 = 0.5;
  if (profile.fitted && profile.cross_validated.rows > 0) {
    p10 = profile.cross_validated.signed_p10;
    p90 = profile.cross_validated.signed_p90;
  }
  // measured = predicted / (1 + error): the largest error gives the smallest measured time.
  return {predicted_s / (1 + p90), predicted_s / (1 + std::max(p10, -0.95))};
}

}  // namespace moetwin
