// `moetwin compare`: two or more scenarios predicted side by side, each against the first, with the
// uncertainty of the difference rather than of each prediction.
//
// Why a band of its own: two predictions of one model on one cluster share most of their error (the
// compute rates, the host costs, the stack), so the error of their ratio is much smaller than the two
// end-to-end bands combined (+-24% each for a new platform; the ratio of those is +-50%). The fit measures
// that paired error directly: validate --fit --cv predicts, out of sample, the ratio of two dispatchers'
// times on every cell with two measured dispatchers, and stores the p90 of |ln predicted ratio - ln
// measured ratio| as [cross_validated_margin] (sim/fitted_profile.hpp). recommend judges its margins by
// the same number, widened at a point's novelty (margin_uncertainty); compare takes the wider of the two
// entries' novelties. An 80% band on the ratio is then ratio / (1 + u) .. ratio x (1 + u) (p90 of the
// absolute error: the two-sided 80% interval of a symmetric error). A dispatcher the fit has no runs of is
// also predicted with each measured relative's A2A terms (a2a_term_spread): the band spans those too.
//
// What it assumes: the paired errors were measured on pairs that differ in their dispatcher only. A pair
// that differs in precision, node count, instance or model shares less of its error; the output says
// which dimensions a pair differs in and that the dispatcher pairs' error is taken for it. Without paired
// errors in the profile (unfitted, or fitted without --cv) the band is the ratio of the two own bands, and
// the output says so.
#pragma once

#include <string>
#include <vector>

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/planning/settling_experiment.hpp"
#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// One input: a label (the file as given, or the shorthand's value) and its scenario.
struct CompareInput {
  std::string label;
  Scenario scenario;
};

// `base` once per dispatcher / precision / node count (the shorthands of `compare SCENARIO --dispatchers
// a,b`, `--precision bf16,fp8-hybrid`, `--nodes 16,32`). Node counts keep tp, pp, ep, mb and the global
// batch; dp follows (rescale). Each scenario is checked by validate_scenario: a bad one is an InputError
// naming the flag and its value. At least two values are required.
std::vector<CompareInput> compare_dispatchers(const Scenario& base, const Catalog& catalog,
                                              const std::vector<std::string>& dispatchers);
std::vector<CompareInput> compare_precisions(const Scenario& base,
                                             const std::vector<std::string>& precisions);
std::vector<CompareInput> compare_node_counts(const Scenario& base, const std::vector<int>& nodes);

struct CompareEntry {
  std::string label;
  Scenario scenario;
  double iteration_s = 0;
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;
  double node_hours_per_gtoken = 0;  // training_cost.hpp
  TermSpread spread;  // its own band (band_for at its novelty) over the A2A terms it might have
  std::string novelty_level, novelty;
  std::string a2a_terms;  // a2a_terms_label
  // Memory of the most loaded stage (accounting/memory_model.hpp) and the GPU's HBM, bytes; whether it
  // fits, whether it stays within the HBM headroom, and the warning that says otherwise ("" when within).
  double memory_bytes = 0, hbm_bytes = 0;
  bool fits = true, within_headroom = true;
  std::string memory_warning;
};

// How compare treats memory: a scenario that does not fit in HBM gets no verdict (compare throws
// InputError naming it) unless ignore_memory; one beyond the headroom is compared with a warning.
struct CompareMemory {
  double hbm_headroom = kDefaultHbmHeadroom;
  bool ignore_memory = false;
};

// Entry k (k >= 1) against entry 0.
struct ComparePair {
  std::size_t entry = 0;
  std::vector<std::string> differs;   // the dimensions in which the two scenarios differ (see differences())
  double difference_s = 0;            // entry - first
  double ratio = 1;                   // entry / first
  double ratio_lo = 0, ratio_hi = 0;  // the 80% band of the ratio from the paired errors
  double own_lo = 0, own_hi = 0;      // the ratio of the two own bands: lo_k / hi_0 .. hi_k / lo_0
  double uncertainty = -1;  // u, the paired error p90 at the wider novelty; < 0: none in the profile
  std::string band_source;  // where ratio_lo..ratio_hi comes from, for outputs
  bool beyond = false;      // the band excludes 1: the difference is beyond the uncertainty
  // When within: the cheapest run that settles it (settling_experiment, or both at their own scale when
  // the node counts differ), and its node-hours.
  std::string settle_with;
  double settle_node_hours = 0;
  // When either side does not fit (compared under --ignore-memory) or is beyond the HBM headroom: which,
  // said with the verdict ("" otherwise).
  std::string memory_note;
};

struct Comparison {
  std::vector<CompareEntry> entries;
  std::vector<ComparePair> pairs;  // one per entry after the first
  std::string profile;             // profile_label
  CompareMemory memory;            // as asked
};

// The dimensions in which `a` and `b` differ, in this order: model, instance, nodes, layout (tp, pp, vpp,
// ep, etp, cp, dp), micro_batch, global_batch, seq_length, recompute, precision, overlap, dispatcher,
// routing, stack.
std::vector<std::string> differences(const Scenario& a, const Scenario& b);

// Predicts every input (threads in parallel; the result is the same for any count) and pairs each with
// the first. Throws InputError for fewer than two inputs, a prediction's InputError, or (before any
// prediction) inputs that do not fit in HBM unless memory.ignore_memory, naming each with its memory.
Comparison compare(const std::vector<CompareInput>& inputs, const FittedProfile& profile, int threads,
                   const CompareMemory& memory = {});

}  // namespace moetwin
