// The training choices plan, recommend and compare take on the command line instead of a scenario file:
// --precision, --recompute and --routing. One parser and one rule for applying them, so that a plan's
// option, a recommend point and a compare entry given the same flags are the same scenario.
#pragma once

#include <optional>
#include <string>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// Unset fields leave the scenario's own choice.
struct ScenarioChoices {
  std::optional<Precision> precision;
  std::optional<Recompute> recompute;
  std::optional<RoutingConfig> routing;
};

// "bf16", "fp8-hybrid", ... (precision_names()). Throws InputError naming `flag` otherwise.
Precision parse_precision_choice(const std::string& text, const std::string& flag);
// "none", "selective", "full". Throws InputError naming `flag` otherwise.
Recompute parse_recompute_choice(const std::string& text, const std::string& flag);
// "balanced", "zipf:S" (S in (0, 5], expert popularity ~ 1 / rank^S, the scenario key zipf_exponent's
// range), "group-limited" or "histogram:FILE" (a layer,expert,load CSV; relative to the working directory,
// resolved to an absolute path so a scenario written from it works from anywhere). Seed 1, the scenario
// default. The histogram file's existence is checked here, its rows against a model in
// apply_scenario_choices. Throws InputError naming `flag`.
RoutingConfig parse_routing_choice(const std::string& text, const std::string& flag);
// "zipf:1.2", "histogram:/abs/path.csv", "balanced": what parse_routing_choice reads back.
std::string routing_choice_text(const RoutingConfig& routing);

// `s` with the choices applied. A histogram is read against the model's experts (read_expert_histogram) so
// a bad file fails here, once, rather than in every prediction. Precision needs the GPU's FP8 support:
// validate_scenario (which callers run) says so.
Scenario apply_scenario_choices(Scenario s, const ScenarioChoices& choices);

}  // namespace moetwin
