// The sweep the grid and runner tests share (data/tiny-sweep.toml: 24 points of Qwen3-30B on p5), read once,
// and the inline base the parser and grid tests write their sweep files on.
#pragma once

#include <string>

#include "moetwin/sweep/sweep_spec.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin::sweep_test {

inline const SweepSpec& tiny() {
  static const SweepSpec s =
      load_sweep_file(test_support::source_path("sweep/tests/data/tiny-sweep.toml"), test_support::catalog());
  return s;
}

// An inline base: Qwen3-30B-A3B cut to `layers` layers on one p5.48xlarge, tp 1 pp 1 ep 8, micro-batch 1 of
// `global_batch` sequences of 1,024 tokens, then `training_extra` (more [training] lines), then "[grid]": the
// test appends its grid lines. With no extra lines the base is lines 1-15 and [grid] line 16 (the parser's
// error tests quote those line numbers).
inline std::string inline_base(int layers, int global_batch, const std::string& training_extra = "") {
  return "name = \"s\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = " + std::to_string(layers) +
         "\n[cluster]\ninstance = \"p5.48xlarge\"\nnodes = 1\n[parallelism]\ntp = 1\npp = 1\nep = 8\n"
         "[training]\nmicro_batch = 1\nglobal_batch = " +
         std::to_string(global_batch) + "\nseq_length = 1024\n" + training_extra + "[grid]\n";
}

}  // namespace moetwin::sweep_test
