// `moetwin-calibrate fit --db DB.h5 --gpu H200-SXM --out PROFILE.toml`: fits the profile and reports
// how well the GEMM curves reproduce the held-back third of the shapes.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/fitter.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::calibrate_cli {

void add_fit_command(CLI::App& app) {
  struct Options {
    std::string db;
    std::string gpu = "H200-SXM";
    std::string out;
    std::string catalog;
    std::string source_name;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("fit", "Fit a calibration profile (TOML) from a calibration database");
  cmd->add_option("--db", o->db, "Calibration database")->required()->check(CLI::ExistingFile);
  cmd->add_option("--gpu", o->gpu, "Catalog GPU the profile is for")->capture_default_str();
  cmd->add_option("--out", o->out, "Profile to write (atomically); '-' = stdout")->required();
  cmd->add_option("--catalog", o->catalog, "Catalog directory (default: the shipped one)");
  cmd->add_option("--source-name", o->source_name,
                  "Name of the database recorded in the profile (default --db)");
  cmd->callback([o] {
    const Catalog catalog = Catalog::load(o->catalog.empty() ? Catalog::default_dir() : o->catalog);
    FitOptions options;
    options.gpu = o->gpu;
    options.peak_bf16_flops = catalog.gpu(o->gpu).bf16_flops;
    options.source_db = o->source_name.empty() ? o->db : o->source_name;
    const FitResult fit = fit_calibration_profile(read_calibration_db(o->db), options);
    const std::string text = format_calibration_profile(fit.profile);
    if (o->out == "-")
      std::cout << text;
    else
      write_file_atomically(o->out, text);
    std::cerr << "held-back GEMM shapes (every third by name), measured vs predicted:\n";
    for (const HeldOutShape& h : fit.heldout) {
      std::cerr << "  " << h.name << ": " << format_fixed(h.measured_s * 1e6, 2) << " us vs "
                << format_fixed(h.predicted_s * 1e6, 2) << " us ("
                << format_fixed(100 * h.relative_error(), 1) << " %)\n";
    }
    std::vector<double> all;
    for (const HeldOutShape& h : fit.heldout) all.push_back(h.relative_error());
    std::sort(all.begin(), all.end());
    if (!all.empty()) {
      const auto within = std::count_if(all.begin(), all.end(), [](double e) { return e <= 0.05; });
      std::cerr << "all: " << all.size() << " held back, median error "
                << format_fixed(100 * percentile_sorted(all, 0.5), 1) << " %, max "
                << format_fixed(100 * all.back(), 1) << " %, within 5 %: " << within << " of " << all.size()
                << '\n';
    }
    for (const auto& [op, g] : fit.profile.gemm) {
      std::cerr << op << ": floor " << format_fixed(g.floor_s * 1e6, 2) << " us, memory efficiency "
                << (g.memory_efficiency > 0 ? format_fixed(g.memory_efficiency, 2) : std::string("none"))
                << ", " << g.heldout_shapes << " held back, median error "
                << format_fixed(100 * g.heldout_median_error, 1) << " %, max "
                << format_fixed(100 * g.heldout_max_error, 1)
                << " %, within 5 %: " << format_fixed(100 * g.heldout_within_5pct, 0) << " %\n";
    }
  });
}

}  // namespace moetwin::calibrate_cli
