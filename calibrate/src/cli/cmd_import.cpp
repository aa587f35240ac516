// `moetwin-calibrate import nccl-tests|deepep FILE... --db OUT.h5`: appends imported experiments to
// the database (created when missing), written atomically.
#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/importers.hpp"
#include "moetwin/common/csv.hpp"

namespace moetwin::calibrate_cli {

namespace {

struct ImportOptions {
  std::vector<std::string> files;
  std::string db;
  std::string op;
  bool keep_wrong = false;
};

void run_import(const ImportOptions& o, const std::string& tool) {
  CalibrationDb db = read_or_create_calibration_db(o.db);
  if (db.experiments.empty()) db.provenance = base_provenance("moetwin-calibrate import " + tool);
  std::size_t added = 0;
  // Every file is read before the database is written: one refused file leaves it unchanged.
  for (const std::string& file : o.files) {
    const std::string text = read_text_file(file, input_kind::log);
    const ImportResult result = tool == "nccl-tests" ? import_nccl_tests(text, file, {o.op, o.keep_wrong})
                                                     : import_deepep(text, file);
    for (const std::string& warning : result.warnings) std::cerr << "warning: " << warning << '\n';
    for (const Experiment& e : result.experiments) db.put(e);
    std::cerr << file << ": " << result.experiments.size() << " experiments\n";
    added += result.experiments.size();
  }
  write_calibration_db(db, o.db);
  std::cout << "imported " << added << " experiments from " << o.files.size() << " file(s) into " << o.db
            << '\n';
}

}  // namespace

void add_import_commands(CLI::App& app) {
  CLI::App* import = app.add_subcommand("import", "Import other tools' logs into a calibration database");
  import->require_subcommand(1);
  auto nccl = std::make_shared<ImportOptions>();
  CLI::App* n =
      import->add_subcommand("nccl-tests", "nccl-tests *_perf stdout (all columns, both placements)");
  n->add_option("files", nccl->files, "Log files")->required()->check(CLI::ExistingFile);
  n->add_option("--db", nccl->db, "Database to create or extend")->required();
  n->add_option(
      "--op", nccl->op,
      "Collective, e.g. all_reduce (default: the log's 'Collective test starting' / 'Running:' line or "
      "*_perf command; never the file name)");
  n->add_flag("--keep-wrong", nccl->keep_wrong,
              "Import rows with #wrong > 0 as data (default: kind nccl_tests_wrong, left out of fits)");
  n->callback([nccl] { run_import(*nccl, "nccl-tests"); });
  auto deepep = std::make_shared<ImportOptions>();
  CLI::App* d = import->add_subcommand(
      "deepep", "DeepEP / UCCL-EP test_internode.py, test_intranode.py, test_low_latency.py stdout");
  d->add_option("files", deepep->files, "Log files")->required()->check(CLI::ExistingFile);
  d->add_option("--db", deepep->db, "Database to create or extend")->required();
  d->callback([deepep] { run_import(*deepep, "deepep"); });
}

}  // namespace moetwin::calibrate_cli
