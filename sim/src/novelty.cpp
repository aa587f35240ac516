#include "moetwin/sim/novelty.hpp"

#include <algorithm>
#include <cmath>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/comm_cost.hpp"

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
    case NoveltyDimension::nvlink_domain:
      return "nvlink-domain";
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
    case NoveltyDimension::routing:
      return "routing";
    case NoveltyDimension::dispatcher:
      return "dispatcher";
  }
  return "?";
}

const std::vector<NoveltyDimension>& banded_novelty_dimensions() {
  static const std::vector<NoveltyDimension> dims = {NoveltyDimension::gpu,   NoveltyDimension::instance,
                                                     NoveltyDimension::stack, NoveltyDimension::precision,
                                                     NoveltyDimension::model, NoveltyDimension::layout,
                                                     NoveltyDimension::scale, NoveltyDimension::routing};
  return dims;
}

ModelShape model_shape_of(const ModelSpec& m) {
  return {m.hidden, m.expert_ffn_hidden, m.experts, m.top_k, m.layers, to_string(m.attention)};
}

double model_distance(const ModelShape& a, const ModelShape& b) {
  // A zero (a dense model's experts) compares as 1: log2 of the ratio of the counts plus one would make a
  // dense model nearer a 2-expert one than to one of 256, which is the point.
  const auto doublings = [](int x, int y) {
    return std::log2(static_cast<double>(std::max(x, 1)) / static_cast<double>(std::max(y, 1)));
  };
  double sum = 0;
  for (const double d :
       {doublings(a.hidden, b.hidden), doublings(a.expert_ffn_hidden, b.expert_ffn_hidden),
        doublings(a.experts, b.experts), doublings(a.top_k, b.top_k), doublings(a.layers, b.layers)})
    sum += d * d;
  if (a.attention != b.attention) sum += kCategoricalDistance * kCategoricalDistance;
  return std::sqrt(sum);
}

std::string fp8_recipe_note(Precision precision) {
  if (!is_fp8(precision)) return "";
  return "the model prices every FP8 recipe alike (fp8-hybrid, fp8-current, fp8-blockwise and mxfp8 give "
         "identical predictions: no per-recipe scaling or block-scale traffic is modelled)";
}

std::string pp_regime_of(const Scenario& s) {
  return s.parallel.pp > 1 ? "pp>1" : "pp1";
}

std::string tp_regime_of(const Scenario& s) {
  return concat({"tp", std::to_string(s.parallel.tp)});
}

// The GPUs of one EP group are ep x etp consecutive ranks of the expert layout (Megatron-Core's
// tp-cp-ep-dp-pp order, etp in tp's place), so the group spans ceil(ep x etp / GPUs per NVLink group)
// NVLink groups (the dispatcher's reach; nodes on an 8-GPU instance).
int ep_span_nodes(const Scenario& s) {
  const int per_node = std::max(1, a2a_nvlink_reach_gpus(s));
  const int gpus = s.parallel.ep * s.parallel.etp;
  return std::max(1, (gpus + per_node - 1) / per_node);
}

std::string ep_span_of(const Scenario& s) {
  return concat({"ep-nodes", std::to_string(ep_span_nodes(s))});
}

std::string nvlink_domain_of(const Scenario& s) {
  return concat({"nvl", std::to_string(nvlink_domain_gpus(s.instance))});
}

std::string routing_of(const Scenario& s) {
  return to_string(s.routing.kind);
}

