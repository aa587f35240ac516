// The sweep the grid and runner tests share (data/tiny-sweep.toml: 24 points of Qwen3-30B on p5), read once.
#pragma once

#include "moetwin/sweep/sweep_spec.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin::sweep_test {

inline const SweepSpec& tiny() {
  static const SweepSpec s =
      load_sweep_file(test_support::source_path("sweep/tests/data/tiny-sweep.toml"), test_support::catalog());
  return s;
}

}  // namespace moetwin::sweep_test
