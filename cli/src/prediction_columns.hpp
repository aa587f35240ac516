// The result columns every prediction row carries (predict --runs, validate, recommend), so that all
// row-driven outputs name and format the same quantities the same way.
#pragma once

#include <string>
#include <vector>

#include "moetwin/reports/result_table.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin::cli {

// Names of the CommClass values in column names, by CommClass.
inline constexpr const char* kCommClassNames[kCommClasses] = {"tp", "ep", "pp", "dp"};

// predicted_iter_s, predicted_tokens_s, predicted_tflops_gpu, microbatches, critical rank and stage,
// compute median/max, exposed_<class>_s_max, host_wait/bubble/idle max, events, ops (seconds unless named).
std::vector<std::string> predict_columns();
std::vector<Cell> predict_cells(const Prediction& p);

}  // namespace moetwin::cli
