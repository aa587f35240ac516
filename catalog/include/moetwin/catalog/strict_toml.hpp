// Strict reading of one TOML table: every key must be read exactly through these accessors, and
// finish() rejects any key that was not, so a typo never passes silently. Messages follow
// "file:line: key: value: expected ...". Include only from .cpp files (pulls in toml++).
#pragma once

#include <optional>
#include <set>
#include <string>
// toml++ 3.3 asserts in parse_key() when a table header starts with a character that cannot start a key
// ("[`"), although the code right after the assertion reports a proper parse error. Its internal
// assertions stay off so that malformed input ends in a parse error, as in release builds (NDEBUG), which
// compile them out (found by tests/fuzz/scenario_fuzz). Include toml++ only through this header so every
// translation unit sees the same setting.
#ifndef TOML_ASSERT
#define TOML_ASSERT(expr) static_assert(true)
#endif
// toml++ compiled once, in catalog/src/toml_implementation.cpp, instead of in every translation unit that
// reads TOML: header-only, each of them (catalog.cpp, scenario_parser.cpp, live_runs.cpp, ...) compiled the
// parser again, about 3 of catalog.cpp's 10 CPU-s at -O3 (docs/2026-12-07-first-answer.md). The same code
// runs either way.
#define TOML_HEADER_ONLY 0
#include <toml++/toml.h>

#include <vector>

#include "moetwin/common/input_error.hpp"

namespace moetwin {

// Parses TOML text; converts toml::parse_error into InputError with file and line.
toml::table parse_toml(const std::string& text, const std::string& path);

class StrictTable {
 public:
  // `prefix` is prepended to key names in messages (e.g. "parallel." or "[H100-SXM].").
  StrictTable(const toml::table& table, std::string path, std::string prefix);

  bool has(const std::string& key) const;
  int line_of(const std::string& key) const;  // line of the key's value, or of the table
  InputLocation where(const std::string& key) const { return {path_, line_of(key)}; }
  const std::string& path() const { return path_; }
  std::string name(const std::string& key) const { return prefix_ + key; }

  // Required values. Integers must be integers (1.0 is rejected); doubles accept integers.
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max);
  int int32(const std::string& key, int min, int max);
  double number(const std::string& key, double min, double max);
  bool boolean(const std::string& key);
  std::string string(const std::string& key);
  // An array of strings (may be empty).
  std::vector<std::string> strings(const std::string& key);
  // One of `allowed`; the message lists them.
  std::string choice(const std::string& key, const std::vector<std::string>& allowed);

  // Optional variants: return `fallback` when the key is absent.
  int int32_or(const std::string& key, int min, int max, int fallback);
  double number_or(const std::string& key, double min, double max, double fallback);
  bool boolean_or(const std::string& key, bool fallback);
  std::string string_or(const std::string& key, const std::string& fallback);
  std::string choice_or(const std::string& key, const std::vector<std::string>& allowed,
                        const std::string& fallback);
  // A switch that may defer to a default: true or false, or the string "auto" (or absent) -> nullopt.
  std::optional<bool> boolean_or_auto(const std::string& key);

  // A nested table; absent -> nullopt. Marks the key as read.
  std::optional<StrictTable> table(const std::string& key);
  // An array of tables ([[key]] entries), in file order; absent -> empty. Marks the key as read; the
  // caller reads and finish()es each entry.
  std::vector<StrictTable> tables(const std::string& key);

  // Throws for the first key (in file order of keys, alphabetical within toml::table) not read, suggesting
  // the closest key asked for (closest_name.hpp). A missing required key next to an unread key that is
  // one or two edits from it is reported at that key's line as a typo ("did you mean `micro_batch`?").
  void finish() const;

 private:
  const toml::node& require(const std::string& key);
  [[noreturn]] void fail(const std::string& key, const std::string& value, const std::string& expected) const;

  const toml::table* table_;
  std::string path_;
  std::string prefix_;
  std::set<std::string> read_;
  // Every key asked for (read or only tested with has()): the known keys a typo is matched against.
  mutable std::set<std::string> asked_;
};

// Renders a TOML node's value for error messages ("\"abc\"", "12", "true", "a table", ...).
std::string describe_toml_value(const toml::node& node);

}  // namespace moetwin
