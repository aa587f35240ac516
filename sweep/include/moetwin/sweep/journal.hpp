// The resume journal of a sweep: append-only, one line per finished point holding its full result row
// and a checksum, each line written with one write() and fsync'd before the next point is counted as
// done. A process killed at any moment leaves at most a torn last line, which the next run drops; so a
// restarted sweep recomputes only the points that were in flight.
//
// Format (text, UTF-8): a header line "moetwin-sweep-journal<TAB>1<TAB><identity>", then per point
// "<id><TAB><checksum><TAB><cell 0><TAB>...<TAB><cell n-1>", where checksum is the FNV-1a 64-bit hash (16
// hex digits) of "<id><TAB><cells...>" and cells escape backslash, tab, LF and CR as \\ \t \n \r.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "moetwin/sweep/point_result.hpp"

namespace moetwin {

class SweepJournal {
 public:
  // Opens the journal at `path`, creating it when absent. `identity` names the sweep (one line, no tabs):
  // a journal written for another identity is an InputError (the sweep, base or profile changed). Rows
  // already there are read back; torn or corrupt lines and rows of the wrong width are dropped and the file
  // is rewritten without them before anything is appended. Ids >= `points` are corrupt too.
  SweepJournal(std::string path, const std::string& identity, std::size_t columns, std::size_t points);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  const std::string& path() const { return path_; }
  // Every finished point: read back at open, plus those appended since. Keyed by point id.
  const std::map<std::size_t, PointRow>& rows() const { return rows_; }
  bool has(std::size_t id) const { return rows_.count(id) != 0; }
  std::size_t recovered() const { return recovered_; }  // rows read back at open
  std::size_t dropped() const { return dropped_; }      // lines dropped at open

  // Appends the row (one write + fsync) and records it. A row for an id already present is ignored.
  // Throws InputError when the file cannot be written.
  void append(PointRow row);
  // Closes and deletes the file (after the final outputs are written).
  void remove();

  // One journal line (without the newline) and its inverse; parse returns false for a corrupt line.
  static std::string encode(const PointRow& row);
  static bool decode(const std::string& line, std::size_t columns, PointRow& row);

 private:
  std::string path_;
  int fd_ = -1;
  std::map<std::size_t, PointRow> rows_;
  std::size_t recovered_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace moetwin
