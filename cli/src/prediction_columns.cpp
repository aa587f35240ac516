#include "prediction_columns.hpp"

#include <cstdint>

namespace moetwin::cli {

std::vector<std::string> predict_columns() {
  std::vector<std::string> c = {"predicted_iter_s", "predicted_tokens_s", "predicted_tflops_gpu",
                                "microbatches",     "critical_rank",      "critical_stage",
                                "compute_s_median", "compute_s_max"};
  for (const char* k : kCommClassNames) c.push_back(std::string("exposed_") + k + "_s_max");
  for (const char* k : {"host_wait", "bubble", "idle"}) c.push_back(std::string(k) + "_s_max");
  c.push_back("events");
  c.push_back("ops");
  return c;
}

std::vector<Cell> predict_cells(const Prediction& p) {
  std::vector<Cell> row = {Cell::fixed(p.iteration_s, 6),          Cell::fixed(p.tokens_per_s, 1),
                           Cell::fixed(p.model_tflops_per_gpu, 2), Cell::integer(p.microbatches),
                           Cell::integer(p.critical_rank),         Cell::integer(p.critical_stage),
                           Cell::fixed(p.compute.median_s, 6),     Cell::fixed(p.compute.max_s, 6)};
  for (const RankSpread& e : p.exposed) row.push_back(Cell::fixed(e.max_s, 6));
  for (const RankSpread* s : {&p.host_wait, &p.bubble, &p.idle}) row.push_back(Cell::fixed(s->max_s, 6));
  row.push_back(Cell::integer(static_cast<std::int64_t>(p.events)));
  row.push_back(Cell::integer(static_cast<std::int64_t>(p.ops)));
  return row;
}

}  // namespace moetwin::cli
