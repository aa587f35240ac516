// A software stack without live rows inherits: its terms are those of the nearest fitted stack
// (novelty.hpp nearest_fitted_stack: fewest changed components), and what it changes over that stack is the
// modelled difference of each changed component (NCCL, aws-ofi-nccl, Megatron-Core, Transformer Engine,
// PyTorch, the EP libraries), each priced by the mechanisms the twin has for it and listed by `predict`. No
// fitted term reverts to a default: a term fitted per stack (SimProfile::stack_a2a_scale) is the nearest
// fitted stack's value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

// `sim` with the per-stack terms of `stack` taken from the nearest fitted stack of `coverage` where `stack`
// has none of its own (a fitted stack, or one without a known fitted neighbour, keeps `sim`'s).
void inherit_stack_terms(SimProfile& sim, const StackSpec& stack, const FitCoverage& coverage);

// One changed component and what the twin's mechanisms make of it: the prediction with the components up
// to and including this one moved from the inherited stack to the scenario's (in
// changed_stack_components' order), and the change it adds.
struct StackComponentDifference {
  std::string component;  // "NCCL", "aws-ofi-nccl", ...
  std::string from, to;   // the versions and settings, as the catalog states them
  double predicted_s = 0;
  double delta_s = 0;  // predicted_s - the previous step's
};
struct StackInheritance {
  bool inherited = false;  // the scenario's stack has no fitted rows and a fitted neighbour
  std::string from;        // the nearest fitted stack
  double inherited_s = 0;  // the scenario predicted on that stack
  double predicted_s = 0;  // on its own stack
  std::vector<StackComponentDifference> differences;
  int replays = 0;  // predictions made (the spread's, when passed, are taken instead)
  // Lines for outputs: "stack nemo-26.08 inherits nemo-26.04.01's terms: 9.17 s there", then one per
  // component "aws-ofi-nccl 1.17.3... -> 1.21.1...: -3.68 s (platform-aws P2P chunk, multi-receive)".
  std::vector<std::string> lines() const;
};
// Predicts `scenario` on the nearest fitted stack and then with each changed component moved over, one at a
// time (one prediction per changed component and one on the inherited stack). Not inherited (nothing
// predicted) for a fitted stack, an unfitted profile or a stack without a known fitted neighbour.
// `base`: the options of the prediction being explained (threads, calibration, MoE cost mode); its
// profile is replaced by `profile`'s with the inherited terms, its MoE seam by each variant's own.
// `spread` (may be null): that prediction's a2a_term_spread under the same `base`: its answer on the
// inherited stack and the prediction itself (TermSpread::predicted_s, the last step) are taken instead of
// replayed, so `predict` replays the inherited stack once.
StackInheritance stack_inheritance(const Scenario& scenario, const FittedProfile& profile,
                                   const PredictOptions& base = {}, const TermSpread* spread = nullptr);

// The nearest fitted stack a scenario's stack inherits from ("" for a fitted stack, an unfitted profile or a
// stack without a known fitted neighbour), and the scenario predicted on it (its settings, the NCCL knobs it
// implies, the inherited terms): the answer the twin would give if none of the changed components' modelled
// mechanisms held. The band of an inherited stack spans it (a2a_term_spread): those mechanisms were never
// measured in training on this stack. nullopt where not inherited.
struct InheritedStackPrediction {
  std::string from;
  double predicted_s = 0;
};
std::optional<InheritedStackPrediction> predict_on_inherited_stack(const Scenario& scenario,
                                                                   const FittedProfile& profile,
                                                                   const PredictOptions& base = {});

}  // namespace moetwin
