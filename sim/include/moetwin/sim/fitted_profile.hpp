// The fitted profile: the twin's few free parameters (SimProfile's *_time_scale factors and the host
// launch cost), fitted against live runs by `moetwin validate --fit`, with the cross-validated residuals
// that give every prediction its uncertainty band. Shipped default: calibrate/profiles/fitted/live-fit.toml,
// fitted on all of validate/data/live-runs.csv. `predict`, `recommend`, `plan` and `sweep` use it unless
// told otherwise (--profile FILE, --profile none for the unfitted defaults).
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

// One named free parameter: TOML key, unit, bounds the fitter respects (physically plausible ranges,
// reasons in fitted_profile.cpp) and meaning. Besides the generic parameters of free_parameters(), every
// dispatcher has its own A2A set "<dispatcher>.a2a_time_scale", "<dispatcher>.a2a_latency_s",
// "<dispatcher>.a2a_per_copy_s", "<dispatcher>.a2a_fill_tokens", "<dispatcher>.a2a_node_latency_s" and
// "<dispatcher>.a2a_remote_token_s" (SimProfile::a2a_by_dispatcher) with the generic parameters' bounds.
struct FreeParameter {
  std::string key;
  std::string unit;
  double lo = 0;
  double hi = 0;
  std::string meaning;
  // Where a fit from the unfitted defaults starts (0: the SimProfile default). Host-time parameters start
  // inside their range: host time hidden behind queued GPU work has no slope, so a fit started at 0
  // would never move them.
  double fit_start = 0;
};
const std::vector<FreeParameter>& free_parameters();
// The A2A parameter names a dispatcher has its own value of ("a2a_time_scale", ...), in profile order.
const std::vector<std::string>& a2a_parameter_leaves();
// The parameter named `key` (generic or per dispatcher); nullptr when unknown.
const FreeParameter* find_free_parameter(const std::string& key);
// Throw std::logic_error for an unknown key. Setting launch_s also sets backward_launch_s =
// launch_s x kBackwardLaunchRatio; setting one of a dispatcher's pair creates its entry from the generic
// pair.
double get_free_parameter(const SimProfile& profile, const std::string& key);
void set_free_parameter(SimProfile& profile, const std::string& key, double value);
// Host time per backward launch over forward launch: autograd runs backward kernels from C++ without
// Python frames (PyTorch profiler traces of Megatron MoE layers: ~half the forward dispatch cost).
inline constexpr double kBackwardLaunchRatio = 0.5;
// The generic A2A terms for dispatchers without runs: per term, the median of the fitted DeepEP-family
// dispatchers' values (is_deepep_family), or of every fitted dispatcher's when none is of that family.
// Why the family: the catalog dispatcher a fit on public runs lacks is DeepEP-family (deepep-v2-gin), and a
// median across families would pick, term by term, nccl-alltoall's 0 (its kernel model carries its per-peer
// costs) or the smaller DeepEP value: a set of terms no measured dispatcher has.
void set_generic_a2a_from_dispatchers(SimProfile& profile);

// Relative error (predicted - measured) / measured quantiles of the cross-validated residuals.
struct ResidualSummary {
  int rows = 0;
  double median_abs = 0;
  double p90_abs = 0;
  double signed_p10 = 0;
  double signed_p90 = 0;
};

struct FittedProfile {
  int schema_version = 1;
  std::string path;       // file it was read from; empty for the built-in defaults
  bool fitted = false;    // false: SimProfile defaults, nothing fitted
  std::string fitted_at;  // UTC date of the fit
  std::string fitted_on;  // the live-run CSV it was fitted on
  std::string git_revision;
  SimProfile sim;
  std::vector<std::string> fitted_keys;  // which free parameters the fit moved
  ResidualSummary in_sample;
  ResidualSummary cross_validated;  // leave-one-campaign-out; the uncertainty band comes from it
  std::string cv_scheme;            // e.g. "leave-one-campaign-out"
  // The fit's objective: "squared log ratio" or "huber <knee>" (validate --huber); optional in the file.
  std::string fit_objective = "squared log ratio";
};

// Reads a profile written by `validate --fit` (strict: unknown keys, wrong types and out-of-bound
// parameters are InputErrors naming file, line and key).
FittedProfile load_fitted_profile(const std::string& path);
// $MOETWIN_PROFILE if set, else the shipped calibrate/profiles/fitted/live-fit.toml of the source tree.
std::string default_fitted_profile_path();
// `spec` as given to --profile: "" -> the default path if that file exists (else built-in defaults),
// "none" -> built-in defaults, anything else -> that file (must exist).
FittedProfile resolve_fitted_profile(const std::string& spec);
// TOML text of a profile (what `validate --fit` writes).
std::string fitted_profile_toml(const FittedProfile& profile);

// Predict options for a scenario: the profile's SimProfile and the routing + dispatcher MoE cost.
// Throws InputError when the scenario's dispatcher cannot run at its EP size.
PredictOptions predict_options_for(const Scenario& scenario, const FittedProfile& profile);

// Where the measured iteration time is expected to fall given a prediction: between
// predicted / (1 + signed_p90) and predicted / (1 + signed_p10) of the cross-validated residuals
// (an unfitted profile uses +-50%, the size of the unfitted errors).
struct UncertaintyBand {
  double lo_s = 0;
  double hi_s = 0;
};
UncertaintyBand band_for(const FittedProfile& profile, double predicted_s);

}  // namespace moetwin
