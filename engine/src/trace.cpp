#include "moetwin/engine/trace.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/quoted_string.hpp"

namespace moetwin {

namespace {

std::string micros(TimeNs ns) {
  const TimeNs whole = ns / 1000;
  const TimeNs frac = ns % 1000;
  const std::string f = std::to_string(frac);
  std::string out = std::to_string(whole);
  out.append(".").append(3 - f.size(), '0').append(f);
  return out;
}

}  // namespace

std::string chrome_trace_json(const Workload& w, const EngineResult& result, const std::vector<int>& ranks,
                              const std::vector<std::string>& rank_names) {
  std::vector<char> wanted(static_cast<std::size_t>(w.ranks()), ranks.empty() ? 1 : 0);
  for (int r : ranks) {
    if (r >= 0 && r < w.ranks()) wanted[static_cast<std::size_t>(r)] = 1;
  }
  std::vector<TraceSpan> spans;
  for (const TraceSpan& s : result.trace) {
    if (wanted[static_cast<std::size_t>(s.rank)] && s.end > s.start) spans.push_back(s);
  }
  std::sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return std::tie(a.rank, a.stream, a.start, a.op) < std::tie(b.rank, b.stream, b.start, b.op);
  });
  // Programs with more than one model chunk (vpp > 1) say which chunk an op runs; others leave it out.
  std::vector<char> chunked(w.programs.size(), 0);
  for (std::size_t i = 0; i < w.programs.size(); ++i) {
    for (const OpSpec& op : w.programs[i].ops()) chunked[i] = chunked[i] || op.chunk > 0;  // -1: none
  }
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out.reserve(spans.size() * 100);
  bool first = true;
  auto sep = [&]() {
    if (!first) out += ",\n";
    first = false;
  };
  for (int r = 0; r < w.ranks(); ++r) {
    if (!wanted[static_cast<std::size_t>(r)]) continue;
    const std::string name = static_cast<std::size_t>(r) < rank_names.size()
                                 ? rank_names[static_cast<std::size_t>(r)]
                                 : concat({"rank ", std::to_string(r)});
    sep();
    out.append("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":")
        .append(std::to_string(r))
        .append(",\"args\":{\"name\":")
        .append(quoted_string(name))
        .append("}}");
    const Program& p = w.programs[static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(r)])];
    for (int s = 0; s < p.streams(); ++s) {
      if (p.stream_sizes()[static_cast<std::size_t>(s)] == 0) continue;
      sep();
      out.append("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":")
          .append(std::to_string(r))
          .append(",\"tid\":")
          .append(std::to_string(s))
          .append(",\"args\":{\"name\":\"")
          .append(s < static_cast<int>(w.stream_names.size()) ? w.stream_names[static_cast<std::size_t>(s)]
                                                              : concat({"stream ", std::to_string(s)}))
          .append("\"}}");
    }
  }
  // Labels quoted once per program, not once per event.
  std::vector<std::vector<std::string>> quoted(w.programs.size());
  for (std::size_t i = 0; i < w.programs.size(); ++i) {
    for (const std::string& l : w.programs[i].labels()) quoted[i].push_back(quoted_string(l));
  }
  for (const TraceSpan& s : spans) {
    const std::size_t prog = static_cast<std::size_t>(w.rank_program[static_cast<std::size_t>(s.rank)]);
    const Program& p = w.programs[prog];
    const OpSpec& op = p.ops()[static_cast<std::size_t>(s.op)];
    const std::size_t label = static_cast<std::size_t>(op.label);
    sep();
    out.append("{\"ph\":\"X\",\"name\":")
        .append(label < quoted[prog].size() ? quoted[prog][label] : std::string("\"op\""))
        .append(",\"cat\":\"")
        .append(to_string(op.phase))
        .append("\",\"pid\":")
        .append(std::to_string(s.rank))
        .append(",\"tid\":")
        .append(std::to_string(s.stream))
        .append(",\"ts\":")
        .append(micros(s.start))
        .append(",\"dur\":")
        .append(micros(s.end - s.start))
        .append(",\"args\":{\"mb\":")
        .append(std::to_string(op.microbatch));
    if (chunked[prog]) out.append(",\"chunk\":").append(std::to_string(op.chunk));
    // Flow model: a transfer that shared its links ran longer than alone; say by how much.
    if (s.alone >= 0 && s.end - s.start > s.alone) {
      out.append(",\"alone_us\":")
          .append(micros(s.alone))
          .append(",\"slowed_by_sharing_us\":")
          .append(micros(s.end - s.start - s.alone));
    }
    out.append("}}");
  }
  out += "\n]}\n";
  return out;
}

}  // namespace moetwin
