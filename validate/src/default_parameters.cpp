#include "moetwin/validate/default_parameters.hpp"

#include <algorithm>

#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/dispatcher_params.hpp"
#include "moetwin/validate/accuracy.hpp"

namespace moetwin {

TimeShares median_time_shares(const std::vector<RowPrediction>& predictions) {
  std::vector<double> compute, collectives;
  for (const RowPrediction& r : predictions) {
    if (!r.ok || !(r.iteration_s > 0)) continue;
    const Prediction& d = r.detail;
    compute.push_back(d.compute.median_s / r.iteration_s);
    const double exposed = d.exposed[static_cast<int>(CommClass::tp)].median_s +
                           d.exposed[static_cast<int>(CommClass::pp)].median_s +
                           d.exposed[static_cast<int>(CommClass::dp)].median_s;
    collectives.push_back(exposed / r.iteration_s);
  }
  TimeShares s;
  s.rows = static_cast<int>(compute.size());
  s.compute = percentile(compute, 0.5);
  s.collectives = percentile(collectives, 0.5);
  return s;
}

std::vector<std::string> default_fit_parameters(const std::vector<LiveRun>& runs, const TimeShares& shares) {
  std::vector<std::string> keys;
  if (shares.compute >= kMinIdentifiableShare) keys.push_back("compute_time_scale");
  keys.push_back("launch_s");
  keys.push_back("layer_host_s");
  if (shares.collectives >= kMinIdentifiableShare) keys.push_back("collective_time_scale");
  std::vector<std::string> seen;
  for (const LiveRun& r : runs) {
    const DispatcherSpec& spec = r.scenario.dispatcher;
    const std::string& d = spec.name;
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    keys.push_back(d + ".a2a_time_scale");
    keys.push_back(d + ".a2a_latency_s");
    if (dedups_by_node(spec)) {
      keys.push_back(d + ".a2a_node_latency_s");
      keys.push_back(d + ".a2a_remote_token_s");
    }
    // NCCL's per-chunk cost is charged for the chunks a run's P2P chunk adds over the calibration chunk:
    // identifiable only from rows at another chunk size.
    const ParamSet terms = default_dispatcher_params(spec);
    if (terms.has("net_chunk_s") && terms.has("calibration_chunk_bytes")) {
      const double calibration_chunk = terms.get("calibration_chunk_bytes");
      const bool other_chunk = std::any_of(runs.begin(), runs.end(), [&](const LiveRun& run) {
        return run.scenario.dispatcher.name == d &&
               run.scenario.stack.p2p_net_chunk_bytes != calibration_chunk;
      });
      if (other_chunk) keys.push_back(d + ".net_chunk_s");
    }
  }
  // A stack-scoped A2A scale for every stack with rows except the one with the most rows (the reference
  // the dispatcher terms are fitted on; with one stack it would be the dispatcher scales again). Ties: the
  // first in row order is the reference.
  std::vector<std::pair<std::string, int>> stacks;  // name, rows; in order of first appearance
  for (const LiveRun& r : runs) {
    const std::string& name = r.scenario.stack.spec.name;
    auto it = std::find_if(stacks.begin(), stacks.end(), [&](const auto& e) { return e.first == name; });
    if (it == stacks.end()) {
      stacks.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  if (stacks.size() > 1) {
    const auto reference = std::max_element(stacks.begin(), stacks.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
    for (auto it = stacks.begin(); it != stacks.end(); ++it) {
      if (it != reference) keys.push_back(it->first + ".stack_a2a_scale");
    }
  }
  return keys;
}

}  // namespace moetwin
