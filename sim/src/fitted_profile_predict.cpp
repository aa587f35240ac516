// The options a prediction runs with under a fitted profile (predict_options_for: the profile's SimProfile,
// with a stack without rows inheriting its nearest fitted stack's terms, and the dispatcher MoE cost) and
// the spread of a prediction over the A2A terms an unmeasured dispatcher might have and over the stack an
// unfitted stack inherits from (a2a_term_spread).
#include <algorithm>
#include <memory>
#include <optional>

#include "moetwin/models/dispatcher_cost.hpp"
#include "moetwin/sim/dispatcher_fit.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/stack_inheritance.hpp"
#include "moetwin/sim/workload.hpp"

namespace moetwin {

namespace {

// `base` on `source`'s profile, with a stack without rows inheriting its nearest fitted stack's terms.
PredictOptions options_on(const PredictOptions& base, const Scenario& scenario, const FittedProfile& source) {
  PredictOptions o = base;
  o.profile = source.sim;
  if (source.fitted) inherit_stack_terms(o.profile, scenario.stack.spec, source.coverage);
  return o;
}

}  // namespace

PredictOptions predict_options_for(const Scenario& scenario, const FittedProfile& profile) {
  PredictOptions o = options_on({}, scenario, profile);
  o.seams.moe = dispatcher_moe_seam(scenario, o.profile);
  return o;
}

TermSpread a2a_term_spread(const Scenario& scenario, const FittedProfile& profile, double predicted_s,
                           const PredictOptions& central) {
  TermSpread t;
  t.predicted_s = t.fastest_s = t.slowest_s = predicted_s;
  t.own_terms = !profile.fitted || has_own_a2a_terms(profile, scenario.dispatcher.name);
  PredictOptions base = central;
  base.trace = false;  // no replay's spans are shown
  if (!t.own_terms) {
    // The sources differ from `profile` in generic_a2a only, which the MoE cost seam does not read
    // (DispatcherMoeCost: the scenario, the profile's dispatcher model parameters and its host time
    // factor): the first source's seam, routing plans and answered cost classes serve the others'
    // replays, which otherwise built all three again (docs/2026-12-04-plan-speed.md, session 42). A source
    // whose parameters or host factor differ gets its own. The central prediction's seam, when given, is
    // `profile`'s and serves first (session 43): `profile` too differs from the sources in generic_a2a.
    // Under --moe-cost balanced (no seam given) every replay prices the balanced default, as the central
    // prediction did.
    std::optional<PredictOptions> first;
    const FittedProfile* first_source = nullptr;
    if (central.seams.moe) {
      first = options_on(base, scenario, profile);
      first_source = &profile;
    }
    const auto same_moe_inputs = [&](const FittedProfile& a, const FittedProfile& b) {
      return a.sim.model_params == b.sim.model_params &&
             host_time_factor(a.sim, scenario.instance) == host_time_factor(b.sim, scenario.instance);
    };
    const auto sources = generic_a2a_sources(profile);
    for (const auto& source : sources) {
      PredictOptions options;
      if (first && same_moe_inputs(*first_source, source.second)) {
        options = *first;
        options.profile = options_on(base, scenario, source.second).profile;
      } else {
        options = options_on(base, scenario, source.second);
        // Under --moe-cost balanced no seam: every replay prices the balanced default, as predict does.
        options.seams.moe = options.moe_cost == PredictOptions::MoeCost::dispatcher
                                ? dispatcher_moe_seam(scenario, options.profile)
                                : nullptr;
        first = options;
        first_source = &source.second;
      }
      const double s = predict(scenario, options).iteration_s;
      ++t.replays;
      t.fastest_s = std::min(t.fastest_s, s);
      t.slowest_s = std::max(t.slowest_s, s);
    }
  }
  // A stack without rows: the answer on the stack it inherits from, under the same options (its own MoE
  // seam; no shared programs: another stack's NCCL knobs and padding).
  if (const auto inherited = predict_on_inherited_stack(scenario, profile, base)) {
    ++t.replays;
    t.inherited_stack = inherited->from;
    t.inherited_stack_s = inherited->predicted_s;
    t.fastest_s = std::min(t.fastest_s, inherited->predicted_s);
    t.slowest_s = std::max(t.slowest_s, inherited->predicted_s);
  }
  const Novelty novelty = novelty_of(scenario, profile);
  t.band = {band_for(profile, t.fastest_s, novelty).lo_s, band_for(profile, t.slowest_s, novelty).hi_s};
  return t;
}

}  // namespace moetwin
