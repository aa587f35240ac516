// `moetwin-calibrate stamp DB.h5... [--timeout S]`: checks and stamps databases written before the stamp
// (calibration_db.hpp), one after another; the first that cannot be stamped ends the command (exit 2),
// the ones before it are stamped.
#include <iostream>

#include "commands.hpp"
#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin::calibrate_cli {

void add_stamp_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> dbs;
    // A 1.35 MB database reads in well under a second; 60 s leaves room for a loaded machine.
    double timeout_s = 60;
  };
  auto o = std::make_shared<Options>();
  CLI::App* stamp = app.add_subcommand(
      "stamp",
      "Check databases written before moetwin-calibrate stamped its files (read in a child process that a "
      "damaged file cannot crash or hang) and stamp them in place; the data stay the same");
  stamp->add_option("dbs", o->dbs, "Databases")->required();
  stamp->add_option("--timeout", o->timeout_s, "Seconds libhdf5 may take to read one file (default 60)");
  stamp->callback([o] {
    for (const std::string& db : o->dbs) std::cout << stamp_calibration_db(db, o->timeout_s) << '\n';
  });
}

}  // namespace moetwin::calibrate_cli
