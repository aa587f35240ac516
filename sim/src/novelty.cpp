#include "moetwin/sim/novelty.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

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
    case NoveltyDimension::fabric:
      return "fabric";
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
    case NoveltyDimension::interaction:
      return "interaction";
    case NoveltyDimension::recipe:
      return "recipe";
  }
  return "?";
}

const std::vector<NoveltyDimension>& banded_novelty_dimensions() {
  static const std::vector<NoveltyDimension> dims = {
      NoveltyDimension::gpu,     NoveltyDimension::instance,   NoveltyDimension::nvlink_domain,
      NoveltyDimension::fabric,  NoveltyDimension::stack,      NoveltyDimension::precision,
      NoveltyDimension::model,   NoveltyDimension::layout,     NoveltyDimension::scale,
      NoveltyDimension::routing, NoveltyDimension::dispatcher, NoveltyDimension::interaction,
      NoveltyDimension::recipe};
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
  if ((a.experts == 0) != (b.experts == 0)) {
    // A dense model beside an MoE one: its MoE block is absent, not scaled down, so its expert count, top-k
    // and expert FFN are no doublings of the MoE model's (that would put a dense Llama 10 units from every
    // MoE model while NVIDIA's dense rows miss by 17% held out by system): one categorical unit for the
    // block kind, with the doublings of hidden size and layers.
    for (const double d : {doublings(a.hidden, b.hidden), doublings(a.layers, b.layers)}) sum += d * d;
    sum += kCategoricalDistance * kCategoricalDistance;
  } else {
    for (const double d :
         {doublings(a.hidden, b.hidden), doublings(a.expert_ffn_hidden, b.expert_ffn_hidden),
          doublings(a.experts, b.experts), doublings(a.top_k, b.top_k), doublings(a.layers, b.layers)})
      sum += d * d;
  }
  if (a.attention != b.attention) sum += kCategoricalDistance * kCategoricalDistance;
  return std::sqrt(sum);
}

std::string fp8_recipe_note(Precision precision) {
  // NVFP4 is priced by its own rate and quantization kernels (compute_model.hpp), not as an FP8 recipe.
  if (!is_fp8(precision) || is_nvfp4(precision)) return "";
  return "the model prices every FP8 recipe alike (fp8-hybrid, fp8-current, fp8-blockwise and mxfp8 give "
         "identical predictions: no per-recipe scaling or block-scale traffic is modelled)";
}

std::string pp_regime_of(const Scenario& s) {
  return s.parallel.pp > 1 ? "pp>1" : "pp1";
}

