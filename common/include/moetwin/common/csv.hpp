// Minimal RFC-4180 CSV: comment lines start with '#', first non-comment line is the header.
// Fields may be quoted ("a,b" and "" for a quote). Used for live-run records and every row output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "moetwin/common/input_error.hpp"

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
// Reads and parses a file; throws InputError if it cannot be opened.
CsvTable read_csv_file(const std::string& path);

// Quotes a field when it holds a comma, quote or newline.
std::string csv_escape(const std::string& field);
void write_csv_line(std::ostream& out, const std::vector<std::string>& fields);

// Reads a whole file into a string; throws InputError if it cannot be read: "no such file", "is a
// directory, expected a file" or "cannot open file for reading".
std::string read_text_file(const std::string& path);

// Throws InputError when `path` cannot be an output file: a directory ("is a directory, expected a file
// to write") or in a folder that does not exist ("output folder DIR does not exist (create it first)").
// Outputs never create folders: a typo in a path is reported, not turned into a new tree.
void check_output_path(const std::string& path);

// Writes `content` to `path` atomically (temporary file + rename), so a failure never leaves a
// half-written output. Throws InputError (check_output_path's, or if the folder is not writable).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace moetwin
