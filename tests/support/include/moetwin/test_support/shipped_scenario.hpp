// Unit-test support: a scenario file of the repository read against the shipped catalog (needs scenarios/).
#pragma once

#include <string>

#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin::test_support {

// "scenarios/examples/qwen3-30b-p5en-2n.toml", relative to the repository root.
inline Scenario repo_scenario(const std::string& relative) {
  return load_scenario_file(source_path(relative), catalog());
}

}  // namespace moetwin::test_support