std::string tp_regime_of(const Scenario& s) {
  // Context parallelism (the ring's KV exchange, priced in closed form inside attention) and
  // Megatron-FSDP (per-layer gathers and reduce-scatters every microbatch) are mechanisms of their own: a
  // regime with either is new to a fit of rows without it ("tp8 cp2", "tp1 fsdp"); "tp8" alone reads as
  // before, so older profiles' regimes still cover what they covered.
  std::string regime = concat({"tp", std::to_string(s.parallel.tp)});
  if (s.parallel.cp > 1) regime += concat({" cp", std::to_string(s.parallel.cp)});
  if (s.training.megatron_fsdp) regime += " fsdp";
  return regime;
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

std::string fabric_of(const Scenario& s) {
  return to_string(s.instance.fabric);
}

std::vector<std::string> recipe_mechanisms_of(const Scenario& s) {
  std::vector<std::string> out;
  if (s.training.cpu_offload_layers > 0) out.emplace_back("cpu-offload");
  if (s.training.delay_wgrad_compute) out.emplace_back("delay-wgrad");
  // Every CUDA-graph scope is a priced mechanism (sim/cuda_graphs.hpp) and no live training row ran one
  // (the live-run files have no cuda_graphs column: none): each scope is its own unit, as they capture
  // different regions and launch differently.
  if (s.training.cuda_graphs != CudaGraphs::none) out.emplace_back(to_string(s.training.cuda_graphs));
  return out;
}

std::string joint_row_key(const Scenario& s, const std::string& campaign) {
  return concat({"campaign=",    campaign,
                 ";gpu=",        s.gpu.name,
                 ";instance=",   s.instance.name,
                 ";fabric=",     fabric_of(s),
                 ";stack=",      s.stack.spec.name,
                 ";dispatcher=", s.dispatcher.name,
                 ";precision=",  to_string(s.training.precision),
                 ";model=",      s.model.name,
                 ";pp=",         pp_regime_of(s),
                 ";tp=",         tp_regime_of(s),
                 ";ep-nodes=",   std::to_string(ep_span_nodes(s)),
                 ";nodes=",      std::to_string(s.nodes)});
}

const std::vector<std::pair<std::string, std::string>>& joint_novelty_axes() {
  static const std::vector<std::pair<std::string, std::string>> axes = {
      {"instance", "ep-nodes"}, {"instance", "dispatcher"}, {"stack", "dispatcher"}, {"gpu", "precision"}};
  return axes;
}

std::vector<std::string> changed_stack_components(const StackSpec& a, const StackSpec& b) {
  std::vector<std::string> out;
  const auto knobs = [](const NcclKnobs& k) {
    return concat({std::to_string(k.max_nchannels), "/", k.algo, "/", k.proto, "/",
                   format_exact(k.p2p_net_chunk_bytes), "/", format_exact(k.buffsize_bytes)});
  };
  if (a.nccl != b.nccl || knobs(a.nccl_env) != knobs(b.nccl_env)) out.emplace_back("NCCL");
  if (a.aws_ofi_nccl != b.aws_ofi_nccl || a.ofi_platform_aws != b.ofi_platform_aws ||
      a.ofi_multi_recv != b.ofi_multi_recv)
    out.emplace_back("aws-ofi-nccl");
  if (a.megatron_core != b.megatron_core || a.megatron_bridge != b.megatron_bridge ||
      a.megatron_lm != b.megatron_lm || a.alltoall_pad_to_capacity != b.alltoall_pad_to_capacity ||
      a.overlap_p2p_comm != b.overlap_p2p_comm)
    out.emplace_back("Megatron-Core");
  if (a.transformer_engine != b.transformer_engine) out.emplace_back("Transformer Engine");
  if (a.torch != b.torch) out.emplace_back("PyTorch");
  if (a.deepep != b.deepep || a.uccl != b.uccl || a.nvshmem != b.nvshmem)
    out.emplace_back("DeepEP/UCCL/NVSHMEM");
  return out;
}

namespace {

// How many of the catalog's version strings and settings differ between two stacks (the finer count that
// breaks a tie in changed components: a NeMo container is nearer another NeMo container than a Megatron-LM
// checkout that changed as many components).
int changed_stack_settings(const StackSpec& a, const StackSpec& b) {
  const NcclKnobs& x = a.nccl_env;
  const NcclKnobs& y = b.nccl_env;
  const bool env = x.max_nchannels != y.max_nchannels || x.algo != y.algo || x.proto != y.proto ||
                   x.p2p_net_chunk_bytes < y.p2p_net_chunk_bytes ||
                   x.p2p_net_chunk_bytes > y.p2p_net_chunk_bytes || x.buffsize_bytes < y.buffsize_bytes ||
                   x.buffsize_bytes > y.buffsize_bytes;
  int n = env ? 1 : 0;
  for (const auto& [p, q] : {std::pair{&a.nccl, &b.nccl},
                             {&a.aws_ofi_nccl, &b.aws_ofi_nccl},
                             {&a.megatron_core, &b.megatron_core},
                             {&a.megatron_bridge, &b.megatron_bridge},
                             {&a.megatron_lm, &b.megatron_lm},
                             {&a.transformer_engine, &b.transformer_engine},
                             {&a.torch, &b.torch},
                             {&a.deepep, &b.deepep},
                             {&a.uccl, &b.uccl},
                             {&a.nvshmem, &b.nvshmem}})
    n += *p != *q ? 1 : 0;
  for (const auto& [p, q] : {std::pair{a.ofi_platform_aws, b.ofi_platform_aws},
                             {a.ofi_multi_recv, b.ofi_multi_recv},
                             {a.alltoall_pad_to_capacity, b.alltoall_pad_to_capacity},
                             {a.overlap_p2p_comm, b.overlap_p2p_comm}})
    n += p != q ? 1 : 0;
  return n;
}

}  // namespace

std::string nearest_fitted_stack(const StackSpec& stack, const FitCoverage& coverage) {
  const auto& known = Catalog::shared_default().stacks();
  std::string best;
  std::pair<std::size_t, int> best_changes{0, 0};
  for (const std::string& name : coverage.stacks) {  // sorted: ties keep the first name
    const auto it = known.find(name);
    if (it == known.end()) continue;
    const std::pair<std::size_t, int> n{changed_stack_components(stack, it->second).size(),
                                        changed_stack_settings(stack, it->second)};
    if (best.empty() || n < best_changes) {
      best = name;
      best_changes = n;
    }
  }
  return best;
}

void FitCoverage::add(const Scenario& s, const std::string& campaign) {
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
  insert_sorted(rows, joint_row_key(s, campaign));
  for (const std::string& m : recipe_mechanisms_of(s)) insert_sorted(recipes, m);
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
      case NoveltyDimension::fabric:
      case NoveltyDimension::stack:
      case NoveltyDimension::precision:
        return "platform";
      case NoveltyDimension::model:
      case NoveltyDimension::layout:
      case NoveltyDimension::scale:
      case NoveltyDimension::routing:
      case NoveltyDimension::dispatcher:
      case NoveltyDimension::interaction:
      case NoveltyDimension::recipe:
        configuration = true;
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
  for (const NovelValue& v : novel) sum += v.distance * v.distance;
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

// A joint_row_key split into its key -> value pairs.
std::map<std::string, std::string> parse_row_key(const std::string& key) {
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while (at <= key.size()) {
    const std::size_t end = std::min(key.find(';', at), key.size());
    const std::string part = key.substr(at, end - at);
    const std::size_t eq = part.find('=');
    if (eq != std::string::npos) out[part.substr(0, eq)] = part.substr(eq + 1);
    at = end + 1;
  }
  return out;
}

double log2_distance(const std::string& a, const std::string& b) {
  const double x = std::atof(a.c_str());
  const double y = std::atof(b.c_str());
  if (!(x > 0) || !(y > 0)) return a == b ? 0.0 : kCategoricalDistance;
  return std::abs(std::log2(x / y));
}

// Distance between two rows' values on every axis (the campaign is not an axis).
double row_distance(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
                    const FitCoverage& c) {
  double sum = 0;
  for (const auto& [key, value] : a) {
    if (key == "campaign") continue;
    const auto it = b.find(key);
    const std::string other = it == b.end() ? std::string() : it->second;
    double d = 0;
    if (key == "ep-nodes" || key == "nodes") {
      d = log2_distance(value, other);
    } else if (value == other) {
      d = 0;
    } else if (key == "model") {
      const auto x = c.model_shapes.find(value);
      const auto y = c.model_shapes.find(other);
      d = x != c.model_shapes.end() && y != c.model_shapes.end() ? model_distance(x->second, y->second)
                                                                 : kCategoricalDistance;
    } else {
      d = kCategoricalDistance;
    }
    sum += d * d;
  }
  return std::sqrt(sum);
}

}  // namespace

std::vector<NearestRow> nearest_fitted_rows(const Scenario& s, const FitCoverage& coverage, int count) {
  FitCoverage shapes = coverage;  // the scenario's own shape, for the model distance
  shapes.model_shapes.try_emplace(s.model.name, model_shape_of(s.model));
  const auto own = parse_row_key(joint_row_key(s));
  std::vector<NearestRow> out;
  for (const std::string& key : coverage.rows)
    out.push_back({key, row_distance(own, parse_row_key(key), shapes)});
  std::sort(out.begin(), out.end(), [](const NearestRow& a, const NearestRow& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.key < b.key;
  });
  if (out.size() > static_cast<std::size_t>(std::max(count, 0))) out.resize(static_cast<std::size_t>(count));
  return out;
}

namespace {

void add_dimension(Novelty& n, NoveltyDimension d, const std::string& value, const std::string& warning,
                   double distance) {
  n.novel.push_back({d, value, warning, distance});
}

// The platform beyond the GPU and instance: the NVLink domain and the fabric, each judged against the
// fitted rows' instances as the catalog describes them.
void add_platform_novelty(Novelty& n, const Scenario& s, const FitCoverage& c, const std::string& none) {
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) { add_dimension(n, d, value, warning, distance); };
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
  // The fitted rows' fabrics, from their instances in the catalog (as the NVLink domains above).
  {
    std::vector<std::string> fabrics;
    const auto& known = Catalog::shared_default().instances();
    for (const std::string& name : c.instances) {
      const auto it = known.find(name);
      if (it != known.end()) insert_sorted(fabrics, to_string(it->second.fabric));
    }
    const std::string fabric = fabric_of(s);
    if (!covers(fabrics, fabric)) {
      std::string fitted;
      for (const std::string& f : fabrics) fitted += (fitted.empty() ? "" : ", ") + f;
      add(NoveltyDimension::fabric, fabric,
          concat({"fabric ", fabric, none, " (fitted on ", fitted,
                  "): its latency, congestion control and the dispatchers' transports over it inherit the "
                  "fitted fabric's terms"}),
          kCategoricalDistance);
    }
  }
}

// A stack without rows: the distance from the nearest fitted stack, whose terms it inherits.
void add_stack_novelty(Novelty& n, const Scenario& s, const FitCoverage& c, const std::string& none) {
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) { add_dimension(n, d, value, warning, distance); };
  if (!covers(c.stacks, s.stack.spec.name)) {
    // Each changed component is one categorical unit, in quadrature: the distance from the nearest
    // fitted stack, whose terms this stack inherits (stack_inheritance.hpp).
    const std::string nearest = nearest_fitted_stack(s.stack.spec, c);
    const auto& known = Catalog::shared_default().stacks();
    const auto it = nearest.empty() ? known.end() : known.find(nearest);
    if (it == known.end()) {
      add(NoveltyDimension::stack, s.stack.spec.name,
          concat({"stack ", s.stack.spec.name, none, "; no fitted stack known to inherit from"}),
          kCategoricalDistance);
    } else {
      const std::vector<std::string> changed = changed_stack_components(s.stack.spec, it->second);
      std::string names;
      for (const std::string& x : changed) names += (names.empty() ? "" : ", ") + x;
      const double distance = std::max(kCategoricalDistance,
                                       std::sqrt(static_cast<double>(changed.size())) * kCategoricalDistance);
      add(NoveltyDimension::stack, s.stack.spec.name,
          concat({"stack ", s.stack.spec.name, none, "; inherits the terms of the nearest fitted stack ",
                  nearest, ", changed: ", names.empty() ? std::string("none") : names, " (", fmt1(distance),
                  " units)"}),
          distance);
    }
  }
}

