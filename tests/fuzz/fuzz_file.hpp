// For the fuzz targets of loaders that read a path (fitted profile, calibration database): the input is
// written to one temporary file per fuzzer process and read back from there.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace moetwin_fuzz {

inline std::string scratch_path(const std::string& extension) {
  return (std::filesystem::temp_directory_path() / ("moetwin-fuzz-" + std::to_string(::getpid()) + extension))
      .string();
}

inline void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace moetwin_fuzz
