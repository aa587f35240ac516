// The stamp a calibration database carries in its first kDbStampBytes bytes: the HDF5 user block, which
// libhdf5 skips (it looks for its superblock at byte 0, 512, 1024, ...), so h5dump and h5py still read the
// file. The writer fills it after the HDF5 file is closed; the reader checks it before libhdf5 sees a
// byte. libhdf5 trusts its metadata: a damaged file can make it read out of bounds or loop forever
// (issue 44: segfaults in H5HG_read and H5A__close, two reads that never ended), so a file whose bytes
// are not the ones the writer stamped is refused before it is parsed.
//
// The stamp is text, NUL-padded to 512 bytes (`head -c 512 DB.h5` shows it):
//   moetwin-calibration-db stamp 1
//   schema_version 1
//   hdf5_bytes <decimal: bytes after the stamp>
//   xxh64 <16 lowercase hex digits: XXH64, seed 0, of the bytes after the stamp>
// XXH64 (Yann Collet's xxHash, https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md) rather than a
// CRC: 64 bits, so a random change goes unnoticed with probability 2^-64, and it reads 8 bytes a step
// (the fuzz target hashes up to 1.6 MB a run). It detects damage, not forgery: a file crafted to carry a
// matching stamp reaches libhdf5 (see calibration_db.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace moetwin {

inline constexpr std::size_t kDbStampBytes = 512;  // HDF5's smallest user block
inline constexpr int kDbStampVersion = 1;
inline constexpr std::string_view kDbStampMagic = "moetwin-calibration-db stamp ";

// XXH64 of `bytes` (xxhash_spec.md, little-endian reads on any host).
std::uint64_t xxh64(std::string_view bytes, std::uint64_t seed = 0);

// The kDbStampBytes-byte stamp for a file whose bytes after the stamp are `hdf5`.
std::string make_db_stamp(std::string_view hdf5, int schema_version);

// Whether `file` (a whole file's bytes) begins with the stamp's first words; says nothing about its
// validity.
bool has_db_stamp(std::string_view file);

// Checks the stamp of `file` (a whole file's bytes) against the rest of it: stamp version, schema version,
// length, checksum. Throws InputError naming `path` and what is wrong; returns the bytes after the stamp.
std::string_view verify_db_stamp(std::string_view file, const std::string& path);

}  // namespace moetwin
