// libFuzzer target for the calibration database reader on checksum-valid images (issue 55 item 1): the
// input is a whole database file; after libFuzzer mutates it, its stamp is recomputed over the mutated
// HDF5 bytes, as anyone can (XXH64 is public), so every mutant passes the checksum and reaches libhdf5.
// The reader must return a database or throw InputError: libhdf5 runs in a child process with a time and
// memory limit (calibration_db_isolated.cpp), so a crash or hang inside it is a refused file, never a
// crash or hang of moetwin. Seeds: the shipped databases and the four crafted files that crashed (H5HG_read,
// H5A__close) or hung libhdf5 with a correct stamp (tests/fuzz/regressions/calibration_db_stamped/).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/calibrate/db_file_stamp.hpp"
#include "moetwin/common/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.size() <= moetwin::kDbStampBytes) return 0;
  // The HDF5 bytes after the stamp's room, stamped afresh.
  const std::string_view hdf5 = input.substr(moetwin::kDbStampBytes);
  const std::string file =
      moetwin::make_db_stamp(hdf5, moetwin::kCalibrationDbSchemaVersion) + std::string(hdf5);
  try {
    const moetwin::CalibrationDb db = moetwin::read_calibration_db_bytes(file, "fuzz.h5");
    for (const auto& [name, e] : db.experiments) (void)e.stats();
  } catch (const moetwin::InputError&) {
    // A refused file, as promised: crashes and hangs inside libhdf5 end up here.
  }
  return 0;
}