// A model without rows: doublings of size and shape from the nearest fitted model.
void add_model_novelty(Novelty& n, const Scenario& s, const FitCoverage& c, const std::string& none) {
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) { add_dimension(n, d, value, warning, distance); };
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
}

// Values each fitted on their own but never together, on the joint axes; and the nearest fitted rows.
void add_combination_novelty(Novelty& n, const Scenario& s, const FitCoverage& c, const std::string& none) {
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) { add_dimension(n, d, value, warning, distance); };
  // Combinations: on each joint axis, a pair of values each fitted on its own but never together (a value
  // new by itself is counted in its own dimension already).
  if (c.rows.empty()) return;
  {
    const auto own = parse_row_key(joint_row_key(s));
    std::vector<std::map<std::string, std::string>> rows;
    rows.reserve(c.rows.size());
    for (const std::string& key : c.rows) rows.push_back(parse_row_key(key));
    for (const auto& [x, y] : joint_novelty_axes()) {
      const std::string& vx = own.at(x);
      const std::string& vy = own.at(y);
      bool seen_x = false, seen_y = false, seen_pair = false;
      double nearest_y = -1;  // ep-nodes: doublings to the nearest span fitted with this instance
      for (const auto& r : rows) {
        const bool same_x = r.at(x) == vx;
        seen_x = seen_x || same_x;
        seen_y = seen_y || r.at(y) == vy;
        if (!same_x) continue;
        seen_pair = seen_pair || r.at(y) == vy;
        const double d = y == "ep-nodes" ? log2_distance(vy, r.at(y)) : kCategoricalDistance;
        if (nearest_y < 0 || d < nearest_y) nearest_y = d;
      }
      if (!seen_x || !seen_y || seen_pair) continue;
      const double distance =
          y == "ep-nodes" ? std::max(nearest_y, kFp8RecipeDistance) : kCategoricalDistance;
      const std::string value = concat({x, " x ", y, " ", vx, " x ", vy});
      add(NoveltyDimension::interaction, value,
          concat({"combination ", x, "=", vx, " with ", y, "=", vy, none,
                  " (each was fitted, never together; ", fmt1(distance), " units)"}),
          distance);
    }
    n.nearest = nearest_fitted_rows(s, c);
  }
}

