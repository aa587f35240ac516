// Kernel-level benchmark rows: reading, prediction, and calibration. See kernel_bench.hpp.
#include "moetwin/validate/kernel_bench.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/statistics.hpp"
#include "moetwin/models/routing_plan.hpp"

namespace moetwin {
namespace {

double parse_optional(const CsvTable& t, const CsvRow& row, const std::string& column) {
  const std::string& v = row.fields[t.column(column)];
  if (v.empty()) return 0;
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !std::isfinite(x) || x < 0)
    throw InputError({t.path, row.line}, column, v, "a non-negative number or empty");
  return x;
}

constexpr int kMaxBenchRanks = 65536;
constexpr int kMaxBenchNodes = 100000;

int parse_positive_int(const CsvTable& t, const CsvRow& row, const std::string& column, int max) {
  const std::string& v = row.fields[t.column(column)];
  std::size_t used = 0;
  int x = 0;
  try {
    x = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || x <= 0 || x > max)
    throw InputError({t.path, row.line}, column, v, "an integer in [1, " + std::to_string(max) + "]");
  return x;
}

double gbps(double bytes, TimeNs ns) {
  return ns > 0 ? bytes / static_cast<double>(ns) : 0.0;
}  // B/ns = GB/s

// The DeepEP tests' byte count: the RDMA leg internode, the NVLink leg (test_intranode.py) on one node.
double mean_counted(const A2aTraffic& t) {
  double sum = 0;
  for (const auto& l : t.legs) sum += t.nodes > 1 ? l.counted_rdma : l.counted_nvlink;
  return t.legs.empty() ? 0 : sum / static_cast<double>(t.legs.size());
}

}  // namespace

std::vector<KernelBenchRow> read_kernel_bench(const std::string& path) {
  const CsvTable t = read_csv_file(path);
  std::vector<KernelBenchRow> rows;
  for (const CsvRow& r : t.rows) {
    KernelBenchRow k;
    k.line = r.line;
    k.instance = r.fields[t.column("instance")];
    k.gpu = r.fields[t.column("gpu")];
    // Bounds as a scenario's: at most 100,000 nodes, and an EP group of at most 65,536 ranks (the routing
    // planner's and the dispatcher models' range; the benchmarks have 8 to 64).
    k.ranks = parse_positive_int(t, r, "ranks", kMaxBenchRanks);
    k.nodes = parse_positive_int(t, r, "nodes", kMaxBenchNodes);
    k.transport = r.fields[t.column("transport")];
    k.mode = r.fields[t.column("mode")];
    k.dispatch_gbps = parse_optional(t, r, "dispatch_gbps");
    k.combine_gbps = parse_optional(t, r, "combine_gbps");
    k.dispatch_us = parse_optional(t, r, "dispatch_us");
    k.combine_us = parse_optional(t, r, "combine_us");
    k.source = r.fields[t.column("source")];
    rows.push_back(std::move(k));
  }
  return rows;
}

bool in_acceptance_set(const KernelBenchRow& row) {
  const bool instance = row.instance == "p6-b300.48xlarge" || row.instance == "p5.48xlarge";
  const bool mode = row.mode == "normal" || row.mode == "matched";
  return instance && mode && row.ranks >= 16 && row.ranks <= 64;
}

PreparedBench prepare_bench(const KernelBenchRow& row, const Catalog& catalog, const BenchShape& shape) {
  PreparedBench b;
  b.row = row;
  if (row.mode == "low-latency") {
    b.skip_reason = "low-latency kernels are not modelled";
    return b;
  }
  if (catalog.instances().count(row.instance) == 0) {
    b.skip_reason = "instance not in the catalog";
    return b;
  }
  if (catalog.dispatchers().count(row.transport) == 0) {
    b.skip_reason = "transport not in the dispatcher catalog";
    return b;
  }
  b.hw = DispatchHardware::from_catalog(catalog, row.instance, row.nodes);
  const int rpn = b.hw.instance.gpus;
  if (row.ranks != row.nodes * rpn && row.nodes != 1) {
    b.skip_reason = "ranks != nodes x GPUs per node";
    return b;
  }
  const auto model = make_dispatcher_model(catalog.dispatcher(row.transport));
  b.warnings = model->check(b.hw, row.ranks);
  // nccl-tests alltoall_perf rows: a uniform all-to-all of the whole buffer, not routed tokens.
  if (dispatcher_model_kind(model->spec()) == DispatcherModelKind::per_copy_nccl) {
    b.nccl_bytes_per_rank = static_cast<double>(shape.tokens) * shape.hidden * 2.0;
    b.dispatch = uniform_alltoall_traffic(row.ranks, rpn, b.nccl_bytes_per_rank);
    b.combine = b.dispatch;
  } else {
    RoutingSpec spec;
    spec.kind = RoutingKind::group_limited;
    spec.seed = shape.seed;
    // test_internode.py: num_experts = (256 // num_ranks) * num_ranks (240 at 24 ranks).
    spec.experts = (shape.experts / row.ranks) * row.ranks;
    if (spec.experts == 0) {
      b.skip_reason = "fewer experts than ranks";
      return b;
    }
    spec.top_k = shape.top_k;
    spec.ep_ranks = row.ranks;
    spec.ranks_per_node = rpn;
    spec.tokens_per_rank = shape.tokens;
    spec.groups = row.nodes;
    spec.topk_groups = std::min(row.nodes, shape.max_topk_groups);
    spec.sampling = RoutingSampling::per_token;
    const LayerRouting plan = RoutingPlanner(spec).plan(0, 0);
    b.dispatch = model->traffic(plan, token_bytes(shape.hidden, shape.fp8_dispatch));
    b.combine = model->traffic(plan, token_bytes(shape.hidden, false));
  }
  b.modelled = true;
  return b;
}

