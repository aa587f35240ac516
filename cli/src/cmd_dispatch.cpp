// `moetwin dispatch`: predicts a standalone dispatch/combine kernel benchmark (one configuration, or every
// row of an ep-kernel-bench-style CSV with errors, optional calibration and leave-one-out error).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>

#include "commands.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/validate/kernel_bench.hpp"

namespace moetwin::cli {
namespace {

struct DispatchOptions {
  std::string instance;
  int ranks = 0;
  std::int64_t tokens = 4096;
  int hidden = 7168;
  int top_k = 8;
  int experts = 256;
  std::string transport;
  std::string dispatch_dtype = "fp8";
  std::uint64_t seed = 1;
  std::vector<std::string> bench;
  bool fit = false;
  std::string out;
};

std::string pct(double x) {
  return format_fixed(100.0 * x, 1) + "%";
}

Catalog load_catalog(const GlobalOptions& g) {
  return Catalog::load(g.catalog_dir.empty() ? Catalog::default_dir() : g.catalog_dir);
}

std::string run_single(const DispatchOptions& o, const Catalog& catalog) {
  const InstanceSpec& inst = catalog.instance(o.instance);
  if (o.ranks <= 0 || (o.ranks > inst.gpus && o.ranks % inst.gpus != 0))
    throw InputError(
        {"--ranks", 0}, "ranks", std::to_string(o.ranks),
        "a positive multiple of the instance's " + std::to_string(inst.gpus) + " GPUs (or fewer)");
  if (o.dispatch_dtype != "fp8" && o.dispatch_dtype != "bf16")
    throw InputError({"--dispatch-dtype", 0}, "dispatch-dtype", o.dispatch_dtype, "fp8 or bf16");
  KernelBenchRow row;
  row.instance = o.instance;
  row.ranks = o.ranks;
  row.nodes = std::max(1, o.ranks / inst.gpus);
  row.transport = o.transport;
  row.mode = o.transport == "nccl-alltoall" ? "matched" : "normal";
  BenchShape shape;
  shape.tokens = o.tokens;
  shape.hidden = o.hidden;
  shape.top_k = o.top_k;
  shape.experts = o.experts;
  shape.fp8_dispatch = o.dispatch_dtype == "fp8";
  shape.seed = o.seed;
  const PreparedBench b = prepare_bench(row, catalog, shape);
  if (!b.modelled) throw InputError({"dispatch", 0}, "transport", o.transport, b.skip_reason);
  const auto model = make_dispatcher_model(catalog.dispatcher(o.transport));
  const BenchPrediction p = predict_bench(*model, b);
  std::ostringstream s;
  s << "dispatch benchmark prediction: " << o.transport << " on " << row.nodes << " x " << o.instance << " ("
    << o.ranks << " ranks), " << o.tokens << " tokens/rank, hidden " << o.hidden << ", top-" << o.top_k
    << " of " << o.experts << " experts, dispatch " << o.dispatch_dtype << ", combine bf16\n";
  s << "routing: DeepEP test_internode (group-limited by node, topk_group=min(nodes,4)), seed " << o.seed
    << ", stream (routing_batch, layer 0, microbatch 0)\n";
  const bool nccl = o.transport == "nccl-alltoall";
  for (const A2aDirection dir : {A2aDirection::dispatch, A2aDirection::combine}) {
    const A2aTraffic& t = dir == A2aDirection::dispatch ? b.dispatch : b.combine;
    const A2aCost c = model->cost(t, dir, b.hw);
    const double us = static_cast<double>(c.duration_ns) * 1e-3;
    const double gbps = dir == A2aDirection::dispatch ? p.dispatch_gbps : p.combine_gbps;
    s << to_string(dir) << ": " << format_fixed(us, 1) << " us, " << format_fixed(gbps, 1) << " GB/s "
      << (nccl ? "(nccl-tests busbw)" : "(RDMA leg per GPU, as test_internode.py counts it)") << ", SMs "
      << c.sms << ", EFA " << format_fixed(c.network_bytes / 1e6, 1) << " MB, NVLink "
      << format_fixed(c.nvlink_bytes / 1e6, 1) << " MB (all ranks)\n";
    for (const auto& term : c.terms)
      s << "  " << term.name << ": " << format_fixed(term.seconds * 1e6, 1) << " us  (" << term.what << ")\n";
    if (c.kernel_ns > 0) s << "  (separate kernel, not in the benchmark time)\n";
  }
  for (const auto& w : b.warnings) s << "warning: " << w << '\n';
  return s.str();
}

std::string run_bench(const DispatchOptions& o, const Catalog& catalog) {
  std::vector<KernelBenchRow> rows;
  for (const std::string& file : o.bench) {
    std::vector<KernelBenchRow> more = read_kernel_bench(file);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  BenchShape shape;
  shape.seed = o.seed;
  std::vector<PreparedBench> prepared;
  prepared.reserve(rows.size());
  for (const auto& r : rows) {
    // The dispatcher models check the row's hardware and sizes without knowing the file: their errors are
    // given the row's file and line here.
    try {
      prepared.push_back(prepare_bench(r, catalog, shape));
    } catch (const InputError& e) {
      if (e.where().file == r.file) throw;
      throw InputError({r.file, r.line}, "row",
                       concat({r.transport, " on ", std::to_string(r.ranks), " ranks"}),
                       concat({"a configuration the dispatcher model accepts (", e.what(), ")"}));
    }
  }
  // One model per transport, optionally calibrated on the acceptance rows.
  std::map<std::string, std::unique_ptr<DispatcherModel>> models;
  std::map<std::string, std::vector<const PreparedBench*>> accept;
  for (const auto& b : prepared) {
    if (!b.modelled) continue;
    if (models.count(b.row.transport) == 0)
      models[b.row.transport] = make_dispatcher_model(catalog.dispatcher(b.row.transport));
    if (in_acceptance_set(b.row)) accept[b.row.transport].push_back(&b);
  }
  std::ostringstream s;
  std::map<std::string, std::vector<double>> loo_errors;
  if (o.fit) {
    for (auto& [name, model] : models) {
      const auto& set = accept[name];
      if (set.empty()) continue;
      // Leave one row out: fit on the others, predict the held-out row.
      for (const PreparedBench* held : set) {
        std::vector<const PreparedBench*> rest;
        for (const PreparedBench* b : set)
          if (b != held) rest.push_back(b);
        auto copy = make_dispatcher_model(model->spec());
        copy->set_params(calibrate_dispatcher_params(*model, rest));
        for (const double e : bench_errors(*held, predict_bench(*copy, *held)))
          loo_errors[name].push_back(std::fabs(e));
      }
      model->set_params(calibrate_dispatcher_params(*model, set));
    }
  }
  s << "# dispatch benchmark: predicted vs measured (";
  for (std::size_t i = 0; i < o.bench.size(); ++i) s << (i ? ", " : "") << o.bench[i];
  s << "); GB/s as each benchmark reports it; rows giving one dispatch+combine time are compared on it\n";
  s << "# * = calibration and acceptance set (catalog instances, 16-64 ranks, normal, matched or "
       "low-latency; not rows their source calls a direction, not a measurement)\n";
  s << "line,instance,ranks,transport,mode,meas_dispatch_gbps,pred_dispatch_gbps,err_dispatch,meas_combine_"
       "gbps,"
       "pred_combine_gbps,err_combine,meas_dispatch_us,pred_dispatch_us,meas_combine_us,pred_combine_us,"
       "note\n";
  std::map<std::string, std::vector<double>> acc_errors;
  std::map<std::string, std::vector<double>> all_errors;
  // The acceptance bar is per transport, instance and kernel mode (normal <= 10%, low-latency <= 15%).
  std::map<std::string, std::vector<double>> cell_errors;
  for (const auto& b : prepared) {
    const KernelBenchRow& r = b.row;
    auto num = [](double x, int digits) { return x > 0 ? format_fixed(x, digits) : std::string(); };
    s << (o.bench.size() > 1 ? r.file.substr(r.file.find_last_of('/') + 1) + ":" : std::string()) << r.line
      << ',' << r.instance << ',' << r.ranks << ',' << r.transport << ',' << r.mode << ',';
    if (!b.modelled) {
      s << num(r.dispatch_gbps, 1) << ",,," << num(r.combine_gbps, 1) << ",,," << num(r.dispatch_us, 0)
        << ",," << num(r.combine_us, 0) << ",,not modelled: " << b.skip_reason << '\n';
      continue;
    }
    const BenchPrediction p = predict_bench(*models.at(r.transport), b);
    // The error the calibration scores: on GB/s, or on time where the row compares on time.
    auto err = [&](A2aDirection d) {
      const std::optional<double> e = bench_error(b, p, d);
      return e ? pct(*e) : std::string();
    };
    s << num(r.dispatch_gbps, 1) << ',' << format_fixed(p.dispatch_gbps, 1) << ','
      << err(A2aDirection::dispatch) << ',' << num(r.combine_gbps, 1) << ','
      << format_fixed(p.combine_gbps, 1) << ',' << err(A2aDirection::combine) << ',' << num(r.dispatch_us, 0)
      << ',' << format_fixed(p.dispatch_us, 0) << ',' << num(r.combine_us, 0) << ','
      << format_fixed(p.combine_us, 0) << ',' << (in_acceptance_set(r) ? "*" : "") << '\n';
    for (const double e : bench_errors(b, p)) {
      all_errors[r.transport].push_back(std::fabs(e));
      if (!in_acceptance_set(r)) continue;
      acc_errors[r.transport].push_back(std::fabs(e));
      cell_errors[concat({r.transport, " ", r.instance, " ", b.low_latency ? "low-latency" : r.mode})]
          .push_back(std::fabs(e));
    }
  }
  s << "# median absolute error per transport, on GB/s or on time as each row compares (acceptance set | all "
       "modelled rows"
    << (o.fit ? " | leave-one-row-out on the acceptance set" : "") << ")\n";
  for (const auto& [name, errs] : all_errors) {
    s << "# " << name << ": " << (acc_errors.count(name) ? pct(median(acc_errors.at(name))) : "-")
      << " (n=" << (acc_errors.count(name) ? acc_errors.at(name).size() : 0) << ") | " << pct(median(errs))
      << " (n=" << errs.size() << ")";
    if (o.fit && loo_errors.count(name)) s << " | LOO " << pct(median(loo_errors.at(name)));
    s << '\n';
  }
  s << "# median absolute error per transport, instance and kernel mode (acceptance set)\n";
  for (const auto& [cell, errs] : cell_errors)
    s << "# " << cell << ": " << pct(median(errs)) << " (n=" << errs.size() << ")\n";
  // The same cell measured by more than one campaign or source: how far apart they are.
  const std::vector<CampaignSpread> spreads = campaign_spreads(rows);
  if (!spreads.empty()) {
    s << "# run-to-run spread: cells measured more than once, dispatch+combine time (max / min - 1)\n";
    for (const CampaignSpread& c : spreads) {
      s << "# " << c.cell << ": " << pct(c.spread) << " (";
      for (std::size_t i = 0; i < c.who.size(); ++i) s << (i ? "; " : "") << c.who[i];
      s << ")\n";
    }
  }
  s << "# parameters" << (o.fit ? " (fitted on the acceptance set)" : " (defaults)") << "\n";
  for (const auto& [name, model] : models)
    for (const auto& prm : model->params().all())
      s << "# " << name << '.' << prm.name << (prm.instance.empty() ? "" : "@" + prm.instance) << " = "
        << format_significant(prm.value, 4) << ' ' << prm.unit << (prm.fitted ? " [fitted]" : "") << '\n';
  return s.str();
}

}  // namespace

void add_dispatch_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "dispatch",
      "Predict a standalone MoE dispatch/combine kernel benchmark (DeepEP tests, nccl-tests alltoall)");
  auto o = std::make_shared<DispatchOptions>();
  cmd->add_option("--instance", o->instance, "Catalog instance, e.g. p6-b300.48xlarge");
  cmd->add_option("--ranks", o->ranks, "EP ranks (GPUs)");
  cmd->add_option("--tokens", o->tokens, "Tokens per rank (default 4096)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--hidden", o->hidden, "Hidden size (default 7168)")->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--top-k", o->top_k, "Experts per token (default 8)")->check(CLI::Range(1, 64));
  cmd->add_option("--experts", o->experts, "Routed experts (default 256)")->check(CLI::Range(1, 4096));
  cmd->add_option("--transport", o->transport,
                  "nccl-alltoall | deepep-uccl | deepep-nvshmem | deepep-v2-gin");
  cmd->add_option("--dispatch-dtype", o->dispatch_dtype, "fp8 (default) or bf16; combine is bf16");
  cmd->add_option("--seed", o->seed, "Routing seed (default 1)");
  cmd->add_option(
         "--bench", o->bench,
         "Predict every row of ep-kernel-bench-style CSVs (repeat or list several: calibrated together)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--fit", o->fit,
                "With --bench: calibrate fitted parameters on the acceptance rows, print LOO error");
  cmd->add_option("--out", o->out, "Output file (default stdout)");
  cmd->callback([o, &global] {
    const Catalog catalog = load_catalog(global);
    if (!o->bench.empty()) {
      emit_output(run_bench(*o, catalog), o->out);
      return;
    }
    if (o->instance.empty() || o->transport.empty() || o->ranks == 0)
      throw InputError({"dispatch", 0}, "--instance, --ranks and --transport are required (or --bench FILE)");
    emit_output(run_single(*o, catalog), o->out);
  });
}

}  // namespace moetwin::cli
