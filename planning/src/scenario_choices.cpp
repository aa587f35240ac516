#include "moetwin/planning/scenario_choices.hpp"

#include <cstdlib>
#include <filesystem>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/routing_plan.hpp"

namespace moetwin {

Precision parse_precision_choice(const std::string& text, const std::string& flag) {
  const std::optional<Precision> p = precision_from_string(text);
  if (!p) throw InputError({"", 0}, flag, "\"" + text + "\"", precision_expected(text));
  return *p;
}

Recompute parse_recompute_choice(const std::string& text, const std::string& flag) {
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  if (text == "full") return Recompute::full;
  throw InputError({"", 0}, flag, "\"" + text + "\"", "none, selective or full");
}

RoutingConfig parse_routing_choice(const std::string& text, const std::string& flag) {
  const std::string expected =
      "balanced, zipf:S (S in (0, 5], e.g. zipf:1.2), group-limited or histogram:FILE (a layer,expert,load "
      "CSV)";
  RoutingConfig r;
  r.seed = 1;
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? std::string() : text.substr(colon + 1);
  const bool has_arg = colon != std::string::npos;
  if (kind == "balanced" && !has_arg) {
    r.kind = RoutingKind::balanced;
  } else if (kind == "group-limited" && !has_arg) {
    r.kind = RoutingKind::group_limited;
  } else if (kind == "zipf" && has_arg) {
    char* end = nullptr;
    const double s = std::strtod(arg.c_str(), &end);
    if (arg.empty() || *end != '\0' || !(s > 0 && s <= 5)) {
      throw InputError({"", 0}, flag, "\"" + text + "\"", "zipf:S with S a number in (0, 5]");
    }
    r.kind = RoutingKind::zipf;
    r.zipf_exponent = s;
  } else if (kind == "histogram" && has_arg) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (arg.empty() || !fs::is_regular_file(arg, ec)) {
      throw InputError({"", 0}, flag, "\"" + text + "\"", "histogram:FILE with FILE an existing file");
    }
    r.kind = RoutingKind::histogram;
    r.histogram_path = fs::absolute(arg).lexically_normal().string();
  } else {
    throw InputError({"", 0}, flag, "\"" + text + "\"", expected);
  }
  return r;
}

std::string routing_choice_text(const RoutingConfig& routing) {
  switch (routing.kind) {
    case RoutingKind::zipf:
      return "zipf:" + format_exact(routing.zipf_exponent);
    case RoutingKind::histogram:
      return "histogram:" + routing.histogram_path;
    case RoutingKind::balanced:
    case RoutingKind::group_limited:
      break;
  }
  return to_string(routing.kind);
}

Scenario apply_scenario_choices(Scenario s, const ScenarioChoices& choices) {
  if (choices.precision) s.training.precision = *choices.precision;
  if (choices.recompute) s.training.recompute = *choices.recompute;
  if (choices.routing) {
    s.routing = *choices.routing;
    if (s.routing.kind == RoutingKind::histogram)
      (void)read_expert_histogram(s.routing.histogram_path, s.model.experts);
  }
  return s;
}

}  // namespace moetwin
