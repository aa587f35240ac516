// The result files of a finished sweep: CSV (header + one row per point, point order) and HDF5 (the same
// table, one dataset per column, plus a provenance block). Neither holds a date or anything else that
// changes between runs: the same sweep gives byte-identical files.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "moetwin/sweep/point_result.hpp"

namespace moetwin {

// What the HDF5 provenance group records (strings as given on the command line, no absolute-path
// rewriting, so that runs from the same directory agree byte for byte).
struct SweepProvenance {
  std::string sweep_file;  // the sweep file as given
  std::string sweep_hash;  // SweepSpec::content_hash
  std::string sweep_name;
  std::string base_file;     // SweepSpec::base_path ("" = inline base)
  std::string profile_path;  // "" = built-in defaults
  std::string profile_hash;
  std::uint64_t seed = 0;  // the base scenario's routing seed
  std::string catalog_dir;
  std::string catalog_hash;  // sweep_catalog_hash (runner.hpp)
  std::uint64_t points = 0;
};

// Version of the sweep's result layout (its columns), written to the HDF5 file as schema_version and
// provenance/output_schema_version. 1: the columns up to iteration_hi_s; 2: adds a2a_terms; 3: the band
// renamed predicted_lo_s / predicted_hi_s (as in every other output) and novelty_level / novelty added.
inline constexpr int kSweepOutputSchemaVersion = 3;

// CSV text: header row of sweep_columns() names, then one row per point. Reals are printed with their
// column's digits (format_fixed), everything else as held; "" stays empty.
std::string render_sweep_csv(const std::map<std::size_t, PointRow>& rows);

// Writes the HDF5 file atomically (temporary file + rename). Layout (sweep/README.md):
//   /           attributes format = "moetwin-sweep", schema_version
//   /provenance attributes moetwin_version, git_revision, output_schema_version, sweep_file, ...
//   /points     attribute columns (names, comma-separated, in order); one dataset per column, one element
//               per point: int64 (-1 = no value), float64 (NaN = no value), int8 booleans (1, 0, -1 = no
//               value), fixed-length NUL-padded strings; attributes unit and meaning.
// Throws InputError when the file cannot be written.
void write_sweep_hdf5(const std::string& path, const SweepProvenance& provenance,
                      const std::map<std::size_t, PointRow>& rows);

}  // namespace moetwin
