#include "moetwin/sim/trace.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/quoted_string.hpp"
#include "moetwin/sim/pipeline_program.hpp"

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

// "12" or "12-15" -> its ranks; false when not of that form.
bool parse_rank_item(const std::string& item, int world, std::vector<int>& out) {
  const std::size_t dash = item.find('-');
  const auto number = [](const std::string& s, int& v) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoi(s);
    return true;
  };
  int lo = 0;
  int hi = 0;
  if (dash == std::string::npos) {
    if (!number(item, lo)) return false;
    hi = lo;
  } else if (!number(item.substr(0, dash), lo) || !number(item.substr(dash + 1), hi) || hi < lo) {
    return false;
  }
  if (hi >= world) return false;
  for (int r = lo; r <= hi; ++r) out.push_back(r);
  return true;
}

}  // namespace

std::vector<int> select_trace_ranks(const std::string& spec, const ParallelLayout& layout,
                                    int critical_rank) {
  const int world = layout.world();
  const int stage_size = layout.tp * layout.cp * layout.dp;
  const int crit_local = critical_rank % stage_size;
  const auto bad = [&]() {
    return InputError({"", 0}, "--trace-ranks", spec,
                      concat({"stages, stages+tp, all, a count N (1 to ", std::to_string(world),
                              ") or a list of ranks and ranges in [0, ", std::to_string(world - 1),
                              "] such as 0,64,128-131"}));
  };
  std::vector<int> out;
  if (spec == "all") {
    for (int r = 0; r < world; ++r) out.push_back(r);
    return out;
  }
  if (spec == "stages" || spec == "stages+tp") {
    for (int st = 0; st < layout.pp; ++st) out.push_back(st * stage_size + crit_local);
    if (spec == "stages+tp") {
      const int tp_base = critical_rank - (crit_local % layout.tp);
      for (int t = 0; t < layout.tp; ++t) out.push_back(tp_base + t);
    }
  } else if (!spec.empty() && spec.find_first_not_of("0123456789") == std::string::npos) {
    if (spec.size() > 9) throw bad();
    const int n = std::stoi(spec);
    if (n < 1 || n > world) throw bad();
    // Positions within a stage: the critical rank's first, then the others in order.
    std::vector<int> locals{crit_local};
    for (int l = 0; l < stage_size; ++l)
      if (l != crit_local) locals.push_back(l);
    for (int l : locals) {
      for (int st = 0; st < layout.pp && static_cast<int>(out.size()) < n; ++st)
        out.push_back(st * stage_size + l);
    }
  } else {
    std::size_t from = 0;
    while (from <= spec.size()) {
      const std::size_t comma = std::min(spec.find(',', from), spec.size());
      if (!parse_rank_item(spec.substr(from, comma - from), world, out)) throw bad();
      from = comma + 1;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

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
      if (p.stream_ops()[static_cast<std::size_t>(s)].empty()) continue;
      sep();
      out.append("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":")
          .append(std::to_string(r))
          .append(",\"tid\":")
          .append(std::to_string(s))
          .append(",\"args\":{\"name\":\"")
          .append(stream_name(s))
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
    out.append("}}");
  }
  out += "\n]}\n";
  return out;
}

}  // namespace moetwin