// What a CUDA-graph scope captures (sim/cuda_graphs.hpp), for the recipe warning.
const char* cuda_graph_scope_note(CudaGraphs g) {
  switch (g) {
    case CudaGraphs::te_scoped:
      return "TE CUDA graphs scoped to each layer's attention block and router, one graph launch in place of "
             "their eager launches";
    case CudaGraphs::full_iteration:
      return "the whole forward-backward captured, one graph launch per iteration and rank, no host or "
             "device sync inside";
    case CudaGraphs::te_router:
      return "TE CUDA graphs scoped to the router and its preprocess";
    case CudaGraphs::none:
      break;
  }
  return "no graphs";
}

// A recipe mechanism no fitted row ran: one unit each (NoveltyDimension::recipe), named with the scenario
// key that turns it on and where the twin prices it.
void add_recipe_novelty(Novelty& n, const Scenario& s, const FitCoverage& c, const std::string& none) {
  if (c.empty()) return;  // nothing recorded: covers every recipe, as every other dimension
  const TrainingConfig& t = s.training;
  for (const std::string& m : recipe_mechanisms_of(s)) {
    if (std::find(c.recipes.begin(), c.recipes.end(), m) != c.recipes.end()) continue;
    const std::string what =
        m == "cpu-offload" ? concat({"training.cpu_offload_layers ", std::to_string(t.cpu_offload_layers),
                                     ": activations copied to the host and back over ", s.instance.host_link,
                                     " (sim/cpu_offload.hpp)"})
        : m == "delay-wgrad"
            ? std::string(
                  "training.delay_wgrad_compute: the routed experts' weight gradients apart from "
                  "their data gradients in the combined 1F1B step (sim/moe_pricing.cpp)")
            : concat({"training.cuda_graphs ", m, ": ", cuda_graph_scope_note(t.cuda_graphs),
                      " (sim/cuda_graphs.hpp)"});
    add_dimension(n, NoveltyDimension::recipe, m,
                  concat({"recipe ", m, none, " (", what,
                          "; priced by the twin, never checked against a live "
                          "training row)"}),
                  kCategoricalDistance);
  }
}

}  // namespace

