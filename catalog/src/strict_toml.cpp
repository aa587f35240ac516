#include "moetwin/catalog/strict_toml.hpp"

#include <cmath>
#include <sstream>

#include "moetwin/common/numbers.hpp"

namespace moetwin {

namespace {

// Rejects what TOML 1.0 forbids and toml++ 3.3 mishandles, before toml++ sees it (both found by
// tests/fuzz/scenario_fuzz): raw control characters other than tab, LF and CR anywhere (toml++ asserted on
// "[\0"), and non-ASCII bytes outside strings and comments (bare keys are ASCII; toml++'s whitespace
// classifier reaches __builtin_unreachable on e.g. U+03D2 there). A small lexer tracks strings and comments.
void check_toml_characters(const std::string& text, const std::string& path) {
  enum class State { normal, comment, basic, literal, multi_basic, multi_literal };
  State state = State::normal;
  bool escaped = false;  // the previous character was a backslash inside a basic string
  int line = 1;
  const auto starts = [&](std::size_t i, const char* three) { return text.compare(i, 3, three) == 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      throw InputError({path, line}, "TOML syntax error: control character " + std::to_string(c) +
                                         " (only tab, LF and CR are allowed)");
    }
    if (c == '\n') ++line;
    if (escaped) {
      escaped = false;
      continue;
    }
    switch (state) {
      case State::normal:
        if (c >= 0x80) {
          throw InputError({path, line}, "TOML syntax error: non-ASCII character outside a string or comment");
        }
        if (c == '#') {
          state = State::comment;
        } else if (c == '"' || c == '\'') {
          const bool multi = starts(i, c == '"' ? "\"\"\"" : "'''");
          state = c == '"' ? (multi ? State::multi_basic : State::basic)
                           : (multi ? State::multi_literal : State::literal);
          if (multi) i += 2;
        }
        break;
      case State::comment:
        if (c == '\n') state = State::normal;
        break;
      case State::basic:
      case State::multi_basic:
        if (c == '\\') {
          escaped = true;
        } else if (state == State::basic ? (c == '"' || c == '\n') : starts(i, "\"\"\"")) {
          if (state == State::multi_basic) i += 2;
          state = State::normal;
        }
        break;
      case State::literal:
        if (c == '\'' || c == '\n') state = State::normal;
        break;
      case State::multi_literal:
        if (starts(i, "'''")) {
          i += 2;
          state = State::normal;
        }
        break;
    }
  }
}

}  // namespace

toml::table parse_toml(const std::string& text, const std::string& path) {
  check_toml_characters(text, path);
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const int line = static_cast<int>(e.source().begin.line);
    throw InputError({path, line}, std::string("TOML syntax error: ") + std::string(e.description()));
  }
}

std::string describe_toml_value(const toml::node& node) {
  if (auto v = node.as_string()) return "\"" + v->get() + "\"";
  if (auto v = node.as_integer()) return std::to_string(v->get());
  if (auto v = node.as_floating_point()) return format_exact(v->get());
  if (auto v = node.as_boolean()) return v->get() ? "true" : "false";
  if (node.is_table()) return "a table";
  if (node.is_array()) return "an array";
  return "a date/time";
}

StrictTable::StrictTable(const toml::table& table, std::string path, std::string prefix)
    : table_(&table), path_(std::move(path)), prefix_(std::move(prefix)) {}

bool StrictTable::has(const std::string& key) const { return table_->contains(key); }

int StrictTable::line_of(const std::string& key) const {
  if (const toml::node* n = table_->get(key)) {
    const int line = static_cast<int>(n->source().begin.line);
    if (line > 0) return line;
  }
  return static_cast<int>(table_->source().begin.line);
}

void StrictTable::fail(const std::string& key, const std::string& value, const std::string& expected) const {
  throw InputError(where(key), name(key), value, expected);
}

const toml::node& StrictTable::require(const std::string& key) {
  const toml::node* n = table_->get(key);
  if (!n) fail(key, "missing", "a value (required key)");
  read_.insert(key);
  return *n;
}

std::int64_t StrictTable::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  const toml::node& n = require(key);
  const auto* v = n.as_integer();
  if (!v) fail(key, describe_toml_value(n), "an integer");
  const std::int64_t x = v->get();
  if (x < min || x > max) {
    fail(key, std::to_string(x), "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return x;
}

int StrictTable::int32(const std::string& key, int min, int max) {
  return static_cast<int>(integer(key, min, max));
}

double StrictTable::number(const std::string& key, double min, double max) {
  const toml::node& n = require(key);
  double x = 0;
  if (const auto* f = n.as_floating_point()) {
    x = f->get();
  } else if (const auto* i = n.as_integer()) {
    x = static_cast<double>(i->get());
  } else {
    fail(key, describe_toml_value(n), "a number");
  }
  if (!std::isfinite(x) || x < min || x > max) {
    fail(key, format_exact(x), "a number in [" + format_exact(min) + ", " + format_exact(max) + "]");
  }
  return x;
}

bool StrictTable::boolean(const std::string& key) {
  const toml::node& n = require(key);
  const auto* v = n.as_boolean();
  if (!v) fail(key, describe_toml_value(n), "true or false");
  return v->get();
}

std::string StrictTable::string(const std::string& key) {
  const toml::node& n = require(key);
  const auto* v = n.as_string();
  if (!v) fail(key, describe_toml_value(n), "a string");
  return v->get();
}

std::string StrictTable::choice(const std::string& key, const std::vector<std::string>& allowed) {
  const std::string s = string(key);
  for (const auto& a : allowed) {
    if (a == s) return s;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  fail(key, "\"" + s + "\"", "one of " + list);
}

int StrictTable::int32_or(const std::string& key, int min, int max, int fallback) {
  return has(key) ? int32(key, min, max) : fallback;
}
double StrictTable::number_or(const std::string& key, double min, double max, double fallback) {
  return has(key) ? number(key, min, max) : fallback;
}
bool StrictTable::boolean_or(const std::string& key, bool fallback) { return has(key) ? boolean(key) : fallback; }
std::string StrictTable::string_or(const std::string& key, const std::string& fallback) {
  return has(key) ? string(key) : fallback;
}
std::string StrictTable::choice_or(const std::string& key, const std::vector<std::string>& allowed,
                                   const std::string& fallback) {
  return has(key) ? choice(key, allowed) : fallback;
}

std::optional<StrictTable> StrictTable::table(const std::string& key) {
  if (!has(key)) return std::nullopt;
  const toml::node& n = require(key);
  const auto* t = n.as_table();
  if (!t) fail(key, describe_toml_value(n), "a table");
  return StrictTable(*t, path_, prefix_ + key + ".");
}

void StrictTable::finish() const {
  for (auto&& [k, v] : *table_) {
    const std::string key(k.str());
    if (!read_.count(key)) {
      throw InputError({path_, static_cast<int>(v.source().begin.line)}, name(key), describe_toml_value(v),
                       "no such key (unknown key; see the documentation of this file)");
    }
  }
}

}  // namespace moetwin
