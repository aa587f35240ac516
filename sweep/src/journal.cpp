#include "moetwin/sweep/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/fnv1a.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/safe_file.hpp"
#include "moetwin/sweep/sweep_spec.hpp"

namespace moetwin {
namespace {

constexpr const char* kMagic = "moetwin-sweep-journal";
constexpr const char* kJournalVersion = "1";

std::string escape(const std::string& cell) {
  std::string out;
  out.reserve(cell.size());
  for (const char c : cell) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool unescape(const std::string& field, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\') {
      out += field[i];
      continue;
    }
    if (++i == field.size()) return false;
    switch (field[i]) {
      case '\\':
        out += '\\';
        break;
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        return false;
    }
  }
  return true;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

// Writes all of `data` to `fd` and fsyncs; false on any failure.
bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::fsync(fd) == 0;
}

std::string header_line(const std::string& identity) {
  return std::string(kMagic) + "\t" + kJournalVersion + "\t" + identity;
}

}  // namespace

std::string SweepJournal::encode(const PointRow& row) {
  std::string payload = std::to_string(row.id);
  // Not "\t" + escape(cell): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
  for (const std::string& cell : row.cells) payload.append("\t").append(escape(cell));
  const std::size_t tab = payload.find('\t');
  const std::string id = payload.substr(0, tab);
  const std::string rest = tab == std::string::npos ? std::string() : payload.substr(tab);
  return id + "\t" + hex64(fnv1a64(payload)) + rest;
}

bool SweepJournal::decode(const std::string& line, std::size_t columns, PointRow& row) {
  const std::vector<std::string> fields = split_tabs(line);
  if (fields.size() != columns + 2) return false;
  const std::string& id = fields[0];
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (id.empty() || ec != std::errc() || end != id.data() + id.size()) return false;
  std::string payload = id;
  for (std::size_t i = 2; i < fields.size(); ++i) payload += "\t" + fields[i];
  if (fields[1] != hex64(fnv1a64(payload))) return false;
  row.id = value;
  row.cells.assign(columns, "");
  for (std::size_t i = 0; i < columns; ++i) {
    if (!unescape(fields[i + 2], row.cells[i])) return false;
  }
  return true;
}

SweepJournal::SweepJournal(std::string path, const std::string& identity, std::size_t columns,
                           std::size_t points)
    : path_(std::move(path)) {
  namespace fs = std::filesystem;
  const std::string header = header_line(identity);
  bool rewrite = true;
  std::error_code exists_ec;
  if (fs::exists(path_, exists_ec)) {
    const std::string text = read_text_file(path_);
    std::size_t pos = 0;
    bool first = true;
    rewrite = false;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) {  // torn last line: the process died inside its write
        ++dropped_;
        rewrite = true;
        break;
      }
      const std::string line = text.substr(pos, nl - pos);
      pos = nl + 1;
      if (first) {
        first = false;
        if (line != header) {
          throw InputError({path_, 1}, "journal", "\"" + line.substr(0, 120) + "\"",
                           "the journal of this sweep (\"" + header +
                               "\"): the sweep file, its base or the profile changed since it was written; "
                               "delete the journal to start over");
        }
        continue;
      }
      PointRow row;
      if (!decode(line, columns, row) || row.id >= points || rows_.count(row.id) != 0) {
        ++dropped_;
        rewrite = true;
        continue;
      }
      rows_.emplace(row.id, std::move(row));
    }
    if (first) rewrite = true;  // empty file
    recovered_ = rows_.size();
  }
  if (rewrite) {
    // A fresh or repaired journal goes in whole through a temporary file, so that a crash here leaves
    // either the old journal or the new one.
    std::string content = header + "\n";
    for (const auto& [id, row] : rows_) content += encode(row) + "\n";
    // A fresh random name, created exclusively (common/safe_file.hpp): a link planted at a guessable
    // name (the old PREFIX.journal.tmp) is never written through. On a failure (a full disk) the
    // temporary file is removed: none is left behind.
    StagedFile staged(path_);
    try {
      staged.write(content);
      staged.commit();
    } catch (const InputError& e) {
      const std::string prefix = path_ + ": ";
      const std::string what = e.what();
      throw InputError({path_, 0}, "cannot write the sweep journal: " +
                                       (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
    }
  }
  // O_NOFOLLOW: the journal is the regular file just checked or renamed into place, never a link to another.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0) {
    throw InputError({path_, 0}, std::string("cannot open the sweep journal: ") + std::strerror(errno));
  }
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepJournal::append(PointRow row) {
  if (rows_.count(row.id) != 0) return;
  if (fd_ < 0) throw std::logic_error("sweep journal appended after remove()");
  if (!write_all(fd_, encode(row) + "\n")) {
    throw InputError({path_, 0}, std::string("cannot append to the sweep journal: ") + std::strerror(errno));
  }
  rows_.emplace(row.id, std::move(row));
}

void SweepJournal::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

}  // namespace moetwin