void FitCoverage::add(const Scenario& s) {
  insert_sorted(gpus, s.gpu.name);
  insert_sorted(instances, s.instance.name);
  insert_sorted(stacks, s.stack.spec.name);
  insert_sorted(dispatchers, s.dispatcher.name);
  insert_sorted(precisions, to_string(s.training.precision));
  insert_sorted(models, s.model.name);
  model_shapes.try_emplace(s.model.name, model_shape_of(s.model));
  insert_sorted(routings, routing_of(s));
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
      case NoveltyDimension::nvlink_domain:
      case NoveltyDimension::stack:
      case NoveltyDimension::precision:
        return "platform";
      case NoveltyDimension::model:
      case NoveltyDimension::layout:
      case NoveltyDimension::scale:
      case NoveltyDimension::routing:
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

double Novelty::distance() const {
  double sum = 0;
  for (const NovelValue& v : novel) {
    if (v.dimension != NoveltyDimension::dispatcher) sum += v.distance * v.distance;
  }
  return std::sqrt(sum);
}

std::vector<std::string> Novelty::warnings() const {
  std::vector<std::string> out;
  for (const NovelValue& v : novel) out.push_back(v.warning);
  return out;
}

namespace {

// Doublings from `value` to the range [lo, hi]; 0 inside it.
double doublings_beyond(double value, double lo, double hi) {
  if (value < lo) return std::log2(lo / value);
  if (value > hi) return std::log2(value / hi);
  return 0;
}

int ep_span_number(const std::string& value) {
  return std::atoi(value.c_str() + std::string("ep-nodes").size());
}

std::string fmt1(double x) {
  return format_fixed(x, 1);
}

}  // namespace

Novelty novelty_of(const Scenario& s, const FitCoverage& c) {
  Novelty n;
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) {
    n.novel.push_back({d, value, warning, distance});
  };
  const std::string none = ": no live runs in the fit";
  if (!covers(c.gpus, s.gpu.name))
    add(NoveltyDimension::gpu, s.gpu.name, concat({"GPU ", s.gpu.name, none}), kCategoricalDistance);
  if (!covers(c.instances, s.instance.name)) {
    add(NoveltyDimension::instance, s.instance.name,
        concat({"instance ", s.instance.name, none, " (host time scaled by its CPU)"}), kCategoricalDistance);
  }
  // The fitted rows' NVLink domains, from their instances in the catalog (the coverage records instance
  // names; an instance the catalog does not know is skipped, and none known covers every domain).
  {
    std::vector<std::string> domains;
    const auto& known = Catalog::shared_default().instances();
    for (const std::string& name : c.instances) {
      const auto it = known.find(name);
      if (it != known.end())
        insert_sorted(domains, concat({"nvl", std::to_string(nvlink_domain_gpus(it->second))}));
    }
    const std::string domain = nvlink_domain_of(s);
    if (!covers(domains, domain)) {
      std::string fitted;
      for (const std::string& d : domains) fitted += (fitted.empty() ? "" : ", ") + d;
      add(NoveltyDimension::nvlink_domain, domain,
          concat(
              {"NVLink domain of ", std::to_string(nvlink_domain_gpus(s.instance)), " GPUs", none,
               " (fitted on ", fitted,
               "): NVLink legs beyond the node and the NVSwitch fabric of a rack inherit the node's terms"}),
          kCategoricalDistance);
    }
  }
  if (!covers(c.stacks, s.stack.spec.name)) {
    add(NoveltyDimension::stack, s.stack.spec.name,
        concat({"stack ", s.stack.spec.name, none,
                "; terms fitted per stack take the calibrated mechanism's defaults"}),
        kCategoricalDistance);
  }
  const std::string precision = to_string(s.training.precision);
  if (!covers(c.precisions, precision)) {
    // Another FP8 recipe in the fit: the model prices them alike, only the recipe's overhead is new.
    const bool fp8_fitted = std::any_of(c.precisions.begin(), c.precisions.end(), [](const std::string& p) {
      const auto q = precision_from_string(p);
      return q && is_fp8(*q);
    });
    const bool sibling = is_fp8(s.training.precision) && fp8_fitted;
    add(NoveltyDimension::precision, precision,
        sibling ? concat({"precision ", precision, none, " (fitted on another FP8 recipe; ",
                          fp8_recipe_note(s.training.precision), ")"})
                : concat({"precision ", precision, none}),
        sibling ? kFp8RecipeDistance : kCategoricalDistance);
  }
  if (!covers(c.models, s.model.name)) {
    // Distance to the nearest fitted model of known shape; 1 when the profile recorded no shapes.
    double distance = kCategoricalDistance;
    std::string nearest;
    if (!c.model_shapes.empty()) {
      const ModelShape shape = model_shape_of(s.model);
      distance = -1;
      for (const auto& [name, fitted] : c.model_shapes) {
        const double d = model_distance(shape, fitted);
        if (distance < 0 || d < distance) {
          distance = d;
          nearest = name;
        }
      }
    }
    add(NoveltyDimension::model, s.model.name,
        concat({"model ", s.model.name, none, " (", to_string(s.model.attention), " attention, hidden ",
                std::to_string(s.model.hidden), ", ", std::to_string(s.model.experts), " experts",
                nearest.empty()
                    ? std::string()
                    : concat({"; ", fmt1(distance), " doublings of size and shape from ", nearest}),
                ")"}),
        distance);
  }
  const std::string pp = pp_regime_of(s);
  const std::string tp = tp_regime_of(s);
  const std::string ep = ep_span_of(s);
  if (!covers(c.pp_regimes, pp))
    add(NoveltyDimension::layout, pp, concat({"layout ", pp, none}), kCategoricalDistance);
  if (!covers(c.tps, tp))
    add(NoveltyDimension::layout, tp, concat({"layout ", tp, none}), kCategoricalDistance);
  if (!covers(c.ep_spans, ep)) {
    // Doublings to the nearest fitted span (an EP group over 8 nodes when 2 and 4 were fitted: 1).
    double distance = -1;
    for (const std::string& fitted : c.ep_spans) {
      const int f = ep_span_number(fitted);
      if (f <= 0) continue;
      const double d = std::abs(std::log2(static_cast<double>(ep_span_nodes(s)) / f));
      if (distance < 0 || d < distance) distance = d;
    }
    if (distance < 0) distance = kCategoricalDistance;
    add(NoveltyDimension::layout, ep,
        concat({"layout ", ep, none, " (", fmt1(distance), " doublings from the fitted EP spans)"}),
        distance);
  }
  if (!c.nodes.empty() && (s.nodes < c.nodes.front() || s.nodes > c.nodes.back())) {
    const std::string value = concat({std::to_string(s.nodes), " nodes"});
    const double distance =
        doublings_beyond(s.nodes, static_cast<double>(c.nodes.front()), static_cast<double>(c.nodes.back()));
    add(NoveltyDimension::scale, value,
        concat({value, none, " at this scale (fitted ", std::to_string(c.nodes.front()), "-",
                std::to_string(c.nodes.back()), " nodes; ", fmt1(distance), " doublings beyond)"}),
        distance);
  }
  const std::string routing = routing_of(s);
  if (!covers(c.routings, routing)) {
    std::string fitted;
    for (const std::string& r : c.routings) fitted += (fitted.empty() ? "" : " or ") + r;
    add(NoveltyDimension::routing, routing,
        concat({"routing ", routing, none, " (every fitted row ran ", fitted,
                " routing; the twin prices the skew, no live run checked it)"}),
        kCategoricalDistance);
  }
  if (!covers(c.dispatchers, s.dispatcher.name)) {
    add(NoveltyDimension::dispatcher, s.dispatcher.name, concat({"dispatcher ", s.dispatcher.name, none}), 0);
  }
  return n;
}

}  // namespace moetwin
