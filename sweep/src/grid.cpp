#include "moetwin/sweep/grid.hpp"

#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/rescale.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {

PointCoords point_coords(const SweepSpec& spec, std::size_t id) {
  if (id >= spec.point_count()) {
    throw std::out_of_range("sweep point " + std::to_string(id) + " of " +
                            std::to_string(spec.point_count()));
  }
  const std::vector<std::size_t> sizes = spec.axis_sizes();
  std::vector<std::size_t> index(sizes.size());
  // Mixed radix, least significant digit = the last axis.
  for (std::size_t k = sizes.size(); k-- > 0;) {
    index[k] = id % sizes[k];
    id /= sizes[k];
  }
  PointCoords c;
  c.model = index[0];
  c.instance = index[1];
  c.nodes = index[2];
  c.layout = index[3];
  c.micro_batch = index[4];
  c.global_batch = index[5];
  c.recompute = index[6];
  c.overlap = index[7];
  c.routing = index[8];
  c.dispatcher = index[9];
  return c;
}

std::size_t point_id(const SweepSpec& spec, const PointCoords& c) {
  const std::vector<std::size_t> sizes = spec.axis_sizes();
  const std::size_t index[] = {c.model,        c.instance,  c.nodes,   c.layout,  c.micro_batch,
                               c.global_batch, c.recompute, c.overlap, c.routing, c.dispatcher};
  std::size_t id = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (index[k] >= sizes[k]) throw std::out_of_range("sweep point coordinate out of range");
    id = id * sizes[k] + index[k];
  }
  return id;
}

SweepPoint make_point(const SweepSpec& spec, std::size_t id) {
  SweepPoint p;
  p.id = id;
  p.coords = point_coords(spec, id);
  const PointCoords& c = p.coords;
  Scenario& s = p.scenario;
  s = spec.base;
  s.name = spec.name + "/" + std::to_string(id);
  s.source = spec.path + "#" + std::to_string(id);
  s.model = spec.models[c.model];
  s.instance = spec.instances[c.instance];
  s.gpu = spec.instance_gpus[c.instance];
  const LayoutChoice& l = spec.layouts[c.layout];
  s.parallel.tp = l.tp;
  s.parallel.vpp = l.vpp;
  s.parallel.ep = l.ep;
  s.parallel.etp = l.etp;
  s.parallel.cp = l.cp;
  s = rescale(std::move(s), spec.nodes[c.nodes], l.pp, spec.micro_batches[c.micro_batch]);
  s.training.global_batch = spec.global_batches[c.global_batch];
  s.training.recompute = static_cast<Recompute>(spec.recomputes[c.recompute]);
  s.training.overlap_moe_a2a = spec.overlaps[c.overlap] != 0;
  if (s.training.overlap_moe_a2a) {
    if (spec.overlap_on.vpp) s.parallel.vpp = *spec.overlap_on.vpp;
    if (spec.overlap_on.recompute) s.training.recompute = *spec.overlap_on.recompute;
  }
  s.routing = spec.routings[c.routing];
  s.dispatcher = spec.dispatchers[c.dispatcher];

  // Point errors name the scenario key, not a line: the point has no line of its own.
  const InputLocation where{spec.path, 0};
  const auto message = [&spec](const InputError& e) {
    const std::string text = e.what();
    const std::string prefix = spec.path + ": ";
    return text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text;
  };
  if (s.parallel.dp == 0) {
    const long long world = static_cast<long long>(s.nodes) * s.instance.gpus;
    const long long model_ranks = static_cast<long long>(l.tp) * l.cp * l.pp;
    p.error = message(
        InputError(where, "parallelism.dp", "not derivable",
                   "world / (tp * cp * pp) an integer, but the world size " + std::to_string(world) + " (" +
                       std::to_string(s.nodes) + " nodes * " + std::to_string(s.instance.gpus) +
                       " GPUs) is not a multiple of tp * cp * pp = " + std::to_string(model_ranks)));
    return p;
  }
  try {
    validate_scenario(s, where);
  } catch (const InputError& e) {
    p.error = message(e);
  }
  return p;
}

}  // namespace moetwin
