#include "moetwin/reports/result_table.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/version.hpp"

namespace moetwin {
namespace {

// A JSON value for a cell: numbers are parsed back from the formatted text (integers stay integers);
// a text that is not a finite number (e.g. "nan") stays a string rather than producing invalid JSON.
nlohmann::ordered_json cell_json(const Cell& cell) {
  const char* first = cell.text.data();
  const char* last = first + cell.text.size();
  switch (cell.kind) {
    case Cell::Kind::text:
      return cell.text;
    case Cell::Kind::boolean:
      return cell.text == "true";
    case Cell::Kind::number: {
      if (cell.text.find_first_of(".eE") == std::string::npos) {
        std::int64_t i = 0;
        const auto [end, ec] = std::from_chars(first, last, i);
        if (ec == std::errc() && end == last) return i;
      }
      double d = 0;
      const auto [end, ec] = std::from_chars(first, last, d);
      if (ec == std::errc() && end == last && d - d == 0.0) return d;
      return cell.text;
    }
  }
  return cell.text;
}

}  // namespace

Cell Cell::fixed(double value, int digits) {
  Cell c(format_fixed(value, digits));
  c.kind = Kind::number;
  return c;
}

Cell Cell::exact(double value) {
  Cell c(format_exact(value));
  c.kind = Kind::number;
  return c;
}

Cell Cell::integer(std::int64_t value) {
  Cell c(std::to_string(value));
  c.kind = Kind::number;
  return c;
}

Cell Cell::boolean(bool value) {
  Cell c(value ? "true" : "false");
  c.kind = Kind::boolean;
  return c;
}

void ResultTable::add_row(std::vector<Cell> row) {
  if (row.size() != columns.size()) {
    throw std::logic_error("ResultTable::add_row: " + std::to_string(row.size()) + " cells for " +
                           std::to_string(columns.size()) + " columns");
  }
  rows.push_back(std::move(row));
}

std::size_t ResultTable::column(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) throw std::logic_error("ResultTable::column: no column " + name);
  return static_cast<std::size_t>(it - columns.begin());
}

std::string render_text(const ResultTable& table) {
  std::vector<std::size_t> width(table.columns.size(), 0);
  for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].size();
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].text.size());
  }
  std::string out;
  auto emit = [&](std::size_t c, const std::string& text, bool right) {
    const std::string pad(width[c] - std::min(width[c], text.size()), ' ');
    if (c > 0) out += "  ";
    if (right) {
      out += pad + text;
    } else {
      out += text;
      if (c + 1 < width.size()) out += pad;  // no trailing blanks
    }
  };
  for (std::size_t c = 0; c < table.columns.size(); ++c) emit(c, table.columns[c], false);
  out += '\n';
  for (std::size_t c = 0; c < table.columns.size(); ++c) emit(c, std::string(width[c], '-'), false);
  out += '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) emit(c, row[c].text, row[c].kind == Cell::Kind::number);
    out += '\n';
  }
  return out;
}

std::string render_key_values(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::size_t width = 0;
  for (const auto& [key, value] : lines) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : lines) {
    out += key;
    if (!value.empty()) out += std::string(width - key.size() + 2, ' ') + value;
    out += '\n';
  }
  return out;
}

std::string render_csv(const ResultTable& table) {
  std::ostringstream out;
  write_csv_line(out, table.columns);
  std::vector<std::string> fields;
  for (const auto& row : table.rows) {
    fields.clear();
    for (const Cell& cell : row) fields.push_back(cell.text);
    write_csv_line(out, fields);
  }
  return out.str();
}

std::string csv_context_header(const OutputContext& context,
                               const std::vector<std::pair<std::string, std::string>>& facts) {
  std::string out;
  const auto line = [&out](const std::string& key, std::string value) {
    for (char& c : value) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    out += "# " + key + ": " + value + "\n";
  };
  line("moetwin_version", kVersion);
  line("git_revision", kGitRevision);
  line("command", context.command);
  for (const auto& [key, value] : facts) line(key, value);
  return out;
}

nlohmann::ordered_json context_json(const OutputContext& context) {
  nlohmann::ordered_json j;
  j["schema_version"] = kOutputSchemaVersion;
  j["moetwin_version"] = kVersion;
  j["git_revision"] = kGitRevision;
  j["command"] = context.command;
  j["catalog_dir"] = context.catalog_dir;
  j["inputs"] = context.inputs;
  return j;
}

nlohmann::ordered_json rows_json(const ResultTable& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) obj[table.columns[c]] = cell_json(row[c]);
    rows.push_back(std::move(obj));
  }
  return rows;
}

std::string render_json(const OutputContext& context,
                        const std::vector<std::pair<std::string, const ResultTable*>>& tables) {
  nlohmann::ordered_json j;
  j["context"] = context_json(context);
  for (const auto& [name, table] : tables) j[name] = rows_json(*table);
  return j.dump(2) + "\n";
}

std::string render_json(const OutputContext& context, const ResultTable& table) {
  return render_json(context, {{"rows", &table}});
}

}  // namespace moetwin
