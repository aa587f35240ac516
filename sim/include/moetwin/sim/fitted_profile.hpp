// The fitted profile: the twin's few free parameters (SimProfile's *_time_scale factors and the host
// launch cost), fitted against live runs by `moetwin validate --fit`, with the cross-validated residuals
// that give every prediction its uncertainty band. Shipped default: calibrate/profiles/fitted/live-fit.toml,
// fitted on all of validate/data/live-runs.csv. `predict`, `recommend`, `plan` and `sweep` use it unless
// told otherwise (--profile FILE, --profile none for the unfitted defaults).
#pragma once

#include <string>
#include <utility>
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

// How far the predicted margins between two dispatchers of one layout are off (validate's
// pair_margin_errors: exp(|ln predicted ratio - ln measured ratio|) - 1 over every pair of dispatchers
// measured on the same cell).
struct MarginResidualSummary {
  int pairs = 0;  // 0: the profile has none (written before they existed, or fitted without --cv)
  double median_abs = 0;
  double p90_abs = 0;
};

// What the rows a profile was fitted on covered ([coverage], written by validate --fit; optional on load):
// sorted distinct values per dimension. Empty: not recorded.
struct FitCoverage {
  std::vector<std::string> gpus, instances, stacks, dispatchers, precisions;
  bool empty() const { return gpus.empty() && stacks.empty() && dispatchers.empty(); }
  // Adds `scenario`'s value of each dimension (kept sorted and distinct).
  void add(const Scenario& scenario);
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
  // The out-of-sample errors of the rows whose campaign brought a GPU, instance, stack or precision no other
  // campaign had ([cross_validated_novel], optional): what a prediction outside the fit's coverage can
  // expect. rows = 0: the fit's campaigns never left each other's coverage.
  ResidualSummary cross_validated_novel;
  // Out-of-sample margin errors ([cross_validated_margin], optional): what a recommendation's margin
  // must exceed.
  MarginResidualSummary cross_validated_margin;
  std::string cv_scheme;  // e.g. "leave-one-campaign-out"
  // The fit's objective: "squared log ratio" or "huber <knee>" (validate --huber); optional in the file.
  std::string fit_objective = "squared log ratio";
  FitCoverage coverage;
};

// Where `scenario` lies outside the rows `profile` was fitted on, one line per dimension, e.g. "GPU B200:
// no live runs in the fit" or "stack megatron-lm-...: no live runs in the fit; its stack-scoped terms are
// the calibrated mechanism's defaults". Empty for a covered scenario, an unfitted profile or a profile
// without coverage.
std::vector<std::string> coverage_warnings(const Scenario& scenario, const FittedProfile& profile);
// Whether `scenario` runs on a GPU, instance, stack or precision the fit had no rows of: the dimensions
// its cross_validated_novel band measures. (A dispatcher without runs is covered by a2a_term_spread.)
bool outside_fit_family(const Scenario& scenario, const FittedProfile& profile);
// The same against a coverage (an empty dimension covers everything).
bool outside_family(const Scenario& scenario, const FitCoverage& coverage);

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
// The same for a prediction outside the fit's family (outside_fit_family): the in-family
// quantiles widened to those of cross_validated_novel, or to a stated +-50% (the size of the unfitted
// twin's errors) when the fit has no held-out campaign that was new to it. Never narrower than band_for.
UncertaintyBand band_for(const FittedProfile& profile, double predicted_s, bool outside_coverage);

// The margin by which a predicted winner must beat the runner-up to count as real: the p90 of the
// cross-validated margin errors (0.2: the winner must be predicted > 20% faster); -1 when the profile has
// none.
double margin_uncertainty(const FittedProfile& profile);
// Whether a predicted winner beats the runner-up beyond the uncertainty: runner_up_s / winner_s - 1 >
// margin_uncertainty(profile). Without margin residuals, conservatively, when the two end-to-end bands do
// not overlap (band_for; they share most of their error, so this overstates the uncertainty). Pass the
// winner's slowest and the runner-up's fastest prediction where a dispatcher's terms are uncertain
// (generic_a2a_sources).
bool margin_exceeds_uncertainty(const FittedProfile& profile, double winner_s, double runner_up_s);

// Whether the fit had runs of `dispatcher`, which then has its own A2A terms (SimProfile::a2a_by_dispatcher);
// false for an unfitted profile.
bool has_own_a2a_terms(const FittedProfile& profile, const std::string& dispatcher);
// Where `dispatcher`'s A2A terms come from, for outputs: "fitted" (its own), "generic" (its measured
// relatives', generic_a2a_sources) or "defaults" (an unfitted profile).
std::string a2a_terms_label(const FittedProfile& profile, const std::string& dispatcher);
// For dispatchers without their own terms: one profile per dispatcher the generic terms were taken from
// (the set set_generic_a2a_from_dispatchers takes the median over), whose generic terms are that
// dispatcher's own. Predicting an unmeasured dispatcher with each shows how much its prediction depends on
// which measured relative it resembles: uncertainty no live run has measured. Empty for an unfitted
// profile; in name order.
std::vector<std::pair<std::string, FittedProfile>> generic_a2a_sources(const FittedProfile& profile);

// A prediction's spread over the A2A terms its dispatcher might have: for a dispatcher with its own terms
// (or an unfitted profile) both ends are `predicted_s`; otherwise the scenario is predicted again with
// each generic_a2a_sources() profile and the ends are the fastest and slowest of those and `predicted_s`.
// band is band_for's, from the fastest end's low to the slowest end's high.
struct TermSpread {
  bool own_terms = true;
  int replays = 0;  // predictions made beyond the one passed in
  double fastest_s = 0;
  double slowest_s = 0;
  UncertaintyBand band;
};
TermSpread a2a_term_spread(const Scenario& scenario, const FittedProfile& profile, double predicted_s);

}  // namespace moetwin
