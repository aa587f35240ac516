#include "moetwin/sim/trace.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/quoted_string.hpp"
#include "moetwin/sim/pipeline_program.hpp"

namespace moetwin {

namespace {

std::string micros(TimeNs ns) {
  const TimeNs whole = ns / 1000;
  const TimeNs frac = ns % 1000;
  std::string f = std::to_string(frac);
  return std::to_string(whole) + "." + std::string(3 - f.size(), '0') + f;
}

const char* stream_name(int s) {
  switch (s) {
    case kStreamCompute:
      return "compute";
    case kStreamEpComm:
      return "ep-comm";
    case kStreamPpSendFwd:
      return "pp-send-fwd";
    case kStreamPpRecvFwd:
      return "pp-recv-fwd";
    case kStreamPpSendBwd:
      return "pp-send-bwd";
    case kStreamPpRecvBwd:
      return "pp-recv-bwd";
    case kStreamDpComm:
      return "dp-comm";
    default:
      return "stream";
  }
}

}  // namespace

std::string chrome_trace_json(const Workload& w, const EngineResult& result, int max_ranks,
                              const std::vector<std::string>& rank_names) {
  const int ranks = max_ranks < 0 ? w.ranks() : std::min(max_ranks, w.ranks());
  std::vector<TraceSpan> spans;
  for (const TraceSpan& s : result.trace) {
    if (s.rank < ranks) spans.push_back(s);
  }
  std::sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return std::tie(a.rank, a.stream, a.start, a.op) < std::tie(b.rank, b.stream, b.start, b.op);
  });
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&]() {
    if (!first) out += ",\n";
    first = false;
  };
  for (int r = 0; r < ranks; ++r) {
    const std::string name = static_cast<std::size_t>(r) < rank_names.size()
                                 ? rank_names[static_cast<std::size_t>(r)]
                                 : "rank " + std::to_string(r);
    sep();
    out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(r) +
           ",\"args\":{\"name\":" + quoted_string(name) + "}}";
    const Program& p = w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(r)])];
    for (int s = 0; s < p.streams(); ++s) {
      if (p.stream_ops()[static_cast<std::size_t>(s)].empty()) continue;
      sep();
      out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(r) +
             ",\"tid\":" + std::to_string(s) + ",\"args\":{\"name\":\"" + stream_name(s) + "\"}}";
    }
  }
  for (const TraceSpan& s : spans) {
    const Program& p = w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(s.rank)])];
    const OpSpec& op = p.ops()[static_cast<std::size_t>(s.op)];
    const std::string label = static_cast<std::size_t>(op.label) < p.labels().size()
                                  ? p.labels()[static_cast<std::size_t>(op.label)]
                                  : std::string("op");
    sep();
    out += "{\"ph\":\"X\",\"name\":" + quoted_string(label) + ",\"cat\":\"" + to_string(op.phase) +
           "\",\"pid\":" + std::to_string(s.rank) + ",\"tid\":" + std::to_string(s.stream) +
           ",\"ts\":" + micros(s.start) + ",\"dur\":" + micros(s.end - s.start) +
           ",\"args\":{\"op\":" + std::to_string(s.op) + ",\"mb\":" + std::to_string(op.microbatch) +
           ",\"chunk\":" + std::to_string(op.chunk) + "}}";
  }
  out += "\n]}\n";
  return out;
}

}  // namespace moetwin
