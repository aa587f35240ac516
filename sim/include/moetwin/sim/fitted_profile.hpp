// The fitted profile: the twin's few free parameters (SimProfile's *_time_scale factors and the host
// launch cost), fitted against live runs by `moetwin validate --fit`, with the cross-validated residuals
// that give every prediction its uncertainty band. Shipped default: calibrate/profiles/fitted/live-fit.toml,
// fitted on all of validate/data/live-runs.csv. `predict`, `recommend`, `plan` and `sweep` use it unless
// told otherwise (--profile FILE, --profile none for the unfitted defaults).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/novelty.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

// One named free parameter: TOML key, unit, bounds the fitter respects (physically plausible ranges,
// reasons in fitted_profile.cpp) and meaning. The live-run fit addresses every parameter by one key:
//   - the generic ones of free_parameters() ("launch_s", "compute_time_scale", ...);
//   - per dispatcher, its in-training A2A set "<dispatcher>.a2a_time_scale", ".a2a_latency_s",
//     ".a2a_per_copy_s", ".a2a_fill_tokens", ".a2a_node_latency_s", ".a2a_remote_token_s"
//     (SimProfile::a2a_by_dispatcher, the generic A2A bounds);
//   - per dispatcher, every term of its catalog record "<dispatcher>.<term>" (SimProfile::model_params,
//     the record's unit and bounds), e.g. "nccl-alltoall.net_chunk_s";
//   - per software stack, "<stack>.stack_a2a_scale" (SimProfile::stack_a2a_scale).
// parameter_registry (parameter_registry.hpp) lists them with the layer each value comes from.
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
// Python frames (PyTorch profiler traces of Megatron MoE layers: ~half the forward dispatch cost). Measured
// on an H100 host in eager PyTorch (calibrate/data/h100-host-split.csv): 30 us per backward kernel against
// 41 us per forward one (0.72), but 142 backward kernels against 83 forward (dgrad + wgrad per GEMM), so the
// layer's backward host time is 1.22x its forward's; the qwen3-235b rows measure 1.62x, the twin ~0.54x
// (backward launches counted like the forward's). Kept at 0.5 until the TE side is measured: refits with the
// ratio free (0.515) or per op kind were worse out of sample (docs/2026-12-07-host-by-op-kind.md,
// docs/2026-12-07-host-split-measured.md).
inline constexpr double kBackwardLaunchRatio = 0.5;
// The generic A2A terms for dispatchers without runs: per term, the median of the fitted DeepEP-family
// dispatchers' values (catalog records with node_dedup), or of every fitted dispatcher's when none is of that
// family. Why the family: the catalog dispatcher a fit on public runs lacks is DeepEP-family (deepep-v2-gin),
// and a median across families would pick, term by term, nccl-alltoall's 0 (its kernel model carries its
// per-peer costs) or the smaller DeepEP value: a set of terms no measured dispatcher has.
void set_generic_a2a_from_dispatchers(SimProfile& profile);
// The dispatchers whose fitted terms make the generic ones: the node-dedup (DeepEP) family's when any was
// fitted, else every fitted dispatcher's; in name order.
std::vector<std::string> generic_a2a_source_names(const SimProfile& profile);

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

// How fast the error grows with distance in one novelty dimension ([novelty_bands.<dimension>], written by
// validate --fit with --cv). A prediction whose new dimensions lie at distances d_i (NovelValue::distance)
// gets, on each side, the log half-width sqrt(w0^2 + sum_i (per_unit_i x d_i)^2), w0 the in-family
// quantile's: new dimensions combine in quadrature with each other and with the in-family error (taken as
// independent), so three new dimensions give a wider band than any one, and a band widens with distance.
// Measured (rows >= kMinNoveltyBandRows): per leave-one-campaign-out fold, each held-out row's log error
// beyond that fold's own in-family width (its training rows' in-sample spread and the campaign band),
// divided by the row's distance from the fold's training rows; the 80th percentile over the rows new in
// that dimension, each held-out campaign weighing alike. Prior (rows = 0): a stated conservative rule
// (validate/novelty_bands.cpp). error_lo / error_hi: the band of one unit of distance alone, exp(-+per_unit)
// - 1, for reading. The same struct holds FittedProfile::campaign_band (per_unit: its log half-width).
struct NoveltyBand {
  int rows = 0;
  double error_lo = 0;  // <= 0
  double error_hi = 0;  // >= 0
  std::string source;
  // Log half-width per novelty unit; < 0: not recorded (profiles before distances), read as ln(1 + error_hi).
  double per_unit = -1;
  // Held-out groups (campaigns, and systems of never-fitted rows) the rate was measured on, for reading;
  // -1: not recorded (a prior, or a profile before the groups were written).
  int groups = -1;
  double unit_width() const;  // per_unit, or its reading from error_hi for an older profile
};
// Below this many held-out rows a dimension's errors make no band of their own (an 80% interval from fewer
// than 5 rows is one row wide on each side); it takes the prior.
inline constexpr int kMinNoveltyBandRows = 5;

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
  ResidualSummary cross_validated;  // leave-one-campaign-out; older profiles' band comes from it
  // What a new campaign adds at distance 0 ([campaign_band], optional, written with --cv; per_unit < 0:
  // none). With it the in-family band is the fit's in-sample residual quantiles (in_sample's signed p10 /
  // p90: the fit's own spread) and this log half-width in quadrature: a run on another day or cluster of a
  // family the fit covers misses by more than the fit's own rows do. Measured on the leave-one-campaign-out
  // rows at distance 0, each held-out row's log error beyond its fold's in-sample spread
  // (validate/novelty_bands.cpp). Without it (older profiles), the cross_validated quantiles are the band.
  NoveltyBand campaign_band;
  // Per banded novelty dimension (to_string(NoveltyDimension) -> band; optional, written with --cv): what a
  // prediction new to the fit in that dimension can expect. Empty: the +-50% prior for every dimension.
  std::map<std::string, NoveltyBand> novelty_bands;
  // Out-of-sample margin errors ([cross_validated_margin], optional): what a recommendation's margin
  // must exceed.
  MarginResidualSummary cross_validated_margin;
  // In-sample margin errors ([in_sample_margin], optional): what remains of a margin's error once every
  // dispatcher's terms are fitted to its own rows, the part a short measurement of the two cannot remove
  // (settling experiments, planning/settling_experiment.hpp).
  MarginResidualSummary in_sample_margin;
  std::string cv_scheme;  // e.g. "leave-one-campaign-out"
  // The fit's objective: "squared log ratio" or "huber <knee>" (validate --huber); optional in the file.
  std::string fit_objective = "squared log ratio";
  FitCoverage coverage;
};

