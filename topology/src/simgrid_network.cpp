#include "moetwin/topology/simgrid_network.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>

#include "flow_timing.hpp"
#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

namespace sg4 = simgrid::s4u;

// SimGrid command line: quiet logs, and the configuration documented in simgrid_network.hpp.
const char* const kSimgridArgs[] = {
    "moetwin-simgrid",
    "--log=root.thresh:critical",
    "--cfg=network/model:CM02",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/weight-S:0",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
};

// Runs in the forked child: builds the platform, simulates, returns finish times in s, parallel to
// `order` (the non-trivial flows in issue order). The Engine is deliberately leaked: the child _exit()s.
std::vector<double> simulate(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                             const std::vector<TimeNs>& activation, const std::vector<std::size_t>& order) {
  std::vector<std::string> args(std::begin(kSimgridArgs), std::end(kSimgridArgs));
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  auto* engine = new sg4::Engine(&argc, argv.data());

  sg4::NetZone* zone = sg4::create_star_zone("moetwin");
  std::vector<sg4::Link*> links;
  links.reserve(platform.links().size());
  for (std::size_t l = 0; l < platform.links().size(); ++l) {
    // Latency stays 0 here on purpose: see simgrid_network.hpp. Sharing policy: SHARED (the default).
    const std::string name = concat({"l", std::to_string(l)});
    links.push_back(zone->create_link(name, platform.links()[l].bandwidth)->seal());
  }
  constexpr double kHostSpeed = 1e9;  // flop/s; irrelevant, no computation is simulated
  sg4::Host* sink = zone->create_host("sink", kHostSpeed)->seal();
  zone->add_route(nullptr, sink->get_netpoint(), nullptr, nullptr, {}, false);
  std::vector<sg4::Host*> sources;
  sources.reserve(order.size());
  for (const std::size_t i : order) {
    sg4::Host* host = zone->create_host(concat({"f", std::to_string(i)}), kHostSpeed)->seal();
    std::vector<sg4::LinkInRoute> route;
    route.reserve(flows[i].route.size());
    for (const int l : flows[i].route) {
      route.emplace_back(links[static_cast<std::size_t>(l)]);
    }
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, route, false);
    sources.push_back(host);
  }
  zone->seal();

  std::vector<double> finish(order.size(), 0.0);
  sg4::Actor::create("driver", sink, [&]() {
    std::vector<sg4::CommPtr> comms;
    comms.reserve(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::size_t i = order[k];
      const double at = static_cast<double>(activation[i]) * 1e-9;  // s
      if (at > sg4::Engine::get_clock()) {
        sg4::this_actor::sleep_until(at);
      }
      const auto bytes = static_cast<std::uint64_t>(std::llround(flows[i].bytes));
      comms.push_back(sg4::Comm::sendto_async(sources[k], sink, bytes));
    }
    sg4::Comm::wait_all(comms);
    for (std::size_t k = 0; k < comms.size(); ++k) {
      finish[k] = comms[k]->get_finish_time();
    }
  });
  engine->run();
  return finish;
}

void write_all(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ::_exit(3);
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Child protocol: 'O' then the finish times as raw doubles, or 'E' then an error message.
[[noreturn]] void run_child(int fd, const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                            const std::vector<TimeNs>& activation, const std::vector<std::size_t>& order) {
  try {
    const std::vector<double> finish = simulate(platform, flows, activation, order);
    write_all(fd, "O", 1);
    write_all(fd, finish.data(), finish.size() * sizeof(double));
  } catch (const std::exception& e) {
    write_all(fd, "E", 1);
    write_all(fd, e.what(), std::strlen(e.what()));
  } catch (...) {
    write_all(fd, "Eunknown exception", 18);
  }
  ::close(fd);
  ::_exit(0);  // no atexit handlers, no destructors of the parent's state, no stdio flush
}

std::vector<double> simulate_in_child(const NetPlatform& platform, const std::vector<FlowSpec>& flows,
                                      const std::vector<TimeNs>& activation,
                                      const std::vector<std::size_t>& order) {
  int fds[2];
  if (::pipe(fds) != 0) {
    throw std::runtime_error(std::string("simgrid network: pipe: ") + std::strerror(errno));
  }
  // Flush stdio first: the child inherits unflushed buffers, and SimGrid may flush them again.
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("simgrid network: fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], platform, flows, activation, order);
  }
  ::close(fds[1]);
  std::string reply;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(std::string("simgrid network: waitpid: ") + std::strerror(errno));
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("simgrid network: the SimGrid child process " +
                             (WIFSIGNALED(status)
                                  ? "died of signal " + std::to_string(WTERMSIG(status))
                                  : "exited with status " + std::to_string(WEXITSTATUS(status))));
  }
  if (!reply.empty() && reply[0] == 'E') {
    throw std::runtime_error("simgrid network: " + reply.substr(1));
  }
  if (reply.empty() || reply[0] != 'O' || reply.size() != 1 + order.size() * sizeof(double)) {
    throw std::runtime_error("simgrid network: malformed reply from the SimGrid child process");
  }
  std::vector<double> finish(order.size());
  std::memcpy(finish.data(), reply.data() + 1, finish.size() * sizeof(double));
  return finish;
}

}  // namespace

std::string SimgridNetwork::description() const {
  return "SimGrid 3.32 S4U oracle: CM02 max-min sharing, no cross-traffic, shared links, fixed issue order";
}

std::string SimgridNetwork::reference() const {
  return "SimGrid (https://simgrid.org), network/model:CM02; Velho et al., ACM TOMACS 23(4), 2013";
}

NetworkRun SimgridNetwork::run(const NetPlatform& platform, const std::vector<FlowSpec>& flows) const {
  detail::validate_flows(platform, flows);
  const std::vector<TimeNs> activation = detail::activation_times(platform, flows);
  std::vector<TimeNs> finish(flows.size(), 0);
  std::vector<std::size_t> order;  // non-trivial flows in issue order (activation, index)
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (detail::is_trivial(flows[i])) {
      finish[i] = activation[i];
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return activation[a] < activation[b]; });
  if (!order.empty()) {
    const std::vector<double> seconds = simulate_in_child(platform, flows, activation, order);
    for (std::size_t k = 0; k < order.size(); ++k) {
      finish[order[k]] = std::max(activation[order[k]], ceil_ns(seconds[k] * 1e9));
    }
  }
  return detail::make_run(platform, flows, activation, finish);
}

}  // namespace moetwin
