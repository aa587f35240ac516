// The scenario language (TOML, documented in scenarios/README.md): parsed once, at the edge, into a
// validated Scenario. Unknown keys, wrong types, out-of-range values and impossible layouts throw
// InputError "file:line: key: value: expected ...".
#pragma once

#include <cstdint>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// catalog/strict_toml.hpp, which pulls in toml++: only the parsers that read tables include it.
class StrictTable;

// Parses scenario TOML text. `path` names the file in messages and anchors relative paths.
Scenario parse_scenario(const std::string& toml_text, const std::string& path, const Catalog& catalog);

// One routing table, as a scenario's [routing] and a sweep's `routing` axis entries write it: kind
// (`default_kind` when absent; empty = required), zipf_exponent (kind "zipf" only, in (0, 5]), histogram
// (kind "histogram" only: a file relative to `path`'s folder, `file_role` names that file in errors, e.g.
// "scenario file"), seed (default `default_seed`). Finishes `t` (unknown keys are errors).
RoutingConfig parse_routing_table(StrictTable& t, const std::string& path, const std::string& file_role,
                                  const std::string& default_kind, std::uint64_t default_seed);
Scenario load_scenario_file(const std::string& path, const Catalog& catalog);

// The parallel sizes of a layout table, as a scenario's [parallelism] and a sweep's `layouts` entries write
// them: tp and pp (required), vpp, ep, etp, cp (default 1), each in [1, 2^20]. dp is the caller's: a
// scenario may give it (else rescale.hpp derived_dp), a sweep point always derives it. Does not finish `t`.
ParallelLayout parse_parallel_sizes(StrictTable& t);

// Checks every cross-field rule (world size, EP carving, divisibility, vpp vs pp, ...). Called by the
// parsers; public so that programmatically built scenarios (sweeps, plans) are held to the same rules.
// `where` locates the scenario in messages.
void validate_scenario(const Scenario& scenario, const InputLocation& where);

}  // namespace moetwin