// Where `scenario` lies outside the rows `profile` was fitted on (novelty.hpp); covered for an unfitted
// profile or one without [coverage] (nothing to compare with).
Novelty novelty_of(const Scenario& scenario, const FittedProfile& profile);
// Its warning lines, e.g. "GPU B200: no live runs in the fit".
std::vector<std::string> coverage_warnings(const Scenario& scenario, const FittedProfile& profile);

// Reads a profile written by `validate --fit` (strict: unknown keys, wrong types and out-of-bound
// parameters are InputErrors naming file, line and key).
FittedProfile load_fitted_profile(const std::string& path);
// The same from the text of a profile read from `path` (or about to be written there: `validate --fit`
// reads what it writes back before writing it).
FittedProfile parse_fitted_profile(const std::string& text, const std::string& path);
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
// predicted / (1 + e_hi) and predicted / (1 + e_lo), e the in-family error quantiles: with a campaign band,
// the in-sample signed p10 / p90 widened in quadrature (log space) by FittedProfile::campaign_band; else
// the cross-validated signed p10 / p90 (an unfitted profile uses +-50%, the size of the unfitted errors).
struct UncertaintyBand {
  double lo_s = 0;
  double hi_s = 0;
};
UncertaintyBand band_for(const FittedProfile& profile, double predicted_s);
// The same at a prediction's novelty: the in-family quantiles widened in quadrature by each novel
// dimension's NoveltyBand::per_unit x its distance (a dimension the profile has no band for takes
// kUnbandedPerUnit per unit). Never narrower than band_for; strictly wider the farther a novel dimension
// reaches. The dispatcher dimension is not banded here (a2a_term_spread).
UncertaintyBand band_for(const FittedProfile& profile, double predicted_s, const Novelty& novelty);
// Growth per unit of distance of a dimension without a band in the profile: ln 1.5, the unfitted twin's
// +-50% for every unit.
inline constexpr double kUnbandedPerUnit = 0.4054651081081644;
// Where that band comes from, for outputs: "cross-validated, 51 rows" or "widened for gpu B200 (measured on
// 7 held-out rows), scale 64 nodes (prior: ...)".
std::string band_source(const FittedProfile& profile, const Novelty& novelty);
// The growth per unit of distance a band uses for `dimension`: the profile's measured or prior rate, never
// below the floor: kMeasuredFloorPerUnit for a rate measured on kMinMeasuredGroups held-out groups or more,
// else (a prior, or a band without its groups recorded) kGrowthFloorPerUnit or what a new campaign adds at
// distance 0 where the profile measured that and it is larger (a value no held-out group tried is at
// least as uncertain as a new campaign of a family the fit covers). No new dimension is free. A dimension
// without a band in the profile takes kUnbandedPerUnit.
double growth_per_unit(const FittedProfile& profile, NoveltyDimension dimension);
// Where that floor comes from (for outputs): "" when the profile's own rate is above it.
std::string growth_floor_reason(const FittedProfile& profile, NoveltyDimension dimension);
// The least growth per unit of any dimension: ln 1.1 (+-10% per unit), the smallest rate validate's prior
// rule gives (validate/novelty_bands.cpp kMinPriorPerUnit: held out by campaign on synthetic rows, the
// in-family width alone left 4 of 5 rows of a campaign 4 units away outside).
inline constexpr double kGrowthFloorPerUnit = 0.09531017980432493;
// A rate measured on at least kMinMeasuredGroups held-out groups (campaigns, or systems of never-fitted
// rows) stands as measured, down to kMeasuredFloorPerUnit: ln 1.025, +-2.5% per unit, what the measurement
// can resolve (one dispatcher's variants of one cell spread 2.4% run to run: the p5en rows at
// NCCL_MAX_NCHANNELS unset/8/16/32, live-runs-p5en.csv), so no new dimension is free; its source names the
// groups and how many. A band that records no groups (a prior, or a profile written before groups were):
// the floor above. kMinMeasuredGroups is 1: a rate measured on held-out rows is a measurement, however few
// groups it comes from. Session 48 required 3 groups, after a rate measured on one system left GB200's rows
// at 55% (session 47, before the GEMM rates from the TE guide); re-measured on 2026-12-07 (session 50,
// docs/2026-12-07-graph-novelty-and-dense-width.md) the one dimension that two systems measure and so can be
// checked from one, the NVLink domain, held each NVL72 system's rows with the other system's rate: GB200
// 24 of 30 (80%), GB300 29 of 30 (97%), NVIDIA's 71 dense rows 90% in bands 1.42x wide; the 10% floor in
// its place held 26 of 30 and 29 of 30, 93% in bands 1.49x wide: wider than the measurement asks.
inline constexpr int kMinMeasuredGroups = 1;
inline constexpr double kMeasuredFloorPerUnit = 0.024692612590371255;
// The band's composition, one line per part, for `predict --explain`: the in-family spread (the fit's
// in-sample quantiles and a new campaign's width), then each new dimension's contribution (growth per unit
// x distance, with its source), then the combined band in quadrature.
std::vector<std::string> band_composition(const FittedProfile& profile, const Novelty& novelty);

