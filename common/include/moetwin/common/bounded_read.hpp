// Reading an input file with a limit (issue 55 item 3): an endless (/dev/zero, /dev/urandom, a FIFO) or
// huge (a 10 GB sparse file) input ends in an InputError naming the file and the limit within seconds and
// bounded memory, instead of std::bad_alloc after half a minute at 4 GB. Every reader of a whole input
// file goes through read_input_file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace moetwin {

// What a kind of input may hold. The limits are far above any real file of the kind (each says which) and
// far below what would exhaust memory: the text is held once or twice while parsed, and the parsed rows
// take a few times the text, so a 128 MiB log peaks near 0.5 GB.
struct InputKind {
  std::string_view name;    // for the message: "scenario or catalog TOML", "megatron log", ...
  std::uint64_t max_bytes;  // bytes
  std::uint64_t max_lines;  // '\n'-separated lines
};

namespace input_kind {
inline constexpr std::uint64_t kMiB = 1024 * 1024;
// Scenarios, sweeps, profiles and the catalog: the largest shipped, catalog/data/dispatchers.toml, is 31 KB.
inline constexpr InputKind toml{"TOML file (scenario, sweep, profile, catalog)", 16 * kMiB, 200'000};
// Runs, bench, report and measurement tables: the largest shipped CSV is 37 KB (measured-memory.csv); a
// row of ten fields parses into about 0.5 KB, so a million rows stay near 0.5 GB.
inline constexpr InputKind csv{"CSV table", 64 * kMiB, 1'000'000};
// Megatron-LM / Megatron-Bridge, nccl-tests and DeepEP logs: the shipped ones are under 100 KB; a two-week
// Megatron run at 10 s an iteration logs about 120,000 iterations at ~1 KB each.
inline constexpr InputKind log{"log", 128 * kMiB, 2'000'000};
// HDF5 calibration databases: the shipped ones are 1.6 MB.
inline constexpr InputKind database{"calibration database", 256 * kMiB, UINT64_MAX};
// Any other whole-file input (sweep journal, report input, a file hashed for provenance).
inline constexpr InputKind other{"input file", 256 * kMiB, 4'000'000};
}  // namespace input_kind

// The environment variables that replace every kind's limits (for a genuinely larger input): a whole
// number of MiB, a whole number of lines.
inline constexpr const char* kMaxInputMibVariable = "MOETWIN_MAX_INPUT_MIB";
inline constexpr const char* kMaxInputLinesVariable = "MOETWIN_MAX_INPUT_LINES";

// The limits of `kind` after the environment's overrides; InputError naming the variable when one is set
// to anything but a positive whole number.
InputKind effective_limits(const InputKind& kind);

// The whole of `path`, at most kind's bytes and lines: a regular file over the byte limit is refused from
// its size before a byte is read; a device or pipe is read until the limit. Throws InputError: "no such
// file", "is a directory, expected a file", "cannot open file for reading (REASON)", "read error
// (REASON)", or "larger than N MiB, the limit for a KIND (set MOETWIN_MAX_INPUT_MIB to raise it)" and
// "PATH:LINE: more than N lines, the limit for a KIND (set MOETWIN_MAX_INPUT_LINES to raise it)".
std::string read_input_file(const std::string& path, const InputKind& kind);

}  // namespace moetwin
