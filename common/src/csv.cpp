#include "moetwin/common/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>

#include "moetwin/common/bounded_read.hpp"
#include "moetwin/common/concat.hpp"

namespace moetwin {

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  throw InputError({path, 1}, "header", name, "a column named '" + name + "' (missing)");
}

bool CsvTable::has_column(const std::string& name) const {
  for (const auto& h : header) {
    if (h == name) return true;
  }
  return false;
}

namespace {

// Splits one logical record starting at `pos`; advances `pos` and `line` past it.
std::vector<std::string> split_record(const std::string& text, std::size_t& pos, int& line,
                                      const std::string& path) {
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false;
  const int start_line = line;
  while (pos < text.size()) {
    const char c = text[pos];
    if (in_quotes) {
      if (c == '"') {
        if (pos + 1 < text.size() && text[pos + 1] == '"') {
          field += '"';
          pos += 2;
          continue;
        }
        in_quotes = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      ++pos;
      continue;
    }
    if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c == '\n') {
      ++pos;
      ++line;
      fields.push_back(field);
      return fields;
    } else if (c != '\r') {
      field += c;
    }
    ++pos;
  }
  if (in_quotes) throw InputError({path, start_line}, "unterminated quoted field");
  fields.push_back(field);
  ++line;
  return fields;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  // A UTF-8 byte-order mark (Excel's "CSV UTF-8" and many Windows tools write one) is not part of the first
  // column's name.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  std::size_t pos = text.compare(0, kBom.size(), kBom) == 0 ? kBom.size() : 0;
  int line = 1;
  bool have_header = false;
  while (pos < text.size()) {
    // Skip comment and blank lines.
    std::size_t eol = text.find('\n', pos);
    const std::string raw = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    if (trim(raw).empty() || trim(raw)[0] == '#') {
      pos = eol == std::string::npos ? text.size() : eol + 1;
      ++line;
      continue;
    }
    const int record_line = line;
    std::vector<std::string> fields = split_record(text, pos, line, path);
    for (auto& f : fields) f = trim(f);
    if (!have_header) {
      std::set<std::string> seen;
      for (const auto& h : fields) {
        if (h.empty()) throw InputError({path, record_line}, "header", "''", "non-empty column names");
        if (!seen.insert(h).second) {
          throw InputError({path, record_line}, "header", h, "unique column names (duplicate)");
        }
      }
      table.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != table.header.size()) {
      throw InputError({path, record_line}, "row", std::to_string(fields.size()) + " fields",
                       std::to_string(table.header.size()) + " fields as in the header");
    }
    table.rows.push_back({record_line, std::move(fields)});
  }
  if (!have_header) throw InputError({path, 0}, "no header line (file is empty or only comments)");
  return table;
}

std::string read_text_file(const std::string& path, const InputKind& kind) {
  return read_input_file(path, kind);
}

CsvTable read_csv_file(const std::string& path) {
  return parse_csv(read_input_file(path, input_kind::csv), path);
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void write_csv_line(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out << ',';
    out << csv_escape(fields[i]);
  }
  out << '\n';
}

const std::string& CsvRowReader::text(const std::string& column) const {
  return row_.fields.at(table_.column(column));
}

void CsvRowReader::fail(const std::string& column, const std::string& expected) const {
  const std::string& cell = text(column);
  throw InputError(where(), column, cell.empty() ? "\"\"" : cell, expected);
}

std::int64_t CsvRowReader::integer(const std::string& column, std::int64_t min, std::int64_t max) const {
  const std::string& s = text(column);
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end || v < min || v > max)
    fail(column, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

int CsvRowReader::int32(const std::string& column, int min, int max) const {
  return static_cast<int>(integer(column, min, max));
}

double CsvRowReader::number(const std::string& column, double min, double max,
                            const std::string& expected) const {
  const std::string& s = text(column);
  double v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < min || v > max)
    fail(column, expected);
  return v;
}

std::string CsvRowReader::choice(const std::string& column, const std::vector<std::string>& allowed) const {
  const std::string& s = text(column);
  std::string list;
  for (const auto& a : allowed) {
    if (a == s) return s;
    list += (list.empty() ? "" : ", ") + a;
  }
  fail(column, "one of " + list);
}

}  // namespace moetwin
