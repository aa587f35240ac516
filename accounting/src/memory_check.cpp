#include "moetwin/accounting/memory_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"

namespace moetwin {

namespace {

// The fragmentation share of kMemoryReserveBytes (memory_model.cpp: ~3 GiB of the 6): what a caching
// allocator's reserved peak holds beyond its allocated peak, in the model's terms.
constexpr double kFragmentationBytes = 3.0 * kGiB;

Recompute recompute_of(const std::string& s) {
  if (s == "full") return Recompute::full;
  if (s == "selective") return Recompute::selective;
  return Recompute::none;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<MemoryCheck> check_measured_memory(const std::string& checks_csv, const Catalog& catalog) {
  const CsvTable table = read_csv_file(checks_csv);
  std::vector<MemoryCheck> out;
  for (const CsvRow& row : table.rows) {
    const CsvRowReader r(table, row);
    Scenario s;
    const std::string model = r.text("model");
    s.model = catalog.model(model);
    s.model.layers = r.int32("layers", 1, 1000);
    s.model.dense_layers = r.int32("dense_layers", 0, s.model.layers);
    s.model.mtp_layers = r.int32("mtp_layers", 0, 8);
    const std::string instance = r.text("instance");
    s.instance = catalog.instance(instance);
    s.gpu = catalog.gpu(s.instance.gpu);
    s.parallel.tp = r.int32("tp", 1, 1024);
    s.parallel.pp = r.int32("pp", 1, 1024);
    s.parallel.vpp = r.int32("vpp", 1, 64);
    s.parallel.ep = r.int32("ep", 1, 4096);
    s.parallel.etp = r.int32("etp", 1, 64);
    s.parallel.dp = r.int32("dp", 1, 65536);
    s.nodes = std::max(1, s.parallel.world() / std::max(1, s.instance.gpus));
    s.training.micro_batch = r.int32("mb", 1, 1024);
    s.training.global_batch = r.int32("gbs", 1, 1 << 24);
    s.training.seq_length = r.int32("seq", 1, 1 << 20);
    s.training.recompute = recompute_of(r.choice("recompute", {"none", "selective", "full"}));
    const auto precision = precision_from_string(r.text("precision"));
    if (!precision) r.fail("precision", "a precision (bf16, fp8-hybrid, ...)");
    s.training.precision = *precision;
    s.training.distributed_optimizer = r.choice("distributed_optimizer", {"true", "false"}) == "true";
    const std::string dispatcher = r.text("dispatcher");
    s.dispatcher = catalog.dispatcher(dispatcher);
    const PipelineLayout layout = make_pipeline_layout(s.model, s.parallel, r.where());
    const MemoryEstimate m = estimate_memory(s, layout);
    const int stage = r.int32("stage", 0, s.parallel.pp - 1);
    const StageMemory& st = m.stages.at(static_cast<std::size_t>(stage));
    MemoryCheck c;
    c.measured_row = r.int32("measured_row", 1, 100000);
    c.source = r.text("source");
    c.compare = r.choice("compare", {"allocated", "reserved", "total"});
    // DeepEP's NVLink and RDMA buffers come from cudaMalloc / nvshmem_malloc, outside PyTorch's allocator:
    // not in max_allocated or max_reserved.
    const double untracked = s.dispatcher.transport == DispatcherTransport::nccl ? 0.0 : st.dispatcher;
    const double allocated = st.total() - st.reserve - untracked;
    c.predicted_bytes = c.compare == "allocated"  ? allocated
                        : c.compare == "reserved" ? allocated + kFragmentationBytes
                                                  : st.total();
    c.measured_bytes = r.number("measured_mib", 1, 1e7, "MiB > 0") * kMiB;
    c.error = c.predicted_bytes / c.measured_bytes - 1;
    c.label = concat({model, " L", std::to_string(s.model.layers), " tp", std::to_string(s.parallel.tp),
                      " pp", std::to_string(s.parallel.pp), " ep", std::to_string(s.parallel.ep), " dp",
                      std::to_string(s.parallel.dp), " mb", std::to_string(s.training.micro_batch), " seq",
                      std::to_string(s.training.seq_length), " ", to_string(s.training.recompute), " stage ",
                      std::to_string(stage)});
    c.assumed = r.text("assumed");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<MemoryCheckSummary> summarize_memory_checks(const std::vector<MemoryCheck>& checks) {
  std::map<std::string, std::vector<const MemoryCheck*>> by_source;
  std::vector<std::string> order;
  for (const MemoryCheck& c : checks) {
    if (!by_source.count(c.source)) order.push_back(c.source);
    by_source[c.source].push_back(&c);
  }
  std::vector<const MemoryCheck*> all;
  for (const MemoryCheck& c : checks) all.push_back(&c);
  order.push_back("all");
  by_source["all"] = all;
  std::vector<MemoryCheckSummary> out;
  for (const std::string& source : order) {
    const std::vector<const MemoryCheck*>& rows = by_source.at(source);
    MemoryCheckSummary s;
    s.source = source;
    s.rows = static_cast<int>(rows.size());
    std::vector<double> abs_errors;
    for (const MemoryCheck* c : rows) {
      abs_errors.push_back(std::abs(c->error));
      if (std::abs(c->error) >= std::abs(s.worst)) {
        s.worst = c->error;
        s.worst_row = c->measured_row;
      }
    }
    s.median_abs = median(abs_errors);
    out.push_back(s);
  }
  return out;
}

}  // namespace moetwin
