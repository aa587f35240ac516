// The stamp in a calibration database's HDF5 user block (format in db_file_stamp.hpp).
#include "moetwin/calibrate/db_file_stamp.hpp"

#include <array>
#include <bit>
#include <cstring>

#include "moetwin/calibrate/calibration_db.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

// XXH64 constants (xxhash_spec.md, "XXH64 algorithm description").
constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

std::uint64_t read64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

std::uint32_t read32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

std::uint64_t xxh_round(std::uint64_t acc, std::uint64_t input) {
  return std::rotl(acc + input * kPrime2, 31) * kPrime1;
}

std::uint64_t merge_round(std::uint64_t acc, std::uint64_t lane) {
  return (acc ^ xxh_round(0, lane)) * kPrime1 + kPrime4;
}

constexpr std::string_view kSchemaKey = "schema_version ";
constexpr std::string_view kBytesKey = "hdf5_bytes ";
constexpr std::string_view kHashKey = "xxh64 ";
// A length in the stamp is at most 15 decimal digits (10^15 bytes, far above any database): the
// parser never overflows.
constexpr std::size_t kMaxDecimalDigits = 15;

std::string hex16(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = kDigits[v & 0xf];
  return out;
}

// One "key value\n" line of the stamp starting at `pos`: the value's text, `pos` moved past the line.
// Throws when the line does not begin with `key` or has no end inside the stamp.
std::string_view stamp_line(std::string_view stamp, std::size_t& pos, std::string_view key,
                            const std::string& path) {
  const std::size_t end = stamp.find('\n', pos);
  if (end == std::string_view::npos || stamp.compare(pos, key.size(), key) != 0)
    throw InputError(
        {path, 0}, "database stamp", "no line '" + std::string(key) + "...'",
        "the stamp moetwin-calibrate writes (the file is damaged, or not a calibration database)");
  const std::string_view value = stamp.substr(pos + key.size(), end - pos - key.size());
  pos = end + 1;
  return value;
}

std::uint64_t stamp_decimal(std::string_view text, std::string_view key, const std::string& path) {
  if (text.empty() || text.size() > kMaxDecimalDigits)
    throw InputError({path, 0}, "database stamp " + std::string(key), std::string(text),
                     "a decimal number of 1 to 15 digits");
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9')
      throw InputError({path, 0}, "database stamp " + std::string(key), std::string(text),
                       "a decimal number");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::uint64_t stamp_hex(std::string_view text, const std::string& path) {
  if (text.size() != 16)
    throw InputError({path, 0}, "database stamp xxh64", std::string(text), "16 lowercase hex digits");
  std::uint64_t v = 0;
  for (const char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      throw InputError({path, 0}, "database stamp xxh64", std::string(text), "16 lowercase hex digits");
    v = (v << 4) | static_cast<std::uint64_t>(digit);
  }
  return v;
}

}  // namespace

std::uint64_t xxh64(std::string_view bytes, std::uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* const end = p + bytes.size();
  std::uint64_t h;
  if (bytes.size() >= 32) {
    std::uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    const auto* const limit = end - 32;
    do {
      v1 = xxh_round(v1, read64(p));
      v2 = xxh_round(v2, read64(p + 8));
      v3 = xxh_round(v3, read64(p + 16));
      v4 = xxh_round(v4, read64(p + 24));
      p += 32;
    } while (p <= limit);
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
    h = merge_round(h, v1);
    h = merge_round(h, v2);
    h = merge_round(h, v3);
    h = merge_round(h, v4);
  } else {
    h = seed + kPrime5;
  }
  h += static_cast<std::uint64_t>(bytes.size());
  for (; end - p >= 8; p += 8) h = std::rotl(h ^ xxh_round(0, read64(p)), 27) * kPrime1 + kPrime4;
  if (end - p >= 4) {
    h = std::rotl(h ^ (static_cast<std::uint64_t>(read32(p)) * kPrime1), 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) h = std::rotl(h ^ (*p * kPrime5), 11) * kPrime1;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

std::string make_db_stamp(std::string_view hdf5, int schema_version) {
  std::string stamp = std::string(kDbStampMagic) + std::to_string(kDbStampVersion) + "\n" +
                      std::string(kSchemaKey) + std::to_string(schema_version) + "\n" +
                      std::string(kBytesKey) + std::to_string(hdf5.size()) + "\n" + std::string(kHashKey) +
                      hex16(xxh64(hdf5)) + "\n";
  stamp.resize(kDbStampBytes, '\0');
  return stamp;
}

bool has_db_stamp(std::string_view file) {
  return file.substr(0, kDbStampMagic.size()) == kDbStampMagic;
}

std::string_view verify_db_stamp(std::string_view file, const std::string& path) {
  if (file.size() < kDbStampBytes || !has_db_stamp(file))
    throw InputError({path, 0}, "database stamp", "missing", "the stamp moetwin-calibrate writes");
  const std::string_view stamp = file.substr(0, kDbStampBytes);
  std::size_t pos = kDbStampMagic.size();
  const std::string_view version = stamp_line(stamp, pos, "", path);
  if (version != std::to_string(kDbStampVersion))
    throw InputError(
        {path, 0}, "database stamp version", std::string(version),
        std::to_string(kDbStampVersion) + " (a newer moetwin-calibrate wrote it, or it is damaged)");
  const std::uint64_t schema =
      stamp_decimal(stamp_line(stamp, pos, kSchemaKey, path), "schema_version", path);
  if (schema != static_cast<std::uint64_t>(kCalibrationDbSchemaVersion))
    throw InputError({path, 0}, "database stamp schema_version", std::to_string(schema),
                     std::to_string(kCalibrationDbSchemaVersion));
  const std::uint64_t length = stamp_decimal(stamp_line(stamp, pos, kBytesKey, path), "hdf5_bytes", path);
  const std::uint64_t stored = stamp_hex(stamp_line(stamp, pos, kHashKey, path), path);
  for (std::size_t i = pos; i < stamp.size(); ++i) {
    if (stamp[i] != '\0')
      throw InputError({path, 0}, "database stamp", "a byte other than NUL after its last line",
                       "NUL padding to byte 512 (the file is damaged)");
  }
  const std::string_view hdf5 = file.substr(kDbStampBytes);
  if (length != hdf5.size())
    throw InputError({path, 0}, "size", std::to_string(hdf5.size()) + " bytes after the stamp",
                     std::to_string(length) +
                         " as stamped (the file was cut short or extended after it was "
                         "written)");
  const std::uint64_t computed = xxh64(hdf5);
  if (computed != stored)
    throw InputError(
        {path, 0}, "checksum", "xxh64 " + hex16(computed),
        "xxh64 " + hex16(stored) +
            " as stamped (the file is damaged: its bytes changed after moetwin-calibrate wrote it)");
  return hdf5;
}

}  // namespace moetwin
