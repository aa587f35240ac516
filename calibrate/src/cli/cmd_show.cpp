// `moetwin-calibrate show DB.h5 [--kind K]`: provenance and one line per experiment (median, count).
#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/common/numbers.hpp"

namespace moetwin::calibrate_cli {

void add_show_command(CLI::App& app) {
  struct Options {
    std::string db;
    std::string kind;
  };
  auto o = std::make_shared<Options>();
  CLI::App* show = app.add_subcommand("show", "Print a calibration database");
  show->add_option("db", o->db, "Database")->required();
  show->add_option("--kind", o->kind, "Only experiments of this kind");
  show->callback([o] {
    const CalibrationDb db = read_calibration_db(o->db);
    const Provenance& p = db.provenance;
    std::cout << "# gpu " << p.gpu_name << " x" << p.gpu_count << ", " << p.sm_count << " SMs, driver "
              << p.driver_version << ", cuda " << p.cuda_version << ", cublas " << p.cublas_version
              << ", nccl " << p.nccl_version << ", libfabric " << p.libfabric_version << " " << p.provider
              << "\n# host " << p.host << ", " << p.time_utc << ", moetwin " << p.git_revision << ", "
              << p.tool << '\n';
    std::cout << "name,kind,unit,count,median,p10,p90\n";
    for (const auto& [name, e] : db.experiments) {
      if (!o->kind.empty() && e.kind != o->kind) continue;
      const SummaryStats s = e.stats();
      std::cout << name << ',' << e.kind << ',' << e.unit << ',' << s.count << ','
                << format_significant(s.median, 6) << ',' << format_significant(s.p10, 6) << ','
                << format_significant(s.p90, 6) << '\n';
    }
  });
}

}  // namespace moetwin::calibrate_cli
