// Kernel-level benchmark rows: reading, prediction, and calibration. See kernel_bench.hpp.
#include "moetwin/validate/kernel_bench.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
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

// The bytes a benchmark's GB/s counts, mean per rank: DeepEP v1 / UCCL tests the RDMA leg (distinct
// (token, node) pairs, own node included) internode and the NVLink leg (test_intranode.py) on one node;
// DeepEP v2 (deepep_version 2) its scale-out leg (bytes to other nodes); low-latency tests every copy.
double mean_counted(const A2aTraffic& t, int deepep_version, bool low_latency) {
  double sum = 0;
  for (const auto& l : t.legs) {
    if (low_latency) {
      sum += static_cast<double>(l.copies_out) * t.bytes_per_token;
    } else if (t.nodes <= 1) {
      sum += l.counted_nvlink;
    } else if (deepep_version == 2) {
      sum += l.network_out;
    } else {
      sum += l.counted_rdma;
    }
  }
  return t.legs.empty() ? 0 : sum / static_cast<double>(t.legs.size());
}

// The benchmark's routing of one layer: `tokens` per rank, top-k of the largest multiple of the ranks not
// above shape.experts (test_internode.py: (256 // num_ranks) * num_ranks, 240 at 24 ranks), scores grouped
// by node with `topk_groups` nodes per token, sampled per token; nullopt with fewer experts than ranks.
std::optional<LayerRouting> bench_routing(const KernelBenchRow& row, int ranks_per_node,
                                          const BenchShape& shape, std::int64_t tokens, int topk_groups) {
  RoutingSpec spec;
  spec.kind = RoutingKind::group_limited;
  spec.seed = shape.seed;
  spec.experts = (shape.experts / row.ranks) * row.ranks;
  if (spec.experts == 0) return std::nullopt;
  spec.top_k = shape.top_k;
  spec.ep_ranks = row.ranks;
  spec.ranks_per_node = ranks_per_node;
  spec.tokens_per_rank = tokens;
  spec.groups = row.nodes;
  spec.topk_groups = topk_groups;
  spec.sampling = RoutingSampling::per_token;
  return RoutingPlanner(spec).plan(0, 0);
}

}  // namespace

