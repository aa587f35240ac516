// Inside the calibration database code only: running libhdf5 on bytes it may crash or hang on (a crafted
// database whose stamp was recomputed: XXH64 is public) in a child process that the parent waits for with
// a deadline. Used by `stamp` (unstamped files) and by every read (calibration_db_isolated.cpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace moetwin {

struct ChildOutcome {
  bool timed_out = false;
  int status = 0;       // waitpid's status when the child ended
  std::string message;  // what the child wrote to the pipe (at most the caller's max_bytes)
};

// Waits for the child `pid` until `deadline`, reading what it writes to `fd` (at most `max_bytes`; more
// is dropped); kills it (SIGKILL) past the deadline.
ChildOutcome wait_for_child(pid_t pid, int fd, std::chrono::steady_clock::time_point deadline,
                            std::size_t max_bytes);

// Forks a child that runs `child` with the write end of a pipe (it must end the process with _exit and never
// return), and waits for it as wait_for_child does, `timeout_s` seconds from now. Throws std::runtime_error
// when the pipe or the fork cannot be made.
ChildOutcome run_in_child(const std::function<void(int fd)>& child, double timeout_s, std::size_t max_bytes);

// In a child: the signals a crash raises end it with that signal (libfabric's PSM providers and the
// sanitizers install handlers that print and exit 1), so that the parent sees a crash as a crash.
void restore_crash_signals();

// Writes all of `data` to `fd`, retrying on EINTR; stops at the first other error (the parent is gone).
void write_to_parent(int fd, const std::string& data);

// "2.5" for 2.5, "60" for 60: seconds in messages.
std::string seconds_text(double seconds);

}  // namespace moetwin
