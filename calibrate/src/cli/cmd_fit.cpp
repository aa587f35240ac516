// `moetwin-calibrate fit --db DB.h5 [--db MORE.h5 ...] --gpu H200-SXM --out PROFILE.toml`: fits the
// profile and reports how well the GEMM curves reproduce the held-back third of the shapes and how well
// the [nvlink] fit reproduces the NCCL runs on >= 2 GPUs. Databases with FP8 GEMM runs (`gemm --precision
// fp8`) also get [gemm_fp8] curves at the catalog FP8 peak, checked the same way (reported last).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "moetwin/calibrate/attention_fit.hpp"
#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/statistics.hpp"

namespace moetwin::calibrate_cli {
namespace {

// The databases in order; a later experiment of the same name replaces the earlier one (a re-measurement
// on the same node). Provenance is the first's; every database must come from the same GPU model.
// Then each `pool` database, a repeated run: its samples join those of the experiment of the same name
// (same_measurement, else an input error), so the fit reads the median over every run; experiments only it
// has are added.
CalibrationDb merged_db(const std::vector<std::string>& paths, const std::vector<std::string>& pool) {
  CalibrationDb out = read_calibration_db(paths.front());
  check_fit_samples(out, paths.front());
  const auto same_gpu = [&](const CalibrationDb& more, const std::string& path) {
    if (!more.provenance.gpu_name.empty() && !out.provenance.gpu_name.empty() &&
        more.provenance.gpu_name != out.provenance.gpu_name) {
      throw InputError({path, 0}, "provenance gpu_name", more.provenance.gpu_name,
                       out.provenance.gpu_name + " as in " + paths.front() + " (one GPU model per profile)");
    }
  };
  for (std::size_t i = 1; i < paths.size(); ++i) {
    CalibrationDb more = read_calibration_db(paths[i]);
    check_fit_samples(more, paths[i]);
    same_gpu(more, paths[i]);
    for (auto& [name, e] : more.experiments) out.put(std::move(e));
  }
  for (const std::string& path : pool) {
    const CalibrationDb more = read_calibration_db(path);
    check_fit_samples(more, path);
    same_gpu(more, path);
    pool_repeated_run(out, more, path);
  }
  return out;
}

InstanceSpec fit_instance(const Catalog& catalog, const std::string& gpu, const std::string& name) {
  if (!name.empty()) {
    const InstanceSpec& i = catalog.instance(name);
    if (i.gpu != gpu) throw InputError({"--instance", 0}, "gpu", i.gpu, gpu + " (the --gpu of the fit)");
    return i;
  }
  for (const auto& [n, i] : catalog.instances()) {
    if (i.gpu == gpu) return i;
  }
  throw InputError({"--gpu", 0}, "gpu", gpu, "a GPU some catalog instance has (for the NVLink fit)");
}

// One line: how many shapes, median and max relative error, how many within 5 %.
void print_gemm_error_summary(const std::string& label, const std::vector<HeldOutShape>& shapes) {
  if (shapes.empty()) return;
  std::vector<double> e;
  for (const HeldOutShape& h : shapes) e.push_back(h.relative_error());
  const auto within = std::count_if(e.begin(), e.end(), [](double x) { return x <= 0.05; });
  std::cerr << label << ": " << e.size() << " held back, median error " << format_fixed(100 * median_of(e), 1)
            << " %, max " << format_fixed(100 * *std::max_element(e.begin(), e.end()), 1)
            << " %, within 5 %: " << within << " of " << e.size() << '\n';
}

// The held-back fold's shapes and the cross-validation `cv`; `what` prefixes the headings ("" or "FP8 ").
void print_gemm_check(const std::string& what, const std::vector<HeldOutShape>& heldout,
                      const std::vector<HeldOutShape>& cv) {
  std::cerr << "held-back " << what << "GEMM shapes (fold 0 of " << kGemmFolds
            << " by FNV-1a of the name; the profile's curves are fitted without them), measured vs "
               "predicted:\n";
  for (const HeldOutShape& h : heldout) {
    std::cerr << "  " << h.name << ": " << format_fixed(h.measured_s * 1e6, 2) << " us vs "
              << format_fixed(h.predicted_s * 1e6, 2) << " us (" << format_fixed(100 * h.relative_error(), 1)
              << " %)\n";
  }
  print_gemm_error_summary(what + "fold 0 (the profile)", heldout);
  // Every shape out of sample once: the same fit without each third in turn.
  std::cerr << kGemmFolds << "-fold cross-validation of the " << what
            << "GEMM curves (every shape predicted by a fit without its third); shapes above 5 %:\n";
  for (const HeldOutShape& h : cv) {
    if (h.relative_error() <= 0.05) continue;
    std::cerr << "  fold " << h.fold << " " << h.name << ": " << format_fixed(h.measured_s * 1e6, 2)
              << " us vs " << format_fixed(h.predicted_s * 1e6, 2) << " us ("
              << format_fixed(100 * h.relative_error(), 1) << " %)\n";
  }
  for (int fold = 0; fold < kGemmFolds; ++fold) {
    std::vector<HeldOutShape> in_fold;
    for (const HeldOutShape& h : cv) {
      if (h.fold == fold) in_fold.push_back(h);
    }
    print_gemm_error_summary(what + "fold " + std::to_string(fold), in_fold);
  }
  print_gemm_error_summary(what + "all folds", cv);
}

// One line per curve: floor, hidden part, memory efficiency and the held-back errors.
void print_gemm_classes(const std::string& what, const std::map<std::string, GemmCurve>& curves) {
  for (const auto& [op, g] : curves) {
    std::cerr << what << op << ": floor " << format_fixed(g.floor_s * 1e6, 2)
              << " us (hidden behind the previous kernel " << format_fixed(g.hidden_floor_s * 1e6, 2)
              << " us), memory efficiency "
              << (g.memory_efficiency > 0 ? format_fixed(g.memory_efficiency, 2) : std::string("none"))
              << ", " << g.heldout_shapes << " held back, median error "
              << format_fixed(100 * g.heldout_median_error, 1) << " %, max "
              << format_fixed(100 * g.heldout_max_error, 1)
              << " %, within 5 %: " << format_fixed(100 * g.heldout_within_5pct, 0) << " %\n";
  }
}

void print_nvlink_report(const NvlinkFitReport& r) {
  const NvlinkCollectiveFit& f = r.fit;
  std::cerr << "NVLink collectives (" << f.points << " NCCL runs on >= 2 GPUs): call latency "
            << format_fixed(f.call_latency_s * 1e6, 2) << " us, step latency "
            << format_fixed(f.step_latency_s * 1e6, 2) << " us"
            << (r.step_latency_from_prior ? " (prior: one step count cannot separate it)" : "")
            << "\n  op ranks bytes measured_us predicted_us error_pct loo_error_pct uncalibrated_error_pct "
               "busbw_GBps\n";
  std::vector<double> prior;
  for (const NvlinkPointResult& p : r.points) {
    const CollectiveKind kind = nvlink_op_kind(p.point.op, "[nvlink]");
    const double busbw = p.point.bytes / p.point.measured_s * bus_bandwidth_factor(kind, p.point.ranks);
    std::cerr << "  " << p.point.op << ' ' << p.point.ranks << ' ' << format_exact(p.point.bytes) << ' '
              << format_fixed(p.point.measured_s * 1e6, 2) << ' ' << format_fixed(p.predicted_s * 1e6, 2)
              << ' ' << format_fixed(100 * (p.predicted_s / p.point.measured_s - 1), 1) << ' '
              << format_fixed(100 * (p.loo_predicted_s / p.point.measured_s - 1), 1) << ' '
              << format_fixed(100 * (p.prior_predicted_s / p.point.measured_s - 1), 1) << ' '
              << format_fixed(busbw / 1e9, 1) << '\n';
    prior.push_back(std::abs(p.prior_predicted_s / p.point.measured_s - 1));
  }
  std::sort(prior.begin(), prior.end());
  std::cerr << "  median error " << format_fixed(100 * f.median_error, 1) << " %, max "
            << format_fixed(100 * f.max_error, 1) << " %; leave-one-out median "
            << format_fixed(100 * f.loo_median_error, 1) << " %, max "
            << format_fixed(100 * f.loo_max_error, 1) << " %; uncalibrated model (defaults) median "
            << format_fixed(100 * percentile_sorted(prior, 0.5), 1) << " %, max "
            << format_fixed(100 * prior.back(), 1) << " %\n";
  // Across GPU counts: each count's fit predicting the others (out of sample), then all in sample; the
  // efficiency indexed by per-rank buffer per GPU count (the profile's) and by per-step message (schema 3).
  if (!r.cross_counts.empty()) {
    std::cerr
        << "  across GPU counts (relative time error; large = buffers >= 16 MiB, signed: > 0 too slow):\n"
           "  indexing fit_ranks -> predicted_ranks points median_pct p90_pct max_pct large_points "
           "large_median_pct large_min_pct large_max_pct\n";
  }
  const auto counts = [](const std::vector<int>& ranks) {
    std::string out;
    for (const int n : ranks) out += (out.empty() ? "" : ",") + std::to_string(n);
    return out;
  };
  for (const NvlinkCrossCountErrors& c : r.cross_counts) {
    std::cerr << "  " << to_string(c.indexing) << ' ' << counts(c.fit_ranks) << " -> "
              << counts(c.predict_ranks) << ' ' << c.points << ' ' << format_fixed(100 * c.median_error, 1)
              << ' ' << format_fixed(100 * c.p90_error, 1) << ' ' << format_fixed(100 * c.max_error, 1) << ' '
              << c.large_points << ' ' << format_fixed(100 * c.large_median_error, 1) << ' '
              << format_fixed(100 * c.large_min_signed, 1) << ' ' << format_fixed(100 * c.large_max_signed, 1)
              << '\n';
  }
}

// One line per attention-kernel curve: its points, leave-one-out error and the GQA rows' check.
void print_attention_report(const std::vector<AttentionCurveReport>& report) {
  for (const AttentionCurveReport& r : report) {
    std::cerr << "attention kernel " << r.key << ": " << r.calls << " calls, " << r.points
              << " sizes; leave-one-out time error median " << format_fixed(100 * r.loo_median, 1)
              << " %, max " << format_fixed(100 * r.loo_max, 1) << " %";
    if (r.gqa_checked > 0) {
      std::cerr << "; " << r.gqa_checked << " GQA calls predicted by it: median "
                << format_fixed(100 * r.gqa_median, 1) << " %, mean signed "
                << format_fixed(100 * r.gqa_mean_signed, 1) << " %";
    }
    std::cerr << '\n';
  }
}

}  // namespace

void add_fit_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> dbs;
    std::vector<std::string> pool_dbs;
    std::string instance;
    std::string gpu = "H200-SXM";
    std::string out;
    std::string catalog;
    std::string source_name;
    std::string attention_csv;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("fit", "Fit a calibration profile (TOML) from a calibration database");
  cmd->add_option("--db", o->dbs,
                  "Calibration database; repeat to combine runs (a later database's experiment replaces an "
                  "earlier one of the same name)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--pool-db", o->pool_dbs,
         "A repeated run of experiments in --db; repeat. Samples of the same experiment pool (the fit "
         "reads the median over all runs)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--instance", o->instance,
                  "Catalog instance the NCCL runs were on (default: the first with --gpu)");
  cmd->add_option("--gpu", o->gpu, "Catalog GPU the profile is for")->capture_default_str();
  cmd->add_option("--out", o->out, "Profile to write (atomically); '-' = stdout")->required();
  cmd->add_option("--catalog", o->catalog, "Catalog directory (default: the shipped one)");
  cmd->add_option("--source-name", o->source_name,
                  "Name of the database recorded in the profile (default --db)");
  cmd->add_option("--attention-csv", o->attention_csv,
                  "Attention sweep of calibrate/scripts/torch_layer_probe.py --attention-sweep: adds the "
                  "[attention_kernel] curves (without it attention is priced as a GEMM of its shape)")
      ->check(CLI::ExistingFile);
  cmd->callback([o] {
    const Catalog catalog = Catalog::load(o->catalog.empty() ? Catalog::default_dir() : o->catalog);
    FitOptions options;
    options.gpu = o->gpu;
    const GpuSpec& gpu = catalog.gpu(o->gpu);
    options.peak_bf16_flops = gpu.bf16_flops;
    options.peak_fp8_flops = gpu.fp8_flops;
    options.gpu_spec = gpu;
    options.instance = fit_instance(catalog, o->gpu, o->instance);
    std::string joined;
    for (const std::string& d : o->dbs) joined += (joined.empty() ? "" : " + ") + d;
    for (const std::string& d : o->pool_dbs) joined += " + pooled " + d;
    options.source_db = o->source_name.empty() ? joined : o->source_name;
    const CalibrationDb db = merged_db(o->dbs, o->pool_dbs);
    FitResult fit = fit_calibration_profile(db, options);
    if (!o->attention_csv.empty()) {
      std::vector<AttentionCurveReport> report;
      fit.profile.attention_kernels = fit_attention_kernels(
          read_attention_csv(o->attention_csv), fit.profile.peak_bf16_flops, o->attention_csv, &report);
      fit.profile.source_db += " + attention " + o->attention_csv;
      print_attention_report(report);
    }
    const std::string text = format_calibration_profile(fit.profile);
    // The profile is read back by the loader moetwin uses before anything is written: a profile moetwin
    // would refuse is never written (issue 55 item 4).
    try {
      (void)parse_calibration_profile(text, o->out);
    } catch (const InputError& e) {
      throw InputError({o->out, 0},
                       std::string("the fitted profile does not load back, nothing written: ") + e.what());
    }
    if (o->out == "-")
      std::cout << text;
    else
      write_file_atomically(o->out, text);
    print_gemm_check("", fit.heldout, gemm_cross_validation(db, options, &fit));
    if (fit.nvlink) print_nvlink_report(*fit.nvlink);
    print_gemm_classes("", fit.profile.gemm);
    // The FP8 curves after everything else, so that a report of a db without FP8 runs reads as before.
    if (!fit.profile.gemm_fp8.empty()) {
      print_gemm_check("FP8 ", fit.heldout_fp8, gemm_cross_validation(db, options, &fit, GemmPrecision::fp8));
      print_gemm_classes("fp8 ", fit.profile.gemm_fp8);
    }
  });
}

}  // namespace moetwin::calibrate_cli
