#include "moetwin/sim/stack_inheritance.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

namespace {

bool fitted_stack(const StackSpec& stack, const FitCoverage& coverage) {
  return std::find(coverage.stacks.begin(), coverage.stacks.end(), stack.name) != coverage.stacks.end();
}

const StackSpec* nearest_spec(const StackSpec& stack, const FitCoverage& coverage) {
  if (coverage.stacks.empty() || fitted_stack(stack, coverage)) return nullptr;
  const std::string nearest = nearest_fitted_stack(stack, coverage);
  const auto& known = Catalog::shared_default().stacks();
  const auto it = nearest.empty() ? known.end() : known.find(nearest);
  return it == known.end() ? nullptr : &it->second;
}

// Moves `component`'s fields from `to` into `spec`; returns its versions and settings before and after.
std::pair<std::string, std::string> move_component(StackSpec& spec, const StackSpec& to,
                                                   const std::string& component) {
  const auto flag = [](const char* name, bool on) { return concat({name, on ? " on" : " off"}); };
  std::string from_text, to_text;
  if (component == "NCCL") {
    from_text = spec.nccl;
    to_text = to.nccl;
    spec.nccl = to.nccl;
    spec.nccl_env = to.nccl_env;
  } else if (component == "aws-ofi-nccl") {
    from_text = concat({spec.aws_ofi_nccl, "; ", flag("platform-aws", spec.ofi_platform_aws), ", ",
                        flag("multi-receive", spec.ofi_multi_recv)});
    to_text = concat({to.aws_ofi_nccl, "; ", flag("platform-aws", to.ofi_platform_aws), ", ",
                      flag("multi-receive", to.ofi_multi_recv)});
    spec.aws_ofi_nccl = to.aws_ofi_nccl;
    spec.ofi_platform_aws = to.ofi_platform_aws;
    spec.ofi_multi_recv = to.ofi_multi_recv;
  } else if (component == "Megatron-Core") {
    from_text = concat({spec.megatron_core, "; ", flag("alltoall padding", spec.alltoall_pad_to_capacity),
                        ", ", flag("overlap_p2p_comm", spec.overlap_p2p_comm)});
    to_text = concat({to.megatron_core, "; ", flag("alltoall padding", to.alltoall_pad_to_capacity), ", ",
                      flag("overlap_p2p_comm", to.overlap_p2p_comm)});
    spec.megatron_core = to.megatron_core;
    spec.megatron_bridge = to.megatron_bridge;
    spec.megatron_lm = to.megatron_lm;
    spec.alltoall_pad_to_capacity = to.alltoall_pad_to_capacity;
    spec.overlap_p2p_comm = to.overlap_p2p_comm;
  } else if (component == "Transformer Engine") {
    from_text = spec.transformer_engine;
    to_text = to.transformer_engine;
    spec.transformer_engine = to.transformer_engine;
  } else if (component == "PyTorch") {
    from_text = spec.torch;
    to_text = to.torch;
    spec.torch = to.torch;
  } else {
    from_text = concat({spec.deepep, "; ", spec.uccl, "; ", spec.nvshmem});
    to_text = concat({to.deepep, "; ", to.uccl, "; ", to.nvshmem});
    spec.deepep = to.deepep;
    spec.uccl = to.uccl;
    spec.nvshmem = to.nvshmem;
  }
  return {from_text.empty() ? std::string("not stated") : from_text,
          to_text.empty() ? std::string("not stated") : to_text};
}

double predict_with(const Scenario& s, const FittedProfile& profile, const PredictOptions& base) {
  PredictOptions o = base;
  o.profile = profile.sim;
  inherit_stack_terms(o.profile, s.stack.spec, profile.coverage);
  o.seams.moe = nullptr;  // built for this variant's scenario
  // Emitted programs are not shared across stacks (another stack's NCCL knobs and the alltoall padding it
  // implies); the set-up cache is (the GPU's calibration and the collective model read no stack).
  o.programs = nullptr;
  o.trace = false;
  return predict(s, o).iteration_s;
}

double predict_on(const Scenario& scenario, const StackSpec& spec, const FittedProfile& profile,
                  const PredictOptions& base) {
  Scenario s = scenario;
  s.stack = make_stack_choice(spec, NcclKnobs{}, s.instance, s.stack.from_default);
  return predict_with(s, profile, base);
}

}  // namespace

