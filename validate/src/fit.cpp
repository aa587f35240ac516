#include "moetwin/validate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {

namespace {

const FreeParameter& parameter(const std::string& key) {
  const FreeParameter* fp = find_free_parameter(key);
  if (fp == nullptr) throw std::logic_error("fit: unknown free parameter " + key);
  return *fp;
}

// The optimiser works in log space: a parameter whose physical lower bound is 0 starts at 1e-4 of its
// upper bound (a time 10^4 x below the largest allowed is indistinguishable from 0 in an iteration).
double log_floor(const FreeParameter& fp) {
  return fp.lo > 0 ? fp.lo : fp.hi * 1e-4;
}

// Row i's position in model.rows.
std::vector<std::size_t> positions(const Linearization& model, const std::vector<std::size_t>& subset) {
  std::vector<std::size_t> pos;
  for (std::size_t r : subset) {
    const auto it = std::find(model.rows.begin(), model.rows.end(), r);
    if (it == model.rows.end()) throw std::logic_error("minimise_linear_model: row outside the model");
    pos.push_back(static_cast<std::size_t>(it - model.rows.begin()));
  }
  return pos;
}

std::vector<double> measured_of(const std::vector<double>& measured, const std::vector<std::size_t>& rows) {
  std::vector<double> m;
  for (std::size_t r : rows) m.push_back(measured.at(r));
  return m;
}

Linearization linearise(const SimProfile& at, const std::vector<double>& base,
                        const std::vector<std::size_t>& rows, const FitOptions& options,
                        const RowTimes& times, int& replays) {
  Linearization m;
  m.at = at;
  m.rows = rows;
  m.base = base;
  for (const std::string& k : options.parameters) {
    const FreeParameter& fp = parameter(k);
    const double v = get_free_parameter(at, k);
    double stepped = v * (1 + options.relative_step);
    if (stepped > fp.hi) stepped = v * (1 - options.relative_step);
    SimProfile moved = at;
    set_free_parameter(moved, k, stepped);
    const std::vector<double> t = times(moved, rows);
    ++replays;
    std::vector<double> slope(rows.size(), 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (t[i] > 0 && base[i] > 0) slope[i] = (t[i] - base[i]) / (stepped - v);
    }
    m.slope.push_back(std::move(slope));
  }
  return m;
}

}  // namespace

double log_ratio_loss(const std::vector<double>& predicted, const std::vector<double>& measured,
                      double huber_delta) {
  if (!(huber_delta >= 0)) throw std::logic_error("log_ratio_loss: negative Huber knee");
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    if (!(predicted[i] > 0) || !(measured[i] > 0)) continue;
    const double l = std::fabs(std::log(predicted[i] / measured[i]));
    sum += huber_delta > 0 && l > huber_delta ? huber_delta * (2 * l - huber_delta) : l * l;
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

SimProfile minimise_linear_model(const Linearization& model, const std::vector<double>& measured,
                                 const std::vector<std::size_t>& subset, const FitOptions& options) {
  const std::vector<std::size_t> pos = positions(model, subset);
  const std::vector<double> meas = measured_of(measured, subset);
  const std::size_t K = options.parameters.size();
  std::vector<double> at(K), lo(K), hi(K), u(K);
  for (std::size_t k = 0; k < K; ++k) {
    const std::string& key = options.parameters[k];
    const FreeParameter& fp = parameter(key);
    at[k] = get_free_parameter(model.at, key);
    lo[k] = std::log(log_floor(fp));
    hi[k] = std::log(fp.hi);
    u[k] = std::clamp(std::log(at[k]), lo[k], hi[k]);
  }
  std::vector<double> pred(pos.size());
  auto loss = [&](const std::vector<double>& x) {
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const double b = model.base[pos[i]];
      if (!(b > 0)) {
        pred[i] = 0;
        continue;
      }
      double t = b;
      for (std::size_t k = 0; k < K; ++k) t += model.slope[k][pos[i]] * (std::exp(x[k]) - at[k]);
      // The linear model can extrapolate below zero far from its point; a time is never below 1% of it.
      pred[i] = std::max(t, 0.01 * b);
    }
    return log_ratio_loss(pred, meas, options.huber_delta);
  };
  double best = loss(u);
  constexpr int kGrid = 32;
  constexpr double kInvPhi = 0.6180339887498949;
  for (int sweep = 0; sweep < 500; ++sweep) {
    double moved = 0;
    for (std::size_t k = 0; k < K; ++k) {
      // Coarse grid over the bounds, then golden section inside the best grid cell's neighbours.
      std::vector<double> x = u;
      double grid_best = best;
      double grid_u = u[k];
      for (int g = 0; g <= kGrid; ++g) {
        x[k] = lo[k] + (hi[k] - lo[k]) * g / kGrid;
        const double l = loss(x);
        if (l < grid_best) {
          grid_best = l;
          grid_u = x[k];
        }
      }
      // Bracket around the better of the grid's best point and the current value.
      if (!(grid_best < best)) {
        grid_best = best;
        grid_u = u[k];
      }
      const double cell = (hi[k] - lo[k]) / kGrid;
      double a = std::max(lo[k], grid_u - cell);
      double b = std::min(hi[k], grid_u + cell);
      double c = b - kInvPhi * (b - a);
      double d = a + kInvPhi * (b - a);
      x[k] = c;
      double fc = loss(x);
      x[k] = d;
      double fd = loss(x);
      for (int it = 0; it < 40; ++it) {
        if (fc < fd) {
          b = d;
          d = c;
          fd = fc;
          c = b - kInvPhi * (b - a);
          x[k] = c;
          fc = loss(x);
        } else {
          a = c;
          c = d;
          fc = fd;
          d = a + kInvPhi * (b - a);
          x[k] = d;
          fd = loss(x);
        }
      }
      const double cand = fc < fd ? c : d;
      const double cand_loss = std::min(fc, fd);
      double new_u = u[k];
      if (cand_loss < grid_best) {
        new_u = cand;
        grid_best = cand_loss;
      } else {
        new_u = grid_u;
      }
      if (grid_best < best) {
        moved = std::max(moved, std::fabs(new_u - u[k]));
        u[k] = new_u;
        best = grid_best;
      }
    }
    if (moved < 1e-6) break;
  }
  SimProfile out = model.at;
  for (std::size_t k = 0; k < K; ++k) set_free_parameter(out, options.parameters[k], std::exp(u[k]));
  return out;
}

