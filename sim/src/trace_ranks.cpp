#include "moetwin/sim/trace_ranks.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {

namespace {

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

}  // namespace moetwin
