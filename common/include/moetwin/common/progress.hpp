// Progress of long work on stderr: on a terminal one line redrawn in place (stage, bar, count, rate,
// ETA); otherwise a plain line every N steps. Timing lives here only, never in a result file.
// `sweep` uses it per point; `validate --fit` (per replay of the row set, by round and fold), `plan` (per
// node count) and `predict --runs` (per row) use it on a terminal only (ProgressOptions::out = nullptr
// otherwise, so pipes and CI logs stay as they were).
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <string>

namespace moetwin {

struct ProgressOptions {
  std::ostream* out = nullptr;  // nullptr: silent
  bool tty = false;             // redraw one line (\r) instead of printing lines
  std::size_t every = 0;        // plain mode: a line every N points (0: about every 10% of the work)
  std::string label = "sweep";  // leads every line ("sweep: 12/40 points ...")
  std::string unit = "points";  // what is counted
  bool journal_line = true;     // plain mode: the opening "N points, M already done (journal)" line
};

// Whether the file descriptor is a terminal (isatty): callers pass stderr's to ProgressOptions::tty.
bool stderr_is_terminal();

class SweepProgress {
 public:
  // `total` points in the sweep, `done` of them finished before this run, `todo` to compute now.
  SweepProgress(const ProgressOptions& options, std::size_t total, std::size_t done, std::size_t todo);
  void advance();  // one more point finished
  void finish();   // final line (newline after the bar on a terminal)
  // Text before the bar on a terminal ("round 2/4"); redraws.
  void set_stage(const std::string& stage);
  // More work than first announced (an estimate grew): total and todo both grow by `n`.
  void add_work(std::size_t n);
  // A log line that must not be overwritten by the bar: on a terminal the bar is cleared, the line
  // printed, the bar redrawn; otherwise printed as is.
  void note(const std::string& line);

 private:
  void draw(bool force);
  ProgressOptions options_;
  std::size_t total_;
  std::size_t done_;
  std::size_t todo_;
  std::size_t computed_ = 0;
  std::string stage_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace moetwin
