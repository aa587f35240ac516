#include "moetwin/common/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <string>

#include "moetwin/common/numbers.hpp"

namespace moetwin {
namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  const std::string mm = std::to_string((s / 60) % 60);
  const std::string ss = std::to_string(s % 60);
  return std::to_string(s / 3600) + ":" + (mm.size() < 2 ? "0" : "") + mm + ":" + (ss.size() < 2 ? "0" : "") +
         ss;
}

}  // namespace

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) != 0;
}

SweepProgress::SweepProgress(const ProgressOptions& options, std::size_t total, std::size_t done,
                             std::size_t todo)
    : options_(options),
      total_(total),
      done_(done),
      todo_(todo),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (options_.every == 0) options_.every = std::max<std::size_t>(1, todo_ / 10);
  if (options_.out && !options_.tty && options_.journal_line) {
    *options_.out << options_.label << ": " << total_ << " points, " << done_ << " already done (journal), "
                  << todo_ << " to compute\n";
    options_.out->flush();
  }
  if (options_.tty) draw(true);
}

void SweepProgress::advance() {
  ++computed_;
  ++done_;
  draw(false);
}

void SweepProgress::draw(bool force) {
  if (!options_.out) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(computed_) / elapsed : 0;
  const std::size_t left = todo_ > computed_ ? todo_ - computed_ : 0;
  const std::string eta = computed_ > 0 && rate > 0 ? clock_text(static_cast<double>(left) / rate) : "?";
  const double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  std::ostream& out = *options_.out;
  if (options_.tty) {
    // Redraw at most 10 times a second: a terminal is slower than a fast sweep.
    if (!force && computed_ < todo_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(std::min(fraction, 1.0) * kWidth);  // estimates can undercount
    // \033[K clears what a longer previous line left behind.
    out << "\r" << (options_.label == "sweep" ? std::string() : options_.label + ": ")
        << (stage_.empty() ? std::string() : stage_ + " ") << "["
        << std::string(static_cast<std::size_t>(filled), '#')
        << std::string(static_cast<std::size_t>(kWidth - filled), '.') << "] " << done_ << "/" << total_
        << " " << format_fixed(fraction * 100, 1) << "%  " << format_fixed(rate, rate < 1 ? 2 : 1) << " "
        << options_.unit << "/s  ETA " << eta << "\033[K";
    out.flush();
    return;
  }
  if (!force && computed_ % options_.every != 0 && computed_ != todo_) return;
  out << options_.label << ": " << (stage_.empty() ? std::string() : stage_ + ": ") << done_ << "/" << total_
      << " " << options_.unit << " (" << format_fixed(fraction * 100, 1) << "%), " << format_fixed(rate, 2)
      << " " << options_.unit << "/s, ETA " << eta << "\n";
  out.flush();
}

void SweepProgress::finish() {
  if (!options_.out) return;
  if (options_.tty) {
    draw(true);
    *options_.out << "\n";
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string one = options_.unit.size() > 1 && options_.unit.back() == 's'
                              ? options_.unit.substr(0, options_.unit.size() - 1)
                              : options_.unit;
  *options_.out << options_.label << ": computed " << computed_ << " " << options_.unit << " in "
                << format_fixed(elapsed, 1) << " s ("
                << (computed_ ? format_fixed(elapsed / static_cast<double>(computed_), 3) : std::string("-"))
                << " s/" << one << " wall)\n";
  options_.out->flush();
}

void SweepProgress::set_stage(const std::string& stage) {
  stage_ = stage;
  if (options_.tty) draw(true);
}

void SweepProgress::add_work(std::size_t n) {
  total_ += n;
  todo_ += n;
}

void SweepProgress::note(const std::string& line) {
  if (!options_.out) return;
  if (options_.tty) *options_.out << "\r\033[K";
  *options_.out << line << "\n";
  if (options_.tty) draw(true);
  options_.out->flush();
}

}  // namespace moetwin
