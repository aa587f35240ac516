// Where a prediction lies relative to the live runs a profile was fitted on, dimension by dimension: the
// GPU, instance, software stack and precision (the platform), the model, the layout regime and the scale
// (the configuration), and the dispatcher. A prediction's uncertainty band depends on which dimensions are
// new to the fit (fitted_profile.hpp, band_for): inside the fit's family the cross-validated residuals of
// its rows are honest; outside, only the errors of held-out campaigns that were new in the same way are.
#pragma once

#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// The dimensions in output order. platform: gpu..precision; configuration: model..scale.
enum class NoveltyDimension { gpu, instance, stack, precision, model, layout, scale, dispatcher };
inline constexpr int kNoveltyDimensions = 8;
// "gpu", "instance", "stack", "precision", "model", "layout", "scale", "dispatcher": the keys of outputs
// and of the profile's [novelty_bands] tables.
const char* to_string(NoveltyDimension d);
// The dimensions a band is kept for (every one but dispatcher: a dispatcher without runs borrows its
// measured relatives' A2A terms and its band spans their predictions, fitted_profile.hpp a2a_term_spread).
const std::vector<NoveltyDimension>& banded_novelty_dimensions();

// What the rows a profile was fitted on covered ([coverage], written by validate --fit; optional on load):
// sorted distinct values per dimension. An empty list covers everything (not recorded).
struct FitCoverage {
  std::vector<std::string> gpus, instances, stacks, dispatchers, precisions;
  std::vector<std::string> models;
  // Layout regime, three ways: "pp1" or "pp>1" (a pipeline or none: bubbles, PP sends, the schedule);
  // the TP degree ("tp8"); how many nodes one EP group spans ("ep-nodes4": intra-node NVLink only at 1).
  std::vector<std::string> pp_regimes, tps, ep_spans;
  // Node counts of the fitted rows (sorted, distinct): a prediction beyond [front, back] extrapolates.
  std::vector<int> nodes;
  bool empty() const { return gpus.empty() && stacks.empty() && dispatchers.empty(); }
  // Adds `scenario`'s value of each dimension (kept sorted and distinct).
  void add(const Scenario& scenario);
};

// The layout-regime values of a scenario (FitCoverage's pp_regimes, tps, ep_spans).
std::string pp_regime_of(const Scenario& s);
std::string tp_regime_of(const Scenario& s);
std::string ep_span_of(const Scenario& s);

// One dimension in which a prediction is new to the fit.
struct NovelValue {
  NoveltyDimension dimension;
  std::string value;    // e.g. "B200", "tp1", "64 nodes"
  std::string warning;  // e.g. "GPU B200: no live runs in the fit"
};

struct Novelty {
  std::vector<NovelValue> novel;  // in NoveltyDimension order; empty: covered
  bool covered() const { return novel.empty(); }
  bool has(NoveltyDimension d) const;
  // "covered" (nothing new, or nothing new but the dispatcher), "configuration" (a new model, layout
  // regime or scale on a covered platform) or "platform" (a new GPU, instance, stack or precision).
  std::string level() const;
  // "gpu=B200;stack=megatron-lm-..." (dimension=value, ';'-separated; "" when covered): the CSV cell.
  std::string summary() const;
  std::vector<std::string> warnings() const;
};

// `scenario` against `coverage` (an empty dimension covers everything).
Novelty novelty_of(const Scenario& scenario, const FitCoverage& coverage);

}  // namespace moetwin
