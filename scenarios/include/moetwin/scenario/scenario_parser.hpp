// The scenario language (TOML, documented in scenarios/README.md): parsed once, at the edge, into a
// validated Scenario. Unknown keys, wrong types, out-of-range values and impossible layouts throw
// InputError "file:line: key: value: expected ...".
#pragma once

#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/scenario/scenario.hpp"

namespace moetwin {

// Parses scenario TOML text. `path` names the file in messages and anchors relative paths.
Scenario parse_scenario(const std::string& toml_text, const std::string& path, const Catalog& catalog);
Scenario load_scenario_file(const std::string& path, const Catalog& catalog);

// Checks every cross-field rule (world size, EP carving, divisibility, vpp vs pp, ...). Called by the
// parsers; public so that programmatically built scenarios (sweeps, plans) are held to the same rules.
// `where` locates the scenario in messages.
void validate_scenario(const Scenario& scenario, const InputLocation& where);

}  // namespace moetwin
