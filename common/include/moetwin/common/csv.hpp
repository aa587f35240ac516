// Minimal RFC-4180 CSV: comment lines start with '#', first non-comment line is the header.
// Fields may be quoted ("a,b" and "" for a quote). Used for live-run records and every row output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "moetwin/common/bounded_read.hpp"
#include "moetwin/common/input_error.hpp"
// check_output_path and write_file_atomically, which the writers of CSV files use, live there.
#include "moetwin/common/safe_file.hpp"

namespace moetwin {

struct CsvRow {
  int line = 0;                     // 1-based line in the file
  std::vector<std::string> fields;  // same order as CsvTable::header
};

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  // Index of a header column; throws InputError naming the file and the missing column.
  std::size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
};

// Reads the cells of one row by column name. A malformed cell is an InputError naming the file, the row's
// line, the column, the cell ("" when empty) and what was expected; a missing column is CsvTable::column's.
class CsvRowReader {
 public:
  CsvRowReader(const CsvTable& table, const CsvRow& row) : table_(table), row_(row) {}

  bool has(const std::string& column) const { return table_.has_column(column); }
  const std::string& text(const std::string& column) const;
  InputLocation where() const { return {table_.path, row_.line}; }
  [[noreturn]] void fail(const std::string& column, const std::string& expected) const;

  // A whole integer in [min, max]: "an integer in [min, max]" otherwise.
  std::int64_t integer(const std::string& column, std::int64_t min, std::int64_t max) const;
  int int32(const std::string& column, int min, int max) const;
  // A finite number in [min, max]; `expected` otherwise.
  double number(const std::string& column, double min, double max, const std::string& expected) const;
  // One of `allowed`: "one of a, b, c" otherwise.
  std::string choice(const std::string& column, const std::vector<std::string>& allowed) const;

 private:
  const CsvTable& table_;
  const CsvRow& row_;
};

// Parses CSV text (a leading UTF-8 byte-order mark is skipped); `path` is used in error messages only. Throws
// InputError on ragged rows, unterminated quotes, empty or duplicate header names.
CsvTable parse_csv(const std::string& text, const std::string& path);
// Reads (at most input_kind::csv's bytes and lines) and parses a file; throws InputError if it cannot be
// read.
CsvTable read_csv_file(const std::string& path);

// Quotes a field when it holds a comma, quote or newline.
std::string csv_escape(const std::string& field);
void write_csv_line(std::ostream& out, const std::vector<std::string>& fields);

// Reads a whole file into a string, at most `kind`'s bytes and lines (bounded_read.hpp); throws InputError
// if it cannot be read: "no such file", "is a directory, expected a file", "cannot open file for reading"
// or over the limit.
std::string read_text_file(const std::string& path, const InputKind& kind = input_kind::other);

}  // namespace moetwin
