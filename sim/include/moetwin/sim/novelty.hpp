// Where a prediction lies relative to the live runs a profile was fitted on, dimension by dimension: the
// GPU, instance, software stack and precision (the platform), the model, the layout regime, the scale and
// the routing (the configuration), and the dispatcher. Each new dimension comes with a distance from what
// the fit covered (NovelValue::distance), so that a band can grow with how far a prediction reaches. A
// prediction's uncertainty band depends on which dimensions are new to the fit (fitted_profile.hpp,
// band_for): inside the fit's family the cross-validated residuals of its rows are honest; outside, only the
// errors of held-out campaigns that were new in the same way are.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// The dimensions in output order. platform: gpu..precision; configuration: model..routing.
// nvlink_domain: the GPUs of one NVLink domain (InstanceSpec::nvlink_domain_gpus) differ from every
// fitted row's instance's (an NVL72 rack when every fit ran on 8-GPU NVSwitch nodes): which EP and DP
// legs stay on NVLink changes, and no fitted term saw a multi-node NVLink fabric. A platform dimension.
// fabric: the scale-out fabric (Fabric: EFA's SRD or InfiniBand's RC) of no fitted row's instance: its
// latency, congestion control and the transports a dispatcher uses over it were never measured in
// training. A platform dimension.
// dispatcher: a dispatcher without live training rows (its A2A terms are its measured relatives',
// a2a_term_spread): one categorical unit, like any other value the fit never ran.
// interaction: a combination of values the fit ran each on its own but never together, on one of the axes
// the mechanisms couple (joint_novelty_axes): (instance, EP span), (instance, dispatcher), (stack,
// dispatcher), (GPU, precision). A configuration dimension.
// recipe: a priced recipe mechanism no fitted row ran (recipe_mechanisms_of: CPU offload of activations,
// the routed experts' delayed weight gradients, each CUDA-graph scope: te-scoped, full-iteration,
// te-router): the twin prices each
// (sim/cpu_offload.hpp, moe_pricing, cuda_graphs.hpp) but no live training row checked it. One categorical
// unit per mechanism, in quadrature. A configuration dimension; last in the enum so that the others keep
// their values.
enum class NoveltyDimension {
  gpu,
  instance,
  nvlink_domain,
  fabric,
  stack,
  precision,
  model,
  layout,
  scale,
  routing,
  dispatcher,
  interaction,
  recipe
};
inline constexpr int kNoveltyDimensions = 13;
// "gpu", "instance", "nvlink-domain", "fabric", "stack", "precision", "model", "layout", "scale",
// "routing", "dispatcher", "interaction", "recipe": the keys of outputs and of the profile's
// [novelty_bands] tables.
const char* to_string(NoveltyDimension d);
// The dimensions a band is kept for: every one (each new dimension adds width; validate/novelty_bands.cpp
// measures its growth where held-out campaigns were new in it, else gives it a stated floor).
const std::vector<NoveltyDimension>& banded_novelty_dimensions();

// A model's size and shape as the novelty distance sees it (ModelSpec's fields; distance_between).
struct ModelShape {
  int hidden = 0;
  int expert_ffn_hidden = 0;
  int experts = 0;
  int top_k = 0;
  int layers = 0;
  std::string attention;  // "mla", "gqa", ...
};
ModelShape model_shape_of(const ModelSpec& model);
// How far apart two models are, in doublings: the root sum of squares of log2 ratios of hidden size,
// expert FFN size, expert count, top-k and layer count (size and shape), with 1 more, in quadrature, for a
// different attention kind. DeepSeek-V3 vs Kimi-K2: 0.58 (256 vs 384 experts).
double model_distance(const ModelShape& a, const ModelShape& b);

// What the rows a profile was fitted on covered ([coverage], written by validate --fit; optional on load):
// sorted distinct values per dimension. An empty list covers everything (not recorded).
struct FitCoverage {
  std::vector<std::string> gpus, instances, stacks, dispatchers, precisions;
  std::vector<std::string> models;
  // Size and shape of each fitted model (name -> shape; optional: a profile without them measures a new
  // model's distance as 1).
  std::map<std::string, ModelShape> model_shapes;
  // Routing of the fitted rows ("balanced" = forced balance, "histogram", "zipf", "group-limited"); empty
  // (profiles written before routing was a dimension) covers every routing.
  std::vector<std::string> routings;
  // Layout regime, three ways: "pp1" or "pp>1" (a pipeline or none: bubbles, PP sends, the schedule);
  // the TP degree ("tp8"); how many nodes one EP group spans ("ep-nodes4": intra-node NVLink only at 1).
  std::vector<std::string> pp_regimes, tps, ep_spans;
  // Node counts of the fitted rows (sorted, distinct): a prediction beyond [front, back] extrapolates.
  std::vector<int> nodes;
  // Each fitted row's values on every axis, as joint_row_key writes them (sorted, distinct; optional:
  // a profile without them judges no interaction and names no nearest rows).
  std::vector<std::string> rows;
  // The recipe mechanisms any fitted row ran (recipe_mechanisms_of; sorted, distinct). Unlike the lists
  // above, none (or a profile without the key) covers none of them: every profile written before the key
  // was fitted on rows that ran none (the shipped live-run files have no cuda_graphs, cpu_offload_layers or
  // delay_wgrad_compute column). A coverage that recorded nothing at all (empty()) covers every recipe.
  std::vector<std::string> recipes;
  bool empty() const { return gpus.empty() && stacks.empty() && dispatchers.empty(); }
  // Adds `scenario`'s value of each dimension (kept sorted and distinct), and its row key with `campaign`.
  void add(const Scenario& scenario, const std::string& campaign = "");
};