// The margin by which a predicted winner must beat the runner-up to count as real: the p90 of the
// cross-validated margin errors (0.2: the winner must be predicted > 20% faster); -1 when the profile has
// none.
double margin_uncertainty(const FittedProfile& profile);
// At a prediction's novelty: the in-family margin error scaled by how much wider the novelty band is than
// the in-family band (log widths): the assumption that a margin's error grows with the end-to-end error,
// since the data hold too few dispatcher pairs on novel campaigns for a margin band of its own. -1 as above.
double margin_uncertainty(const FittedProfile& profile, const Novelty& novelty);
// Whether a predicted winner beats the runner-up beyond the uncertainty: runner_up_s / winner_s - 1 >
// margin_uncertainty(profile). Without margin residuals, conservatively, when the two end-to-end bands do
// not overlap (band_for; they share most of their error, so this overstates the uncertainty). Pass the
// winner's slowest and the runner-up's fastest prediction where a dispatcher's terms are uncertain
// (generic_a2a_sources).
bool margin_exceeds_uncertainty(const FittedProfile& profile, double winner_s, double runner_up_s);
bool margin_exceeds_uncertainty(const FittedProfile& profile, double winner_s, double runner_up_s,
                                const Novelty& novelty);

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

// A prediction's spread over the terms it might have, the one band every command prints (predict, plan,
// compare, recommend, sweep):
// - its dispatcher's A2A terms: for a dispatcher with its own terms (or an unfitted profile) none; otherwise
//   the scenario is predicted again with each generic_a2a_sources() profile;
// - its software stack's: a stack without live rows is predicted again on the nearest fitted stack it
//   inherits from (predict_on_inherited_stack): the changed components' modelled mechanisms (a P2P chunk
//   size, aws-ofi-nccl's multi-receive, ...) were never measured in training there, so the band keeps the
//   answer without them inside.
// The ends are the fastest and slowest of those and `predicted_s`; band is band_for's, from the fastest
// end's low to the slowest end's high.
struct TermSpread {
  bool own_terms = true;
  int replays = 0;         // predictions made beyond the one passed in
  double predicted_s = 0;  // the prediction passed in (the scenario on its own stack and terms)
  double fastest_s = 0;
  double slowest_s = 0;
  std::string inherited_stack;   // the fitted stack the scenario's stack inherits from; "" when fitted
  double inherited_stack_s = 0;  // the scenario predicted on it (0 when not inherited)
  UncertaintyBand band;
};
// `central`: the options the prediction of `predicted_s` ran with (the caller's calibration folder or
// none, MoE cost mode, compute seam, threads, caches): every replay runs with them, its profile replaced
// by the source's (or the inherited stack's) and its MoE seam by that variant's own, so that a band
// computed under `--calibration none` or `--moe-cost balanced` prices its far ends the same way.
// - central.setup_cache (may be null): shared set-up for the replays (prediction_setup.hpp);
// - central.programs (may be null; used with setup_cache): the replays' emitted programs shared
//   (workload_template_cache.hpp, not thread-safe); not used for the inherited stack's replay;
// - central.seams.moe (may be null): the MoE cost seam the prediction of `predicted_s` used, which the
//   replays of every source with the same dispatcher inputs then use too (not thread-safe either: the
//   caller's thread only).
// Same results with or without the caches and the seam. The default: predict_options_for's options.
TermSpread a2a_term_spread(const Scenario& scenario, const FittedProfile& profile, double predicted_s,
                           const PredictOptions& central = {});

}  // namespace moetwin
