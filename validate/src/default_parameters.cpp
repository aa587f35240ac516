#include "moetwin/validate/default_parameters.hpp"

#include <algorithm>

#include "moetwin/sim/dispatcher_model.hpp"
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
    const std::string& d = r.scenario.dispatcher.name;
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    keys.push_back(d + ".a2a_time_scale");
    keys.push_back(d + ".a2a_latency_s");
    if (is_deepep_family(d)) {
      keys.push_back(d + ".a2a_node_latency_s");
      keys.push_back(d + ".a2a_remote_token_s");
    }
  }
  return keys;
}

}  // namespace moetwin