// The layout-regime values of a scenario (FitCoverage's pp_regimes, tps, ep_spans).
std::string pp_regime_of(const Scenario& s);
std::string tp_regime_of(const Scenario& s);
std::string ep_span_of(const Scenario& s);
// How many nodes one EP group spans (ep_span_of's number): NVLink groups of the dispatcher's reach
// (models' a2a_nvlink_reach_gpus: the NVLink domain for NCCL, the node for DeepEP), = nodes on an 8-GPU
// instance.
int ep_span_nodes(const Scenario& s);
// "nvl<GPUs>" of the scenario's NVLink domain (nvlink_domain_gpus), e.g. "nvl8", "nvl72".
std::string nvlink_domain_of(const Scenario& s);
// "balanced", "zipf", "group-limited", "histogram": the routing a scenario's MoE layers see.
std::string routing_of(const Scenario& s);
// "efa" or "infiniband": the scale-out fabric of the scenario's instance.
std::string fabric_of(const Scenario& s);
// The priced recipe mechanisms a scenario turns on that the recipe dimension judges, in this order:
// "cpu-offload" (training.cpu_offload_layers > 0), "delay-wgrad" (training.delay_wgrad_compute),
// then the CUDA-graph scope of training.cuda_graphs when it is not none ("te-scoped", "full-iteration",
// "te-router": one scope per scenario). Empty for a scenario with none.
std::vector<std::string> recipe_mechanisms_of(const Scenario& s);

// The components of a software stack that differ between two stacks, in this order: "NCCL" (version, launcher
// environment), "aws-ofi-nccl" (version, platform-aws, multi-receive), "Megatron-Core" (Megatron-Core,
// -Bridge, -LM versions, the alltoall dispatcher's padding, overlap_p2p_comm), "Transformer Engine",
// "PyTorch", "DeepEP/UCCL/NVSHMEM" (the EP libraries' builds).
std::vector<std::string> changed_stack_components(const StackSpec& a, const StackSpec& b);
// The fitted stack (coverage.stacks, those the shared catalog knows) with the fewest changed components
// from `stack`, ties by name; "" when none is known. A stack without rows inherits its terms.
std::string nearest_fitted_stack(const StackSpec& stack, const FitCoverage& coverage);

// A row's values on every axis the joint novelty reads, ';'-separated "key=value" pairs in a fixed order:
// campaign (may be ""), gpu, instance, fabric, stack, dispatcher, precision, model, pp, tp, ep-nodes,
// nodes. FitCoverage::rows holds one per distinct fitted row.
std::string joint_row_key(const Scenario& s, const std::string& campaign = "");
// The axes whose combinations count as a value of their own (NoveltyDimension::interaction): pairs of
// keys of joint_row_key. (instance, ep-nodes): how many nodes, and so NICs and rails, one EP group crosses
// on that instance's network (p5's 4 NICs per GPU crossing rails beyond 2 nodes); (instance, dispatcher):
// a transport on an instance's NICs; (stack, dispatcher): a dispatcher's build in a stack; (gpu,
// precision): a GPU's kernels at a precision.
const std::vector<std::pair<std::string, std::string>>& joint_novelty_axes();
// A fitted row near a prediction: its key (joint_row_key) and its distance in novelty units (root sum of
// squares over the axes: 1 per categorical difference, doublings for ep-nodes and nodes, model_distance
// for the model where both shapes are known).
struct NearestRow {
  std::string key;
  double distance = 0;
};
// Up to `count` fitted rows nearest `s` (coverage.rows), nearest first, ties by key.
std::vector<NearestRow> nearest_fitted_rows(const Scenario& s, const FitCoverage& coverage, int count = 3);

// Distances of a new value from what the fit covered, in "novelty units" (NovelValue::distance): one unit
// is one categorical change (a new GPU, instance, stack, precision family, pipeline regime, TP degree,
// routing kind) or one doubling of a size beyond the fitted range (node count, EP span, model size and
// shape by model_distance). Exceptions, each a stated rule: an FP8 recipe on a fit that had another FP8
// recipe is 0.5 (the model prices every FP8 recipe alike, fp8_recipe_note; what differs in reality is the
// scaling overhead, a fraction of what FP8 changes over bf16).
inline constexpr double kCategoricalDistance = 1.0;
inline constexpr double kFp8RecipeDistance = 0.5;

// For an FP8 recipe: the sentence that the model does not tell FP8 recipes apart ("" for bf16).
std::string fp8_recipe_note(Precision precision);

// One dimension in which a prediction is new to the fit.
struct NovelValue {
  NoveltyDimension dimension;
  std::string value;                       // e.g. "B200", "tp1", "64 nodes"
  std::string warning;                     // e.g. "GPU B200: no live runs in the fit"
  double distance = kCategoricalDistance;  // novelty units (see kCategoricalDistance)
};

struct Novelty {
  std::vector<NovelValue> novel;    // in NoveltyDimension order; empty: covered
  std::vector<NearestRow> nearest;  // the nearest fitted rows (nearest_fitted_rows), for outputs
  bool covered() const { return novel.empty(); }
  bool has(NoveltyDimension d) const;
  // "covered" (nothing new), "configuration" (a new model, layout regime, scale, routing, dispatcher,
  // combination or recipe mechanism on a covered platform) or "platform" (a new GPU, instance, NVLink domain,
  // fabric, stack or precision).
  std::string level() const;
  // "gpu=B200;stack=megatron-lm-..." (dimension=value, ';'-separated; "" when covered): the CSV cell.
  std::string summary() const;
  // The combined distance: root sum of squares of every new dimension's distance.
  double distance() const;
  std::vector<std::string> warnings() const;
};

// `scenario` against `coverage` (an empty dimension covers everything).
Novelty novelty_of(const Scenario& scenario, const FitCoverage& coverage);

}  // namespace moetwin
