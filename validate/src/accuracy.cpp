#include "moetwin/validate/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace moetwin {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

ErrorStats error_stats(const std::vector<double>& errors) {
  ErrorStats s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs_errors;
  double sum = 0;
  for (double e : errors) {
    abs_errors.push_back(std::fabs(e));
    sum += e;
  }
  s.median_abs = percentile(abs_errors, 0.5);
  s.p90_abs = percentile(abs_errors, 0.9);
  s.mean_signed = sum / static_cast<double>(errors.size());
  s.signed_p10 = percentile(errors, 0.1);
  s.signed_p90 = percentile(errors, 0.9);
  return s;
}

std::string cell_key(const LiveRun& r) {
  const Scenario& s = r.scenario;
  const ParallelLayout& p = s.parallel;
  return r.campaign + " " + s.model.name + " " + std::to_string(s.nodes) + "x" + s.instance.name + " tp" +
         std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " vpp" + std::to_string(p.vpp) + " ep" +
         std::to_string(p.ep) + " etp" + std::to_string(p.etp) + " cp" + std::to_string(p.cp) + " dp" +
         std::to_string(p.dp) + " mb" + std::to_string(s.training.micro_batch) + " gbs" +
         std::to_string(s.training.global_batch) + " seq" + std::to_string(s.training.seq_length) +
         " layers" + std::to_string(s.model.layers) + " recompute-" + to_string(s.training.recompute) +
         " overlap-" + (s.training.overlap_moe_a2a ? "on" : "off");
}

std::vector<CellRanking> rank_cells(const std::vector<LiveRun>& runs,
                                    const std::vector<double>& predicted_s) {
  std::vector<CellRanking> cells;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!(predicted_s.at(i) > 0)) continue;
    const std::string key = cell_key(runs[i]);
    auto [it, inserted] = index.emplace(key, cells.size());
    if (inserted) {
      cells.push_back({});
      cells.back().key = key;
      cells.back().campaign = runs[i].campaign;
    }
    cells[it->second].rows.push_back(i);
  }
  std::vector<CellRanking> out;
  for (CellRanking& c : cells) {
    if (c.rows.size() < 2) continue;
    std::vector<std::size_t> by_measured = c.rows;
    // Stable sorts: ties keep input order, so the winner is deterministic.
    std::stable_sort(by_measured.begin(), by_measured.end(),
                     [&](std::size_t a, std::size_t b) { return runs[a].iter_s < runs[b].iter_s; });
    std::vector<std::size_t> by_predicted = c.rows;
    std::stable_sort(by_predicted.begin(), by_predicted.end(),
                     [&](std::size_t a, std::size_t b) { return predicted_s[a] < predicted_s[b]; });
    c.measured_winner = runs[by_measured[0]].scenario.dispatcher.name;
    c.predicted_winner = runs[by_predicted[0]].scenario.dispatcher.name;
    c.measured_lead = runs[by_measured[1]].iter_s / runs[by_measured[0]].iter_s - 1;
    for (std::size_t a = 0; a < c.rows.size(); ++a) {
      for (std::size_t b = a + 1; b < c.rows.size(); ++b) {
        const std::size_t i = c.rows[a];
        const std::size_t j = c.rows[b];
        ++c.pairs;
        const bool agree = (runs[i].iter_s < runs[j].iter_s) == (predicted_s[i] < predicted_s[j]);
        if (agree) ++c.pairs_agree;
        const double measured_gap = std::abs(std::log(runs[i].iter_s / runs[j].iter_s));
        if (runs[i].scenario.dispatcher.name != runs[j].scenario.dispatcher.name &&
            measured_gap >= std::log1p(kDecisiveLead)) {
          ++c.decisive_pairs;
          if (agree) ++c.decisive_agree;
          if (std::abs(std::log(predicted_s[i] / predicted_s[j])) < std::log1p(kNearTie))
            ++c.decisive_near_ties;
        }
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<double> pair_margin_errors(const std::vector<CellRanking>& cells,
                                       const std::vector<LiveRun>& runs,
                                       const std::vector<double>& predicted_s) {
  std::vector<double> errors;
  for (const CellRanking& c : cells) {
    for (std::size_t a = 0; a < c.rows.size(); ++a) {
      for (std::size_t b = a + 1; b < c.rows.size(); ++b) {
        const std::size_t i = c.rows[a];
        const std::size_t j = c.rows[b];
        const double off =
            std::log(predicted_s.at(i) / predicted_s.at(j)) - std::log(runs[i].iter_s / runs[j].iter_s);
        errors.push_back(std::expm1(std::abs(off)));
      }
    }
  }
  return errors;
}

}  // namespace moetwin
