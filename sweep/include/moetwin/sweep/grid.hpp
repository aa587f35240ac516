// Grid expansion: point id <-> axis indices (mixed radix, the last axis of sweep_axis_names() varying
// fastest), and the scenario of a point. A point that breaks a scenario rule is not an error of the sweep:
// it comes back with its error message and is recorded as invalid.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "moetwin/scenario/scenario.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {

// Index into each axis, in sweep_axis_names() order.
struct PointCoords {
  std::size_t model = 0, instance = 0, nodes = 0, layout = 0, micro_batch = 0, global_batch = 0,
              recompute = 0, overlap = 0, routing = 0, dispatcher = 0;
};

// Throws std::out_of_range when id >= spec.point_count().
PointCoords point_coords(const SweepSpec& spec, std::size_t id);
std::size_t point_id(const SweepSpec& spec, const PointCoords& coords);

struct SweepPoint {
  std::size_t id = 0;
  PointCoords coords;
  // The point's scenario, named "<sweep name>/<id>". When dp cannot be derived, parallel.dp is 0.
  Scenario scenario;
  // "" when the scenario passes every rule (validate_scenario); else why not, e.g.
  // "sweep.toml:12: parallelism.ep: 64: ep * etp = 64 * 1 dividing tp * cp * dp = ...".
  std::string error;
  bool valid() const { return error.empty(); }
};

SweepPoint make_point(const SweepSpec& spec, std::size_t id);

}  // namespace moetwin