void inherit_stack_terms(SimProfile& sim, const StackSpec& stack, const FitCoverage& coverage) {
  if (sim.stack_a2a_scale.count(stack.name) > 0) return;
  const StackSpec* nearest = nearest_spec(stack, coverage);
  if (nearest == nullptr) return;
  // The nearest stack's own value; none recorded: it is the fit's reference stack (scale 1), as is this one.
  if (const auto it = sim.stack_a2a_scale.find(nearest->name); it != sim.stack_a2a_scale.end())
    sim.stack_a2a_scale[stack.name] = it->second;
}

StackInheritance stack_inheritance(const Scenario& scenario, const FittedProfile& profile,
                                   const PredictOptions& base, const TermSpread* spread) {
  StackInheritance out;
  if (!profile.fitted) return out;
  const StackSpec* nearest = nearest_spec(scenario.stack.spec, profile.coverage);
  if (nearest == nullptr) return out;
  out.inherited = true;
  out.from = nearest->name;
  // The spread replayed the inherited stack (and the caller the scenario itself) under the same options:
  // taken, not replayed again.
  const bool known = spread != nullptr && spread->inherited_stack == nearest->name;
  if (known) {
    out.inherited_s = spread->inherited_stack_s;
  } else {
    out.inherited_s = predict_on(scenario, *nearest, profile, base);
    ++out.replays;
  }
  const std::vector<std::string> changed = changed_stack_components(*nearest, scenario.stack.spec);
  StackSpec step = *nearest;
  step.name = scenario.stack.spec.name;  // its own name from the first move on: the inherited terms
  double previous = out.inherited_s;
  for (std::size_t k = 0; k < changed.size(); ++k) {
    StackComponentDifference d;
    d.component = changed[k];
    std::tie(d.from, d.to) = move_component(step, scenario.stack.spec, changed[k]);
    // The last move lands on the scenario's own stack choice (its run's NCCL knobs included).
    if (k + 1 == changed.size() && known) {
      d.predicted_s = spread->predicted_s;
    } else {
      d.predicted_s = k + 1 == changed.size() ? predict_with(scenario, profile, base)
                                              : predict_on(scenario, step, profile, base);
      ++out.replays;
    }
    d.delta_s = d.predicted_s - previous;
    previous = d.predicted_s;
    out.differences.push_back(std::move(d));
  }
  out.predicted_s = previous;
  return out;
}

std::optional<InheritedStackPrediction> predict_on_inherited_stack(const Scenario& scenario,
                                                                   const FittedProfile& profile,
                                                                   const PredictOptions& base) {
  if (!profile.fitted) return std::nullopt;
  const StackSpec* nearest = nearest_spec(scenario.stack.spec, profile.coverage);
  if (nearest == nullptr) return std::nullopt;
  return InheritedStackPrediction{nearest->name, predict_on(scenario, *nearest, profile, base)};
}

std::vector<std::string> StackInheritance::lines() const {
  std::vector<std::string> out;
  if (!inherited) return out;
  out.push_back(
      concat({"inherits the terms of the nearest fitted stack ", from, ": ", format_fixed(inherited_s, 3),
              " s there, ", format_fixed(predicted_s, 3), " s here"}));
  for (const StackComponentDifference& d : differences) {
    out.push_back(concat({d.component, " ", d.from, " -> ", d.to, ": ", d.delta_s >= 0 ? "+" : "",
                          format_fixed(d.delta_s, 3), " s (",
                          d.delta_s == 0 ? std::string("no modelled mechanism changes") : "modelled", ")"}));
  }
  return out;
}

}  // namespace moetwin
