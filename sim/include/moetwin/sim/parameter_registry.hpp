// Every term the twin applies, under the one key the live-run fit addresses it by, with the layer its
// value comes from. Layers, from the bottom:
//   "default"                          a published fact, an estimate, or a model default;
//   "calibrated on kernel benchmarks"  a dispatcher record term fitted on ep-kernel-bench.csv
//                                      (`moetwin dispatch --bench ... --fit`);
//   "generic (no runs of it)"          a dispatcher's A2A term where the fit had none of its runs: the
//                                      median of its measured relatives' (set_generic_a2a_from_dispatchers);
//   "fitted on live runs"              moved by `validate --fit` on every row;
//   "fitted on this stack's rows"      a stack-scoped term fitted on that stack's rows only.
// `moetwin params` prints it; `validate --fit --params KEY` takes its keys.
#pragma once

#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

struct RegistryEntry {
  std::string key;    // "launch_s", "deepep-uccl.a2a_latency_s", "nccl-alltoall.net_chunk_s", ...
  std::string scope;  // "global", "dispatcher <name>", "stack <name>"
  std::string layer;  // see above
  double value = 0;
  std::string unit;
  double lo = 0;  // bounds a fit respects
  double hi = 0;
  std::string meaning;  // what it stands for, or the record term's source
};

// Global terms first (free_parameters() order), then per catalog dispatcher (by name) its A2A set and its
// record terms (record order), then per catalog stack (by name) its stack-scoped terms.
std::vector<RegistryEntry> parameter_registry(const FittedProfile& profile, const Catalog& catalog);

}  // namespace moetwin
