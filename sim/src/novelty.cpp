#include "moetwin/sim/novelty.hpp"

#include <algorithm>

#include "moetwin/common/concat.hpp"

namespace moetwin {

namespace {

bool covers(const std::vector<std::string>& values, const std::string& value) {
  return values.empty() || std::find(values.begin(), values.end(), value) != values.end();
}

void insert_sorted(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.insert(std::upper_bound(v.begin(), v.end(), x), x);
}

}  // namespace

const char* to_string(NoveltyDimension d) {
  switch (d) {
    case NoveltyDimension::gpu:
      return "gpu";
    case NoveltyDimension::instance:
      return "instance";
    case NoveltyDimension::stack:
      return "stack";
    case NoveltyDimension::precision:
      return "precision";
    case NoveltyDimension::model:
      return "model";
    case NoveltyDimension::layout:
      return "layout";
    case NoveltyDimension::scale:
      return "scale";
    case NoveltyDimension::dispatcher:
      return "dispatcher";
  }
  return "?";
}

const std::vector<NoveltyDimension>& banded_novelty_dimensions() {
  static const std::vector<NoveltyDimension> dims = {NoveltyDimension::gpu,   NoveltyDimension::instance,
                                                     NoveltyDimension::stack, NoveltyDimension::precision,
                                                     NoveltyDimension::model, NoveltyDimension::layout,
                                                     NoveltyDimension::scale};
  return dims;
}

std::string pp_regime_of(const Scenario& s) {
  return s.parallel.pp > 1 ? "pp>1" : "pp1";
}

std::string tp_regime_of(const Scenario& s) {
  return concat({"tp", std::to_string(s.parallel.tp)});
}

// The GPUs of one EP group are ep x etp consecutive ranks of the expert layout (Megatron-Core's
// tp-cp-ep-dp-pp order, etp in tp's place), so the group spans ceil(ep x etp / GPUs per node) nodes.
std::string ep_span_of(const Scenario& s) {
  const int per_node = std::max(1, s.instance.gpus);
  const int gpus = s.parallel.ep * s.parallel.etp;
  return concat({"ep-nodes", std::to_string(std::max(1, (gpus + per_node - 1) / per_node))});
}

void FitCoverage::add(const Scenario& s) {
  insert_sorted(gpus, s.gpu.name);
  insert_sorted(instances, s.instance.name);
  insert_sorted(stacks, s.stack.spec.name);
  insert_sorted(dispatchers, s.dispatcher.name);
  insert_sorted(precisions, to_string(s.training.precision));
  insert_sorted(models, s.model.name);
  insert_sorted(pp_regimes, pp_regime_of(s));
  insert_sorted(tps, tp_regime_of(s));
  insert_sorted(ep_spans, ep_span_of(s));
  if (std::find(nodes.begin(), nodes.end(), s.nodes) == nodes.end())
    nodes.insert(std::upper_bound(nodes.begin(), nodes.end(), s.nodes), s.nodes);
}

bool Novelty::has(NoveltyDimension d) const {
  return std::any_of(novel.begin(), novel.end(), [d](const NovelValue& v) { return v.dimension == d; });
}

std::string Novelty::level() const {
  bool configuration = false;
  for (const NovelValue& v : novel) {
    switch (v.dimension) {
      case NoveltyDimension::gpu:
      case NoveltyDimension::instance:
      case NoveltyDimension::stack:
      case NoveltyDimension::precision:
        return "platform";
      case NoveltyDimension::model:
      case NoveltyDimension::layout:
      case NoveltyDimension::scale:
        configuration = true;
        break;
      case NoveltyDimension::dispatcher:
        break;
    }
  }
  return configuration ? "configuration" : "covered";
}

std::string Novelty::summary() const {
  std::string out;
  for (const NovelValue& v : novel) {
    if (!out.empty()) out += ';';
    out += concat({to_string(v.dimension), "=", v.value});
  }
  return out;
}

std::vector<std::string> Novelty::warnings() const {
  std::vector<std::string> out;
  for (const NovelValue& v : novel) out.push_back(v.warning);
  return out;
}

Novelty novelty_of(const Scenario& s, const FitCoverage& c) {
  Novelty n;
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning) {
    n.novel.push_back({d, value, warning});
  };
  const std::string none = ": no live runs in the fit";
  if (!covers(c.gpus, s.gpu.name)) add(NoveltyDimension::gpu, s.gpu.name, concat({"GPU ", s.gpu.name, none}));
  if (!covers(c.instances, s.instance.name)) {
    add(NoveltyDimension::instance, s.instance.name,
        concat({"instance ", s.instance.name, none, " (host time scaled by its CPU)"}));
  }
  if (!covers(c.stacks, s.stack.spec.name)) {
    add(NoveltyDimension::stack, s.stack.spec.name,
        concat({"stack ", s.stack.spec.name, none,
                "; terms fitted per stack take the calibrated mechanism's defaults"}));
  }
  const std::string precision = to_string(s.training.precision);
  if (!covers(c.precisions, precision))
    add(NoveltyDimension::precision, precision, concat({"precision ", precision, none}));
  if (!covers(c.models, s.model.name)) {
    add(NoveltyDimension::model, s.model.name,
        concat({"model ", s.model.name, none, " (", to_string(s.model.attention), " attention, hidden ",
                std::to_string(s.model.hidden), ", ", std::to_string(s.model.experts), " experts)"}));
  }
  const std::string pp = pp_regime_of(s);
  const std::string tp = tp_regime_of(s);
  const std::string ep = ep_span_of(s);
  if (!covers(c.pp_regimes, pp)) add(NoveltyDimension::layout, pp, concat({"layout ", pp, none}));
  if (!covers(c.tps, tp)) add(NoveltyDimension::layout, tp, concat({"layout ", tp, none}));
  if (!covers(c.ep_spans, ep)) add(NoveltyDimension::layout, ep, concat({"layout ", ep, none}));
  if (!c.nodes.empty() && (s.nodes < c.nodes.front() || s.nodes > c.nodes.back())) {
    const std::string value = concat({std::to_string(s.nodes), " nodes"});
    add(NoveltyDimension::scale, value,
        concat({value, none, " at this scale (fitted ", std::to_string(c.nodes.front()), "-",
                std::to_string(c.nodes.back()), " nodes)"}));
  }
  if (!covers(c.dispatchers, s.dispatcher.name)) {
    add(NoveltyDimension::dispatcher, s.dispatcher.name, concat({"dispatcher ", s.dispatcher.name, none}));
  }
  return n;
}

}  // namespace moetwin