namespace {

// The campaign format's backend names, as the catalog's dispatcher records.
std::string catalog_transport(const std::string& backend) {
  if (backend == "uccl") return "deepep-uccl";
  if (backend == "deepep-v1-nvshmem") return "deepep-nvshmem";
  if (backend == "deepep-v2-gin-gda") return "deepep-v2-gin";
  return backend;  // listed as "transport not in the dispatcher catalog"
}

// "... (campaign ep-b200-use1-n16-20260901054057, harness ...)" -> the campaign id; "" without one.
std::string campaign_id(const std::string& source) {
  const std::string key = "campaign ";
  const std::size_t at = source.find(key);
  if (at == std::string::npos) return "";
  const std::size_t from = at + key.size();
  const std::size_t to = source.find_first_of(",) ", from);
  return source.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

KernelBenchRow campaign_row(const CsvTable& t, const CsvRow& r) {
  KernelBenchRow k;
  k.line = r.line;
  k.file = t.path;
  const auto field = [&](const char* column) -> const std::string& { return r.fields[t.column(column)]; };
  k.instance = field("instance");
  k.gpu = field("gpu");
  k.ranks = parse_positive_int(t, r, "ep", kMaxBenchRanks);
  k.nodes = parse_positive_int(t, r, "nodes", kMaxBenchNodes);
  k.transport = catalog_transport(field("backend"));
  const std::string& profile = field("profile");
  if (profile == "prefill") {
    k.mode = "normal";
  } else if (profile == "decode") {
    k.mode = "low-latency";
  } else {
    throw InputError({t.path, r.line}, "profile", profile,
                     "prefill (normal kernels) or decode (low-latency)");
  }
  k.tokens = parse_positive_int(t, r, "tokens_per_rank", 1 << 20);
  k.hidden = parse_positive_int(t, r, "hidden", 1 << 16);
  k.experts = parse_positive_int(t, r, "experts", 4096);
  k.top_k = parse_positive_int(t, r, "topk", 64);
  k.dispatch_dtype = field("dispatch_dtype");
  if (k.dispatch_dtype != "fp8" && k.dispatch_dtype != "bf16")
    throw InputError({t.path, r.line}, "dispatch_dtype", k.dispatch_dtype, "fp8 or bf16");
  // One slowest-rank dispatch+combine time: the summed form (dispatch_us set, the rest empty).
  k.dispatch_us = parse_optional(t, r, "latency_ms") * 1e3;
  if (!(k.dispatch_us > 0))
    throw InputError({t.path, r.line}, "latency_ms", field("latency_ms"), "a positive time in ms");
  // "n/a (LL API)": the low-latency API takes no SM count; the record's stands.
  const std::string& sms = field("comm_sms");
  if (!sms.empty() && sms.rfind("n/a", 0) != 0) k.comm_sms = parse_positive_int(t, r, "comm_sms", 1024);
  k.uniform_routing = field("routing").find("balanced") != std::string::npos;
  k.source = field("source");
  k.campaign = campaign_id(k.source);
  // The companion campaign's note: "'direction, not a measurement' per source at EP32".
  const std::string& notes = field("notes");
  k.direction_only = notes.find("direction, not a measurement") != std::string::npos &&
                     notes.find("EP" + std::to_string(k.ranks)) != std::string::npos;
  return k;
}

}  // namespace

std::vector<KernelBenchRow> read_kernel_bench(const std::string& path) {
  const CsvTable t = read_csv_file(path);
  std::vector<KernelBenchRow> rows;
  const bool campaign_format = t.has_column("backend");
  for (const CsvRow& r : t.rows) {
    if (campaign_format) {
      rows.push_back(campaign_row(t, r));
      continue;
    }
    KernelBenchRow k;
    k.line = r.line;
    k.file = path;
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

std::vector<CampaignSpread> campaign_spreads(const std::vector<KernelBenchRow>& rows) {
  const BenchShape shape;
  std::map<std::string, std::vector<std::pair<std::string, double>>> cells;
  for (const KernelBenchRow& r : rows) {
    // A time for the whole call: a summed row's one time, or dispatch + combine where both are given.
    const bool summed = r.dispatch_us > 0 && r.combine_us == 0 && r.dispatch_gbps == 0 && r.combine_gbps == 0;
    const double us =
        summed ? r.dispatch_us : (r.dispatch_us > 0 && r.combine_us > 0 ? r.dispatch_us + r.combine_us : 0);
    if (!(us > 0)) continue;
    const bool ll = r.mode == "low-latency";
    const std::int64_t tokens = r.tokens > 0 ? r.tokens : (ll ? shape.ll_tokens : shape.tokens);
    const std::string dtype =
        r.dispatch_dtype.empty() ? (shape.fp8_dispatch ? "fp8" : "bf16") : r.dispatch_dtype;
    const std::string cell = concat({r.instance, " ", std::to_string(r.ranks), " ", r.transport, " ", r.mode,
                                     " ", dtype, " ", std::to_string(tokens)});
    const std::string file = r.file.substr(r.file.find_last_of('/') + 1);
    const std::string who = r.campaign.empty() ? concat({file, ":", std::to_string(r.line)}) : r.campaign;
    cells[cell].emplace_back(who, us);
  }
  std::vector<CampaignSpread> out;
  for (const auto& [cell, times] : cells) {
    if (times.size() < 2) continue;
    CampaignSpread c;
    c.cell = cell;
    double lo = times.front().second, hi = lo;
    for (const auto& [who, us] : times) {
      c.who.push_back(concat({who, " ", format_fixed(us, 1), " us"}));
      lo = std::min(lo, us);
      hi = std::max(hi, us);
    }
    c.spread = hi / lo - 1.0;
    out.push_back(std::move(c));
  }
  return out;
}

bool in_acceptance_set(const KernelBenchRow& row) {
  if (row.direction_only) return false;
  const bool mode = row.mode == "normal" || row.mode == "matched" || row.mode == "low-latency";
  return mode && row.ranks >= 16 && row.ranks <= 64;
}

PreparedBench prepare_bench(const KernelBenchRow& row, const Catalog& catalog, const BenchShape& base) {
  // The row's own shape where it states one (campaign format), else the benchmark defaults.
  BenchShape shape = base;
  if (row.tokens > 0) (row.mode == "low-latency" ? shape.ll_tokens : shape.tokens) = row.tokens;
  if (row.hidden > 0) shape.hidden = row.hidden;
  if (row.experts > 0) shape.experts = row.experts;
  if (row.top_k > 0) shape.top_k = row.top_k;
  if (!row.dispatch_dtype.empty()) shape.fp8_dispatch = row.dispatch_dtype == "fp8";
  if (row.uniform_routing) shape.max_topk_groups = row.nodes;  // top-k over all experts: every node a group
  PreparedBench b;
  b.row = row;
  if (catalog.instances().count(row.instance) == 0) {
    b.skip_reason = "instance not in the catalog";
    return b;
  }
  if (catalog.dispatchers().count(row.transport) == 0) {
    b.skip_reason = "transport not in the dispatcher catalog";
    return b;
  }
  b.hw = DispatchHardware::from_catalog(catalog, row.instance, row.nodes);
  b.hw.comm_sms = row.comm_sms;  // the SMs the backend ran with, where the row states them
  const int rpn = b.hw.instance.gpus;
  if (row.ranks != row.nodes * rpn && row.nodes != 1) {
    b.skip_reason = "ranks != nodes x GPUs per node";
    return b;
  }
  const auto model = make_dispatcher_model(catalog.dispatcher(row.transport));
  b.warnings = model->check(b.hw, row.ranks);
  b.low_latency = row.mode == "low-latency";
  // One dispatch+combine time (dispatch_us set, the rest empty): compared on the sum.
  b.summed = row.dispatch_us > 0 && row.combine_us == 0 && row.dispatch_gbps == 0 && row.combine_gbps == 0;
  // DeepEP v2's benchmark counts GB/s on its scale-out leg, whose byte count in low-latency mode the
  // published rows do not pin down: its rows are compared on the operation's time.
  b.time_first = model->spec().deepep_version == 2;
  if (b.low_latency) {
    if (dispatcher_model_kind(model->spec()) == DispatcherModelKind::per_copy_nccl) {
      b.skip_reason = "NCCL's all-to-all has no low-latency kernels";
      return b;
    }
    if (!model->params().has("ll_latency_rounds")) {
      b.skip_reason = "the dispatcher record has no low-latency terms (ll_latency_rounds)";
      return b;
    }
    if (row.dispatch_gbps == 0 && row.combine_gbps == 0 && row.dispatch_us == 0 && row.combine_us == 0) {
      b.skip_reason = "no measured time or bandwidth";
      return b;
    }
    // test_low_latency.py: scores |randn| + 1 over all experts, top-k per token (no group limit).
    const std::optional<LayerRouting> plan = bench_routing(row, rpn, shape, shape.ll_tokens, row.nodes);
    if (!plan) {
      b.skip_reason = "fewer experts than ranks";
      return b;
    }
    b.dispatch = per_copy_traffic(*plan, token_bytes(shape.hidden, shape.fp8_dispatch));
    b.combine = per_copy_traffic(*plan, token_bytes(shape.hidden, false));
    b.modelled = true;
    return b;
  }
  // nccl-tests alltoall_perf rows: a uniform all-to-all of the whole buffer, not routed tokens.
  if (dispatcher_model_kind(model->spec()) == DispatcherModelKind::per_copy_nccl) {
    b.nccl_bytes_per_rank = static_cast<double>(shape.tokens) * shape.hidden * 2.0;
    b.dispatch = uniform_alltoall_traffic(row.ranks, rpn, b.nccl_bytes_per_rank);
    b.combine = b.dispatch;
  } else {
    const std::optional<LayerRouting> plan =
        bench_routing(row, rpn, shape, shape.tokens, std::min(row.nodes, shape.max_topk_groups));
    if (!plan) {
      b.skip_reason = "fewer experts than ranks";
      return b;
    }
    b.dispatch = model->traffic(*plan, token_bytes(shape.hidden, shape.fp8_dispatch));
    b.combine = model->traffic(*plan, token_bytes(shape.hidden, false));
  }
  b.modelled = true;
  return b;
}

BenchPrediction predict_bench(const DispatcherModel& model, const PreparedBench& b) {
  if (!b.modelled) throw std::logic_error("predict_bench: row is not modelled");
  if (model.name() != b.row.transport) throw std::logic_error("predict_bench: model/transport mismatch");
  BenchPrediction p;
  const auto call = [&](const A2aTraffic& t, A2aDirection dir) {
    if (!b.low_latency) return model.cost(t, dir, b.hw);
    std::optional<A2aCost> ll = model.low_latency_cost(t, dir, b.hw);
    if (!ll) throw std::logic_error("predict_bench: low-latency row for a model without low-latency terms");
    return *ll;
  };
  const A2aCost d = call(b.dispatch, A2aDirection::dispatch);
  const A2aCost c = call(b.combine, A2aDirection::combine);
  p.dispatch_us = static_cast<double>(d.duration_ns) * 1e-3;
  p.combine_us = static_cast<double>(c.duration_ns) * 1e-3;
  if (dispatcher_model_kind(model.spec()) == DispatcherModelKind::per_copy_nccl) {
    const double n = static_cast<double>(b.row.ranks);
    const double factor = (n - 1) / n;  // nccl-tests alltoall busbw = algbw x (n-1)/n
    p.dispatch_gbps = gbps(b.nccl_bytes_per_rank, d.duration_ns) * factor;
    p.combine_gbps = gbps(b.nccl_bytes_per_rank, c.duration_ns) * factor;
  } else {
    const int version = model.spec().deepep_version;
    p.dispatch_gbps = gbps(mean_counted(b.dispatch, version, b.low_latency), d.duration_ns);
    p.combine_gbps = gbps(mean_counted(b.combine, version, b.low_latency), c.duration_ns);
  }
  return p;
}

std::optional<double> bench_error(const PreparedBench& b, const BenchPrediction& p, A2aDirection direction) {
  // Predicted speed over measured - 1: GB/s where the row gives it, else measured time over predicted time
  // (the same ratio for a fixed byte count); a summed row's one time on the dispatch side.
  const KernelBenchRow& r = b.row;
  const bool dispatch = direction == A2aDirection::dispatch;
  if (b.summed) {
    if (!dispatch) return std::nullopt;
    return r.dispatch_us / (p.dispatch_us + p.combine_us) - 1.0;
  }
  const double meas_gbps = dispatch ? r.dispatch_gbps : r.combine_gbps;
  const double pred_gbps = dispatch ? p.dispatch_gbps : p.combine_gbps;
  const double meas_us = dispatch ? r.dispatch_us : r.combine_us;
  const double pred_us = dispatch ? p.dispatch_us : p.combine_us;
  if (meas_us > 0 && pred_us > 0 && (b.time_first || !(meas_gbps > 0))) return meas_us / pred_us - 1.0;
  if (meas_gbps > 0) return pred_gbps / meas_gbps - 1.0;
  return std::nullopt;
}

std::vector<double> bench_errors(const PreparedBench& b, const BenchPrediction& p) {
  std::vector<double> e;
  for (const A2aDirection d : {A2aDirection::dispatch, A2aDirection::combine}) {
    if (const std::optional<double> x = bench_error(b, p, d)) e.push_back(*x);
  }
  return e;
}

double median(std::vector<double> v) {
  return v.empty() ? 0.0 : median_of(std::move(v));
}

ParamSet fit_dispatcher_params(const DispatcherModel& model, const std::vector<const PreparedBench*>& rows,
                               const std::function<bool(const ModelParam&)>& free_if) {
  // Work on a private copy of the model through its registry so `model` stays untouched.
  auto work = make_dispatcher_model(model.spec());
  ParamSet params = model.params();
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < params.all().size(); ++i)
    if (params.all()[i].fitted && (!free_if || free_if(params.all()[i]))) free.push_back(i);
  auto objective = [&](const ParamSet& ps) {
    work->set_params(ps);
    double sum = 0;
    for (const PreparedBench* b : rows) {
      for (const double e : bench_errors(*b, predict_bench(*work, *b))) sum += std::pow(std::log1p(e), 2);
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

ParamSet calibrate_dispatcher_params(const DispatcherModel& model,
                                     const std::vector<const PreparedBench*>& rows) {
  std::vector<const PreparedBench*> normal, low_latency;
  for (const PreparedBench* b : rows) (b->low_latency ? low_latency : normal).push_back(b);
  const auto is_split = [](const ModelParam& m) { return is_low_latency_split_term(m.name); };
  // The low-latency kernels' own terms (ll_latency_rounds and the split): the normal kernels never read them.
  const auto low_latency_only = [](const ModelParam& m) { return m.name.rfind("ll_", 0) == 0; };
  const auto is_write_cost = [](const ModelParam& m) {
    return m.name == "per_message_s" || m.name == "ll_latency_rounds";
  };
  auto work = make_dispatcher_model(model.spec());
  work->set_params(model.params());
  if (!normal.empty())
    work->set_params(
        fit_dispatcher_params(*work, normal, [&](const ModelParam& m) { return !low_latency_only(m); }));
  if (low_latency.empty()) return work->params();
  // (2a) The per-copy view (per_copy_view: the record without the split) sets the write cost and the
  // handshake rounds, as for every record.
  auto per_copy = make_dispatcher_model(per_copy_view(model.spec()));
  ParamSet view = per_copy->params();
  for (ModelParam& m : view.mutable_all()) m.value = work->params().get(m.name, m.instance);
  per_copy->set_params(view);
  view = fit_dispatcher_params(*per_copy, low_latency, is_write_cost);
  ParamSet all = work->params();
  for (ModelParam& m : all.mutable_all())
    if (!is_split(m)) m.value = view.get(m.name, m.instance);
  work->set_params(all);
  // (2b) A record with the split: the work per destination rank and the write cost beside it, the rest held.
  work->set_params(fit_dispatcher_params(*work, low_latency, is_split));
  if (!normal.empty())
    work->set_params(fit_dispatcher_params(
        *work, normal, [&](const ModelParam& m) { return !is_write_cost(m) && !low_latency_only(m); }));
  return work->params();
}

}  // namespace moetwin
