#include "moetwin/reports/report_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "moetwin/common/concat.hpp"

namespace moetwin {
namespace {

const std::vector<std::string> kPredicted = {"predicted_iter_s", "iteration_s"};
const std::vector<std::string> kLo = {"predicted_lo_s", "lo_s", "iteration_lo_s"};
const std::vector<std::string> kHi = {"predicted_hi_s", "hi_s", "iteration_hi_s"};

bool is_true(const std::string& s) {
  return s == "true" || s == "1" || s == "yes";
}

// recommend's winner column: a boolean per row, or the winning dispatcher's name.
bool row_is_winner(const ReportInput& in, std::size_t r) {
  const std::string& w = in.cell(r, {"winner"});
  if (w == "true" || w == "false" || w == "1" || w == "0") return is_true(w);
  return w == in.cell(r, {"dispatcher"});
}

}  // namespace

bool wants_log_axis(double lo, double hi) {
  return lo > 0 && std::isfinite(lo) && std::isfinite(hi) && hi > 3 * lo;
}

std::string row_label(const ReportInput& in, std::size_t r) {
  std::string s;
  auto add = [&](const char* prefix, const std::vector<std::string>& cols) {
    const std::string& v = in.cell(r, cols);
    if (!v.empty()) {
      if (!s.empty()) s += ' ';
      s.append(prefix).append(v);
    }
  };
  if (in.kind == ReportKind::validate) add("", {"campaign"});
  if (in.kind == ReportKind::predict) add("", {"scenario"});
  add("n", {"nodes"});
  add("tp", {"tp"});
  add("pp", {"pp"});
  const std::string& vpp = in.cell(r, {"vpp"});
  if (!vpp.empty() && vpp != "1") s.append(s.empty() ? "" : " ").append("vpp").append(vpp);  // vpp1: plain
  add("ep", {"ep"});
  add("mb", {"mb", "micro_batch"});
  const std::string& ov = in.cell(r, {"overlap", "overlap_moe_a2a"});
  if (ov == "true" || ov == "on" || ov == "1") s += s.empty() ? "ov" : " ov";
  add("", {"dispatcher"});
  return s.empty() ? concat({"row ", std::to_string(r + 1)}) : s;
}

std::vector<Crossover> find_crossovers(const std::vector<Series>& series) {
  std::vector<Crossover> out;
  for (std::size_t a = 0; a < series.size(); ++a) {
    for (std::size_t b = a + 1; b < series.size(); ++b) {
      // Common x values in ascending order.
      std::vector<std::pair<double, std::pair<double, double>>> common;
      for (const BandPoint& p : series[a].points) {
        for (const BandPoint& q : series[b].points) {
          if (p.x == q.x) common.push_back({p.x, {p.y, q.y}});
        }
      }
      for (std::size_t i = 1; i < common.size(); ++i) {
        const double d0 = common[i - 1].second.first - common[i - 1].second.second;
        const double d1 = common[i].second.first - common[i].second.second;
        if (d0 == 0 || d1 == 0 || (d0 < 0) == (d1 < 0)) continue;
        const double l0 = std::log2(common[i - 1].first);
        const double l1 = std::log2(common[i].first);
        const double x = std::exp2(l0 + (l1 - l0) * d0 / (d0 - d1));
        const std::string& na = series[a].name;
        const std::string& nb = series[b].name;
        out.push_back(d0 < 0 ? Crossover{na, nb, x} : Crossover{nb, na, x});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Crossover& l, const Crossover& r) {
    if (l.x != r.x) return l.x < r.x;
    if (l.faster_before != r.faster_before) return l.faster_before < r.faster_before;
    return l.faster_after < r.faster_after;
  });
  return out;
}

std::vector<NodesFigure> nodes_figures(const ReportInput& in) {
  std::vector<NodesFigure> out;
  if (in.kind != ReportKind::recommend && in.kind != ReportKind::sweep) return out;
  // (model on instance[, mb]) -> dispatcher -> nodes -> fastest row's point. A recommend table holds one
  // layout per micro-batch: one figure per mb, since taking the fastest over micro-batches would draw
  // crossovers that are really a change of micro-batch (e.g. mb 4 not fitting at the smallest scale).
  std::map<std::string, std::map<std::string, std::map<double, BandPoint>>> groups;
  for (std::size_t r = 0; r < in.rows.size(); ++r) {
    if (in.kind == ReportKind::sweep && in.cell(r, {"status"}) != "ok") continue;
    if (!in.fits(r)) continue;  // over HBM: never the fastest of its node count
    const double nodes = in.number(r, {"nodes"});
    const double y = in.number(r, kPredicted);
    const std::string& d = in.cell(r, {"dispatcher"});
    if (!(nodes > 0) || !(y > 0) || d.empty()) continue;
    std::string group = in.cell(r, {"model"}) + " on " + in.cell(r, {"instance"});
    if (in.kind == ReportKind::recommend && in.has("mb")) group += ", mb " + in.cell(r, {"mb"});
    BandPoint p{nodes, y, in.number(r, kLo), in.number(r, kHi)};
    auto& slot = groups[group][d];
    auto it = slot.find(nodes);
    if (it == slot.end() || y < it->second.y) slot[nodes] = p;
  }
  for (const auto& [group, dispatchers] : groups) {
    NodesFigure f;
    f.title = group;
    for (const auto& [name, points] : dispatchers) {
      Series s;
      s.name = name;
      for (const auto& [x, p] : points) s.points.push_back(p);
      f.series.push_back(std::move(s));
    }
    f.crossovers = find_crossovers(f.series);
    out.push_back(std::move(f));
  }
  return out;
}

BreakdownFigure breakdown_figure(const ReportInput& in, std::size_t max_bars) {
  BreakdownFigure f;
  f.title = std::string("Where the time goes (") + to_string(in.kind) + ", max over ranks)";
  const std::vector<std::pair<std::string, std::string>> components = {
      {"compute_s_max", "compute"},       {"exposed_tp_s_max", "exposed TP"},
      {"exposed_ep_s_max", "exposed EP"}, {"exposed_pp_s_max", "exposed PP"},
      {"exposed_dp_s_max", "exposed DP"}, {"host_wait_s_max", "host wait"},
      {"bubble_s_max", "bubble"}};
  std::vector<std::string> present;
  for (const auto& [col, name] : components) {
    if (in.has(col)) {
      present.push_back(col);
      f.components.push_back(name);
    }
  }
  if (present.empty()) return f;
  std::vector<std::size_t> rows;  // the rows drawn
  for (std::size_t r = 0; r < in.rows.size(); ++r) {
    if (in.kind == ReportKind::sweep && in.cell(r, {"status"}) != "ok") continue;
    if (in.kind == ReportKind::recommend && !row_is_winner(in, r)) continue;
    std::vector<double> v;
    bool ok = true;
    for (const std::string& col : present) {
      const double x = in.number(r, {col});
      ok = ok && std::isfinite(x);
      v.push_back(std::isfinite(x) ? x : 0);
    }
    if (!ok) continue;
    ++f.usable_rows;
    if (f.bars.size() >= max_bars) continue;
    rows.push_back(r);
    f.bars.push_back(row_label(in, r));
    f.values.push_back(std::move(v));
    f.iteration.push_back(in.number(r, {"predicted_iter_s", "iteration_s"}));
    f.measured.push_back(in.kind == ReportKind::validate ? in.number(r, {"iter_s"})
                                                         : std::numeric_limits<double>::quiet_NaN());
  }
  // Labels that still tie (columns the label leaves out differ) get their row number.
  std::map<std::string, int> count;
  for (const std::string& b : f.bars) ++count[b];
  for (std::size_t i = 0; i < f.bars.size(); ++i) {
    if (count[f.bars[i]] > 1) f.bars[i].append(" #").append(std::to_string(rows[i] + 1));
  }
  if (f.usable_rows > f.bars.size()) {
    f.title.append(": first ")
        .append(std::to_string(f.bars.size()))
        .append(" of ")
        .append(std::to_string(f.usable_rows))
        .append(in.kind == ReportKind::plan ? " options (ranked)" : " rows");
  }
  return f;
}

ScatterFigure scatter_figure(const ReportInput& in) {
  ScatterFigure f;
  f.title = "Predicted vs measured iteration time";
  if (in.kind != ReportKind::validate) return f;
  int w10 = 0, w20 = 0;
  for (std::size_t r = 0; r < in.rows.size(); ++r) {
    const double m = in.number(r, {"iter_s", "measured_iter_s"});
    const double p = in.number(r, {"predicted_iter_s"});
    if (!(m > 0) || !(p > 0)) continue;
    f.labels.push_back(row_label(in, r));
    f.measured.push_back(m);
    f.predicted.push_back(p);
    const double err = std::fabs(p / m - 1);
    w10 += err <= 0.10 + 1e-12 ? 1 : 0;
    w20 += err <= 0.20 + 1e-12 ? 1 : 0;
  }
  if (!f.measured.empty()) {
    f.within10 = static_cast<double>(w10) / static_cast<double>(f.measured.size());
    f.within20 = static_cast<double>(w20) / static_cast<double>(f.measured.size());
  }
  return f;
}

ParetoFigure pareto_figure(const ReportInput& in) {
  ParetoFigure f;
  f.title = "Plan: time to train vs cost";
  if (in.kind != ReportKind::plan) return f;
  bool priced = in.rows.empty() ? false : true;
  for (std::size_t r = 0; r < in.rows.size(); ++r)
    priced = priced && std::isfinite(in.number(r, {"cost_usd"}));
  f.cost_label = priced ? "cost (USD)" : "node-hours";
  std::vector<std::pair<std::pair<double, double>, std::string>> front;
  for (std::size_t r = 0; r < in.rows.size(); ++r) {
    const double d = in.number(r, {"days"});
    const double c = in.number(r, {priced ? "cost_usd" : "node_hours"});
    if (!std::isfinite(d) || !std::isfinite(c)) continue;
    f.days.push_back(d);
    f.cost.push_back(c);
    if (is_true(in.cell(r, {"pareto"}))) front.push_back({{d, c}, row_label(in, r)});
    if (is_true(in.cell(r, {"recommended"}))) {
      f.has_recommended = true;
      f.recommended_days = d;
      f.recommended_cost = c;
      f.recommended_label = row_label(in, r);
    }
  }
  std::sort(front.begin(), front.end());
  for (const auto& [point, label] : front) {
    f.front_days.push_back(point.first);
    f.front_cost.push_back(point.second);
    f.front_labels.push_back(label);
  }
  double deadline = in.deadline_days.empty() ? 0 : std::strtod(in.deadline_days.c_str(), nullptr);
  if (in.deadline_days.empty() && !in.rows.empty()) deadline = in.number(0, {"deadline_days"});
  if (std::isfinite(deadline) && deadline > 0) f.deadline_days = deadline;
  return f;
}

}  // namespace moetwin
