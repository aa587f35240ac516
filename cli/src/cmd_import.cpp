// `moetwin import megatron-log LOG...`: Megatron-LM / Megatron-Bridge logs -> live-run CSV rows.
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/validate/megatron_log.hpp"

namespace moetwin::cli {

void add_import_command(CLI::App& app, const GlobalOptions& /*global*/) {
  CLI::App* import =
      app.add_subcommand("import", "Import measurements users already have into moetwin's formats");
  import->require_subcommand(1);
  CLI::App* log = import->add_subcommand(
      "megatron-log", "Megatron-LM / Megatron-Bridge training logs -> live-run CSV rows (one per log)");
  struct Options {
    std::vector<std::string> logs;
    LogImportOptions import;
    std::string out;
  };
  auto opts = std::make_shared<Options>();
  log->add_option("LOG", opts->logs, "Training log files")->required()->check(CLI::ExistingFile);
  log->add_option("--model", opts->import.model, "Catalog model name (logs do not carry it)");
  log->add_option("--instance", opts->import.instance, "Catalog instance type (logs do not carry it)");
  log->add_option("--campaign", opts->import.campaign, "Campaign name (default: the log file's stem)");
  log->add_option(
      "--dispatcher", opts->import.dispatcher,
      "nccl-alltoall | deepep-uccl | deepep-nvshmem | deepep-v2-gin (needed for the 'flex' dispatcher)");
  log->add_option("--nodes", opts->import.nodes, "Node count (default: world size / --gpus-per-node)");
  log->add_option("--gpus-per-node", opts->import.gpus_per_node, "GPUs per node")->check(CLI::Range(1, 64));
  log->add_option("--skip-first", opts->import.skip_first, "Warm-up iterations to drop")
      ->check(CLI::Range(0, 100000));
  log->add_option("--stall-factor", opts->import.stall_factor,
                  "Report iterations above this x median as stalls")
      ->check(CLI::Range(1.0, 1000.0));
  log->add_option("--out", opts->out, "Output CSV (default stdout); written only if every log imports");
  log->callback([opts] {
    // Parse every log first: nothing is written unless all of them import.
    std::vector<ImportedRun> runs;
    for (const auto& path : opts->logs)
      runs.push_back(import_megatron_log(read_text_file(path), path, opts->import));
    std::ostringstream csv;
    write_csv_line(csv, live_run_columns());
    for (const auto& run : runs) {
      write_csv_line(csv, run.row);
      std::cerr << run.source << ": " << run.samples.size() << " iterations, " << run.steady_count
                << " steady; mean " << format_fixed(run.mean_iter_s, 4) << " s, median "
                << format_fixed(run.median_iter_s, 4) << " s";
      if (run.mean_tflops_gpu > 0)
        std::cerr << ", " << format_fixed(run.mean_tflops_gpu, 1) << " TFLOP/s/GPU";
      std::cerr << '\n';
      for (const auto& stall : run.stalls) {
        std::cerr << run.source << ":" << stall.line << ": stall: iteration " << stall.iteration << " took "
                  << format_fixed(stall.iter_s, 3) << " s (median " << format_fixed(run.median_iter_s, 3)
                  << " s)\n";
      }
    }
    emit_output(csv.str(), opts->out);
  });
}

}  // namespace moetwin::cli