FitResult fit_parameters(const std::vector<double>& measured, const std::vector<std::size_t>& which,
                         const SimProfile& start, const FitOptions& options, const RowTimes& times) {
  if (options.parameters.empty()) throw std::logic_error("fit_parameters: no parameters to fit");
  FitResult r;
  const std::vector<double> meas = measured_of(measured, which);
  // Start inside the bounds.
  SimProfile point = start;
  for (const std::string& k : options.parameters) {
    const FreeParameter& fp = parameter(k);
    set_free_parameter(point, k, std::clamp(get_free_parameter(point, k), log_floor(fp), fp.hi));
  }
  std::vector<double> base = times(point, which);
  ++r.replays;
  r.start_loss = log_ratio_loss(base, meas, options.huber_delta);
  double current = r.start_loss;
  Linearization model = linearise(point, base, which, options, times, r.replays);
  for (int outer = 0; outer < options.outer_iterations; ++outer) {
    SimProfile cand = minimise_linear_model(model, measured, which, options);
    bool accepted = false;
    for (int halving = 0; halving < 3 && !accepted; ++halving) {
      const std::vector<double> t = times(cand, which);
      ++r.replays;
      const double l = log_ratio_loss(t, meas, options.huber_delta);
      if (l < current * (1 - 1e-4)) {
        current = l;
        point = cand;
        base = t;
        accepted = true;
      } else {
        // Halfway (geometrically) back toward the current point.
        for (const std::string& k : options.parameters) {
          set_free_parameter(cand, k, std::sqrt(get_free_parameter(cand, k) * get_free_parameter(point, k)));
        }
      }
    }
    if (options.progress) {
      options.progress("round " + std::to_string(outer + 1) + ": objective " + std::to_string(current) +
                       (accepted ? "" : " (no improvement, stopping)"));
    }
    if (!accepted) break;
    model = linearise(point, base, which, options, times, r.replays);
  }
  r.profile = point;
  r.loss = current;
  r.predicted_s = base;
  for (double t : base) r.rows_failed += t > 0 ? 0 : 1;
  r.model = std::move(model);
  return r;
}

CrossValidation cross_validate(const std::vector<double>& measured, const std::vector<std::size_t>& which,
                               const std::vector<std::string>& group_of, const FitResult& full,
                               const FitOptions& options, const RowTimes& times) {
  CrossValidation cv;
  cv.predicted_s.assign(which.size(), 0);
  std::map<std::string, std::vector<std::size_t>> members;  // group -> positions in `which`
  for (std::size_t i = 0; i < which.size(); ++i) members[group_of.at(which[i])].push_back(i);
  for (const auto& [group, held] : members) {
    std::vector<std::size_t> train, test;
    for (std::size_t i = 0; i < which.size(); ++i) {
      if (group_of.at(which[i]) == group) {
        test.push_back(which[i]);
      } else {
        train.push_back(which[i]);
      }
    }
    if (train.empty()) throw std::logic_error("cross_validate: a fold without training rows");
    SimProfile fold = minimise_linear_model(full.model, measured, train, options);
    // A parameter no training row is sensitive to (a stack-scoped term whose stack is held out, say) keeps
    // the all-rows optimum in the linear model: information from the held-out rows. Reset it to what a
    // fit without those rows would hold, the unfitted default, so the fold predicts them as a user would
    // be predicted on a stack (dispatcher, ...) the fit has never seen.
    const SimProfile neutral;
    for (std::size_t k = 0; k < options.parameters.size(); ++k) {
      bool seen = false;
      for (std::size_t r = 0; r < full.model.rows.size() && !seen; ++r) {
        const bool in_train = std::find(train.begin(), train.end(), full.model.rows[r]) != train.end();
        seen = in_train && full.model.slope[k][r] != 0;
      }
      if (!seen)
        set_free_parameter(fold, options.parameters[k], get_free_parameter(neutral, options.parameters[k]));
    }
    if (options.refine_outer > 0) {
      FitOptions refine = options;
      refine.outer_iterations = options.refine_outer;
      const FitResult r = fit_parameters(measured, train, fold, refine, times);
      cv.replays += r.replays;
      fold = r.profile;
    }
    // Every row, not only the held-out ones: the training rows' residuals at the fold's own parameters are
    // the spread the fold's band starts from (novelty_bands.hpp).
    std::vector<double> t = times(fold, which);
    ++cv.replays;
    if (options.progress)
      options.progress("fold without " + group + ": " + std::to_string(test.size()) + " rows");
    for (const std::size_t k : held) cv.predicted_s[k] = t[k];
    cv.folds.emplace(group, fold);
    cv.fold_predicted_s.emplace(group, std::move(t));
  }
  return cv;
}

}  // namespace moetwin
