// Deterministic writers for row results, shared by every command (inspect, predict, net, validate):
// a table of ordered columns and formatted cells rendered as aligned text, CSV or JSON. Cells hold the
// text the number formatters produced (format_fixed / format_exact), so the three renderings agree and
// the same inputs always give byte-identical outputs. Nothing here writes timestamps.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>  // the writers include json.hpp: most includers never build JSON
#include <string>
#include <utility>
#include <vector>

namespace moetwin {

// One cell: its text and how JSON should type it (CSV and text print the text as is).
struct Cell {
  enum class Kind { text, number, boolean };
  std::string text;
  Kind kind = Kind::text;

  Cell() = default;
  Cell(std::string value) : text(std::move(value)) {}  // NOLINT: text cells read naturally in row literals
  Cell(const char* value) : text(value) {}             // NOLINT

  static Cell fixed(double value, int digits);  // format_fixed, a JSON number
  static Cell exact(double value);              // format_exact (shortest round trip), a JSON number
  static Cell integer(std::int64_t value);      // a JSON integer
  static Cell boolean(bool value);              // "true" / "false", a JSON boolean
};

struct ResultTable {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;

  // Appends a row; throws std::logic_error if its width differs from the columns'.
  void add_row(std::vector<Cell> row);
  // Index of a column; throws std::logic_error if absent.
  std::size_t column(const std::string& name) const;
};

// Provenance written at the top of every JSON output (google/benchmark's context block).
struct OutputContext {
  std::string command;              // e.g. "inspect"
  std::string catalog_dir;          // catalog the run read
  std::vector<std::string> inputs;  // input files as given on the command line
};

// The context a CSV output carries for `moetwin report` as '#' comment lines before its header (the CSV
// reader skips them): "# moetwin_version: ...", "# git_revision: ...", "# command: ...", then one
// "# key: value" per fact (e.g. "profile", "deadline_days"). Values are single-line (newlines become spaces).
std::string csv_context_header(const OutputContext& context,
                               const std::vector<std::pair<std::string, std::string>>& facts);

// Aligned columns: a header line, a dashed rule, one line per row; numbers right-aligned.
std::string render_text(const ResultTable& table);
// "key  value" lines with the keys padded to one width (text summaries).
std::string render_key_values(const std::vector<std::pair<std::string, std::string>>& lines);
// RFC-4180 CSV: header then rows (common/csv.hpp quoting).
std::string render_csv(const ResultTable& table);

// {"schema_version", "moetwin_version", "git_revision", "command", "catalog_dir", "inputs"}.
nlohmann::ordered_json context_json(const OutputContext& context);
// The rows as an array of objects, keys in column order, cells typed by Cell::kind.
nlohmann::ordered_json rows_json(const ResultTable& table);
// {"context": ..., "<name>": rows, ...} for each named table in order, 2-space indented, final newline.
std::string render_json(const OutputContext& context,
                        const std::vector<std::pair<std::string, const ResultTable*>>& tables);
// Shorthand: {"context": ..., "rows": rows}.
std::string render_json(const OutputContext& context, const ResultTable& table);

}  // namespace moetwin
