#include "child_process.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace moetwin {

ChildOutcome wait_for_child(pid_t pid, int fd, std::chrono::steady_clock::time_point deadline,
                            std::size_t max_bytes) {
  using namespace std::chrono;
  ChildOutcome out;
  bool eof = false;
  while (!eof) {
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0 && out.message.size() < max_bytes)
      out.message.append(buffer, std::min(static_cast<std::size_t>(n), max_bytes - out.message.size()));
    else if (n == 0 || (n < 0 && errno != EINTR))
      eof = true;
  }
  // The pipe closes when the child exits; give it until the deadline to be reaped, then end it.
  while (true) {
    const pid_t done = ::waitpid(pid, &out.status, WNOHANG);
    if (done == pid) return out;
    if (done < 0 && errno != EINTR) return out;
    if (steady_clock::now() >= deadline) break;
    ::usleep(10 * 1000);
  }
  out.timed_out = true;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

void restore_crash_signals() {
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
}

void write_to_parent(int fd, const std::string& data) {
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
}

std::string seconds_text(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

ChildOutcome run_in_child(const std::function<void(int fd)>& child, double timeout_s, std::size_t max_bytes) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1]);
    ::_exit(3);  // the child body returned: an internal error, never the parent's code path
  }
  ::close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(timeout_s));
  ChildOutcome out = wait_for_child(pid, fds[0], deadline, max_bytes);
  ::close(fds[0]);
  return out;
}

}  // namespace moetwin
