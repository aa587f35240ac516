// libFuzzer target for the calibration database reader on raw bytes: the input is a whole database file
// (seeded with the shipped H200 databases, calibrate/data/*.h5, and the files that once crashed or hung
// libhdf5), handed to read_calibration_db_bytes as it is, mutations included. The reader must return a
// database or throw InputError: a crash (inside libhdf5 too: issue 44 found two), a hang, a leak, undefined
// behaviour or any other exception is a bug. calibration_db_fuzz builds databases through the writer;
// this target is the one that hands the reader damaged files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/common/input_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const moetwin::CalibrationDb db = moetwin::read_calibration_db_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.h5");
    // A database that reads must also summarize: its samples feed the fitter's statistics.
    for (const auto& [name, e] : db.experiments) (void)e.stats();
  } catch (const moetwin::InputError&) {
    // A refused file, as promised.
  }
  return 0;
}
