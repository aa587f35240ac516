// Inside the calibration database code only: parsing an HDF5 image without checking its stamp. The
// reader calls it after verify_db_stamp; `stamp` calls it on an unstamped file in a child process only,
// since libhdf5 can crash or hang on a damaged file (calibration_db.hpp).
#pragma once

#include <string>
#include <string_view>

#include "moetwin/calibrate/calibration_db.hpp"

namespace moetwin {

// A whole file's bytes; InputError naming `path` for a missing file, a directory, something other than a
// regular file, or a file over kMaxCalibrationDbBytes.
std::string read_database_bytes(const std::string& path);
// `file` is a whole file's bytes (an HDF5 file, with or without a user block); `path` names it in errors.
CalibrationDb parse_calibration_db_image(std::string_view file, const std::string& path);
// The same in a child process with a time and memory limit (calibration_db_isolated.cpp): a crash, hang or
// exhaustion inside libhdf5 is an InputError naming `path`. What every read of a database calls.
CalibrationDb parse_calibration_db_image_isolated(std::string_view file, const std::string& path);

}  // namespace moetwin