Novelty novelty_of(const Scenario& s, const FitCoverage& c) {
  Novelty n;
  const auto add = [&n](NoveltyDimension d, const std::string& value, const std::string& warning,
                        double distance) { add_dimension(n, d, value, warning, distance); };
  const std::string none = ": no live runs in the fit";
  if (!covers(c.gpus, s.gpu.name))
    add(NoveltyDimension::gpu, s.gpu.name, concat({"GPU ", s.gpu.name, none}), kCategoricalDistance);
  if (!covers(c.instances, s.instance.name)) {
    add(NoveltyDimension::instance, s.instance.name,
        concat({"instance ", s.instance.name, none, " (host time scaled by its CPU)"}), kCategoricalDistance);
  }
  add_platform_novelty(n, s, c, none);
  add_stack_novelty(n, s, c, none);
  const std::string precision = to_string(s.training.precision);
  if (!covers(c.precisions, precision)) {
    // Another FP8 recipe in the fit: the model prices them alike, only the recipe's overhead is new.
    const bool fp8_fitted = std::any_of(c.precisions.begin(), c.precisions.end(), [](const std::string& p) {
      const auto q = precision_from_string(p);
      return q && is_fp8(*q) && !is_nvfp4(*q);
    });
    const bool sibling = is_fp8(s.training.precision) && !is_nvfp4(s.training.precision) && fp8_fitted;
    add(NoveltyDimension::precision, precision,
        sibling ? concat({"precision ", precision, none, " (fitted on another FP8 recipe; ",
                          fp8_recipe_note(s.training.precision), ")"})
                : concat({"precision ", precision, none}),
        sibling ? kFp8RecipeDistance : kCategoricalDistance);
  }
  add_model_novelty(n, s, c, none);
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
    add(NoveltyDimension::dispatcher, s.dispatcher.name,
        concat({"dispatcher ", s.dispatcher.name, none,
                " (no live training row: its A2A terms are its measured relatives')"}),
        kCategoricalDistance);
  }
  add_recipe_novelty(n, s, c, none);
  add_combination_novelty(n, s, c, none);
  return n;
}

}  // namespace moetwin
