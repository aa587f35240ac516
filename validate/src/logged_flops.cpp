#include "moetwin/validate/logged_flops.hpp"

#include <cmath>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

struct Mismatch {
  InputLocation where;
  std::string logged;    // the cell as a number
  std::string expected;  // what iter_s and the model's FLOPs give
};

std::vector<Mismatch> mismatches(const LiveRunTable& table) {
  std::vector<Mismatch> out;
  for (const LiveRun& run : table.runs) {
    if (!(run.tflops_gpu > 0)) continue;  // not logged
    const double gpus = run.scenario.gpus();
    const double twin = model_flops(run.scenario).per_iteration / (run.iter_s * gpus) / 1e12;  // TFLOP/s/GPU
    if (!(twin > 0) || !std::isfinite(twin)) continue;
    const double diff = run.tflops_gpu / twin - 1;
    if (std::abs(diff) <= kLoggedFlopsTolerance) continue;
    const auto colon = run.scenario.source.rfind(':');
    out.push_back({{run.scenario.source.substr(0, colon), run.row.line},
                   format_significant(run.tflops_gpu, 6),
                   concat({format_fixed(twin, 1), " TFLOP/s/GPU within 5% (the model's ",
                           format_significant(model_flops(run.scenario).per_iteration, 4),
                           " FLOP per iteration over iter_s ", format_exact(run.iter_s), " s x ",
                           std::to_string(run.scenario.gpus()), " GPUs; logged is ",
                           format_fixed(100 * diff, 1), "% off: a wrong time, TFLOP/s or model)"})});
  }
  return out;
}

}  // namespace

std::vector<std::string> logged_flops_mismatches(const LiveRunTable& table) {
  std::vector<std::string> out;
  for (const Mismatch& m : mismatches(table)) {
    out.push_back(concat({m.where.file, ":", std::to_string(m.where.line), ": tflops_gpu: ", m.logged,
                          ", expected ", m.expected, " (--strict makes this an error)"}));
  }
  return out;
}

std::vector<std::string> check_logged_flops(const LiveRunTable& table, bool strict) {
  if (strict) {
    const std::vector<Mismatch> found = mismatches(table);
    if (!found.empty())
      throw InputError(found.front().where, "tflops_gpu", found.front().logged, found.front().expected);
    return {};
  }
  return logged_flops_mismatches(table);
}

}  // namespace moetwin
