// Progress of a running sweep on stderr: on a terminal one line redrawn in place (bar, count, rate, ETA);
// otherwise a plain line every N points. Timing lives here only, never in a result file.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>

namespace moetwin {

struct ProgressOptions {
  std::ostream* out = nullptr;  // nullptr: silent
  bool tty = false;             // redraw one line (\r) instead of printing lines
  std::size_t every = 0;        // plain mode: a line every N points (0: about every 10% of the work)
};

class SweepProgress {
 public:
  // `total` points in the sweep, `done` of them finished before this run, `todo` to compute now.
  SweepProgress(const ProgressOptions& options, std::size_t total, std::size_t done, std::size_t todo);
  void advance();  // one more point finished
  void finish();   // final line (newline after the bar on a terminal)

 private:
  void draw(bool force);
  ProgressOptions options_;
  std::size_t total_;
  std::size_t done_;
  std::size_t todo_;
  std::size_t computed_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace moetwin