BenchPrediction predict_bench(const DispatcherModel& model, const PreparedBench& b) {
  if (!b.modelled) throw std::logic_error("predict_bench: row is not modelled");
  if (model.name() != b.row.transport) throw std::logic_error("predict_bench: model/transport mismatch");
  BenchPrediction p;
  const A2aCost d = model.cost(b.dispatch, A2aDirection::dispatch, b.hw);
  const A2aCost c = model.cost(b.combine, A2aDirection::combine, b.hw);
  p.dispatch_us = static_cast<double>(d.duration_ns) * 1e-3;
  p.combine_us = static_cast<double>(c.duration_ns) * 1e-3;
  if (dispatcher_model_kind(model.spec()) == DispatcherModelKind::per_copy_nccl) {
    const double n = static_cast<double>(b.row.ranks);
    const double factor = (n - 1) / n;  // nccl-tests alltoall busbw = algbw x (n-1)/n
    p.dispatch_gbps = gbps(b.nccl_bytes_per_rank, d.duration_ns) * factor;
    p.combine_gbps = gbps(b.nccl_bytes_per_rank, c.duration_ns) * factor;
  } else {
    p.dispatch_gbps = gbps(mean_counted(b.dispatch), d.duration_ns);
    p.combine_gbps = gbps(mean_counted(b.combine), c.duration_ns);
  }
  return p;
}

std::vector<double> bench_errors(const PreparedBench& b, const BenchPrediction& p) {
  std::vector<double> e;
  if (b.row.dispatch_gbps > 0) e.push_back(p.dispatch_gbps / b.row.dispatch_gbps - 1.0);
  if (b.row.combine_gbps > 0) e.push_back(p.combine_gbps / b.row.combine_gbps - 1.0);
  return e;
}

double median(std::vector<double> v) {
  return v.empty() ? 0.0 : median_of(std::move(v));
}

ParamSet fit_dispatcher_params(const DispatcherModel& model, const std::vector<const PreparedBench*>& rows) {
  // Work on a private copy of the model through its registry so `model` stays untouched.
  auto work = make_dispatcher_model(model.spec());
  ParamSet params = model.params();
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < params.all().size(); ++i)
    if (params.all()[i].fitted) free.push_back(i);
  auto objective = [&](const ParamSet& ps) {
    work->set_params(ps);
    double sum = 0;
    for (const PreparedBench* b : rows) {
      const BenchPrediction p = predict_bench(*work, *b);
      if (b->row.dispatch_gbps > 0) sum += std::pow(std::log(p.dispatch_gbps / b->row.dispatch_gbps), 2);
      if (b->row.combine_gbps > 0) sum += std::pow(std::log(p.combine_gbps / b->row.combine_gbps), 2);
    }
    return sum;
  };
  if (free.empty() || rows.empty()) return params;
  // Bounded pattern search (Hooke-Jeeves without the pattern move) in coordinates scaled to [0, 1]; a
  // parameter spanning two decades or more (min > 0) is searched on a log scale.
  auto is_log = [](const ModelParam& m) { return m.min > 0 && m.max / m.min >= 100; };
  auto to_unit = [&](const ModelParam& m) {
    return is_log(m) ? std::log(m.value / m.min) / std::log(m.max / m.min)
                     : (m.value - m.min) / (m.max - m.min);
  };
  auto from_unit = [&](const ModelParam& m, double u) {
    u = std::clamp(u, 0.0, 1.0);
    return is_log(m) ? m.min * std::exp(u * std::log(m.max / m.min)) : m.min + u * (m.max - m.min);
  };
  double best = objective(params);
  double step = 0.25;
  constexpr double kMinStep = 1e-4;  // 0.01 % of each parameter's (scaled) range
  while (step > kMinStep) {
    bool improved = false;
    for (const std::size_t i : free) {
      ModelParam& m = params.mutable_all()[i];
      for (const double dir : {+1.0, -1.0}) {
        const double old = m.value;
        m.value = from_unit(m, to_unit(m) + dir * step);
        if (m.value == old) continue;
        const double f = objective(params);
        if (f < best - 1e-12) {
          best = f;
          improved = true;
          break;
        }
        m.value = old;
      }
    }
    if (!improved) step *= 0.5;
  }
  return params;
}

}  // namespace moetwin
