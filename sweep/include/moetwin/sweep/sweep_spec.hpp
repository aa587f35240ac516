// A sweep: one base scenario and a grid of axes whose cartesian product is the set of points to predict.
// Parsed once, at the edge, from TOML (format in sweep/README.md) into this plain struct; every malformed
// key throws InputError "file:line: key: value: expected ...". Points are built from it on demand
// (grid.hpp), so a sweep of any size costs nothing until a point is evaluated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// One entry of grid.layouts. dp is not given: each point derives it as gpus / (tp * pp * cp).
struct LayoutChoice {
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;
  int etp = 1;
  int cp = 1;
  int line = 0;  // line of the entry in the sweep file (messages)
};

// grid.overlap_on: what a point with overlap_moe_a2a = true changes besides the flag. The live runs'
// convention (shared/data/live-runs.csv header): overlap forces vpp = 2 and recompute = "none".
struct OverlapOn {
  std::optional<int> vpp;
  std::optional<Recompute> recompute;
};

struct SweepSpec {
  std::string path;         // the sweep file as given (anchors relative paths, names it in messages)
  std::string name;         // sweep name (default: the file stem)
  std::string description;  // free text ("" if none)
  std::string base_path;    // `base = "..."` resolved against the sweep file; "" for an inline base
  Scenario base;            // the validated base scenario
  // FNV-1a 64-bit hash (16 hex digits) of the sweep file's bytes followed by the base file's: names the
  // sweep in the journal and in the provenance block.
  std::string content_hash;

  // Axes in expansion order, outermost first (the last varies fastest). An axis absent from [grid] has
  // one entry: the base scenario's value. Never empty.
  std::vector<ModelSpec> models;            // grid.model (catalog models; the base's model overrides stay
                                            // only when the axis is absent)
  std::vector<InstanceSpec> instances;      // grid.instance
  std::vector<GpuSpec> instance_gpus;       // instance_gpus[i]: the GPU of instances[i]
  std::vector<int> nodes;                   // grid.nodes
  std::vector<LayoutChoice> layouts;        // grid.layouts
  std::vector<int> micro_batches;           // grid.micro_batch
  std::vector<int> global_batches;          // grid.global_batch
  std::vector<int> recomputes;              // grid.recompute (Recompute values as int)
  std::vector<int> overlaps;                // grid.overlap_moe_a2a (0 / 1)
  std::vector<RoutingConfig> routings;      // grid.routing
  std::vector<DispatcherSpec> dispatchers;  // grid.dispatcher
  OverlapOn overlap_on;

  int grid_line = 0;  // line of [grid] (0 when absent): where point errors that name no key point

  // Number of points: the product of the axis sizes.
  std::size_t point_count() const;
  // Axis sizes in expansion order (model .. dispatcher).
  std::vector<std::size_t> axis_sizes() const;
};

// Names of the axes in expansion order, as keys of [grid].
const std::vector<std::string>& sweep_axis_names();

// Parses sweep TOML text; `path` names the file in messages and anchors `base` and histogram paths.
SweepSpec parse_sweep(const std::string& toml_text, const std::string& path, const Catalog& catalog);
SweepSpec load_sweep_file(const std::string& path, const Catalog& catalog);

}  // namespace moetwin
