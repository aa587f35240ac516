// FNV-1a 64-bit hashing: content hashes of input files (sweeps, journals, profiles) and the fitter's
// name-keyed held-back split. Not cryptographic; chosen because it is tiny, portable and byte-exact on
// every platform (std::hash is neither specified nor stable across library versions).
#pragma once

#include <cstdint>
#include <string>

namespace moetwin {

// FNV-1a 64-bit of `bytes`, continuing from `seed` (the offset basis by default).
std::uint64_t fnv1a64(const std::string& bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);
std::string hex64(std::uint64_t value);  // 16 lowercase hex digits

}  // namespace moetwin
