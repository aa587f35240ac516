#include "moetwin/validate/fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "moetwin/common/concat.hpp"
#include "moetwin/sim/fitted_profile.hpp"

namespace moetwin {
namespace {

// A synthetic "replay" with the structure of the real one: per row, compute x scale plus host launches
// x launch_s serialised with it, and the larger of exposed A2A and collective time (a max, so the model
// is only piecewise linear). Row r's coefficients are fixed numbers.
struct Synthetic {
  std::vector<double> compute, launches, a2a, coll;
  std::vector<double> operator()(const SimProfile& p, const std::vector<std::size_t>& which) const {
    std::vector<double> t;
    for (std::size_t r : which) {
      t.push_back(compute[r] * p.compute_time_scale + launches[r] * p.launch_s +
                  std::max(a2a[r] * p.generic_a2a.time_scale, coll[r] * p.collective_time_scale));
    }
    return t;
  }
};

Synthetic make_rows() {
  Synthetic s;
  for (int r = 0; r < 24; ++r) {
    s.compute.push_back(1.0 + 0.37 * (r % 5));
    s.launches.push_back(20000.0 * (1 + r % 3));
    s.a2a.push_back(0.5 + 0.21 * (r % 7));
    s.coll.push_back(0.9 + 0.05 * (r % 4));
  }
  return s;
}

std::vector<std::size_t> rows24() {
  std::vector<std::size_t> v;
  for (std::size_t r = 0; r < 24; ++r) v.push_back(r);
  return v;
}

FitOptions all_parameters() {
  FitOptions o;
  o.outer_iterations = 10;  // the max() kink needs a few rounds of linear models
  for (const char* k : {"compute_time_scale", "launch_s", "collective_time_scale", "a2a_time_scale"})
    o.parameters.push_back(k);
  return o;
}

// The parameters the synthetic data are generated with.
SimProfile generating_parameters() {
  SimProfile truth;
  truth.compute_time_scale = 1.7;
  set_free_parameter(truth, "launch_s", 30e-6);
  truth.generic_a2a.time_scale = 1.25;
  truth.collective_time_scale = 1.2;
  return truth;
}

TEST(Fit, RecoversTheParametersThatGeneratedTheData) {
  const Synthetic s = make_rows();
  const SimProfile truth = generating_parameters();
  const std::vector<std::size_t> rows = rows24();
  const std::vector<double> measured = s(truth, rows);
  const FitResult r = fit_parameters(measured, rows, SimProfile{}, all_parameters(), s);
  EXPECT_LT(r.loss, 1e-8);
  EXPECT_LT(r.loss, r.start_loss);
  EXPECT_NEAR(r.profile.compute_time_scale, 1.7, 1.7e-3);
  EXPECT_NEAR(r.profile.launch_s, 30e-6, 30e-9);
  EXPECT_NEAR(r.profile.backward_launch_s, 15e-6, 15e-9);  // tied to launch_s
  EXPECT_NEAR(r.profile.generic_a2a.time_scale, 1.25, 1.25e-3);
  EXPECT_EQ(r.rows_failed, 0);
  EXPECT_GE(r.replays, 1 + 4);  // start + one linear model at least
}

TEST(Fit, HuberObjectiveResistsAnOutlierRow) {
  // The data come from known parameters, except three rows measured 60% slow (a campaign on a bad day).
  // The squared objective drags the parameters towards them; the Huber one (knee 0.1) keeps the other
  // 21 rows much closer to exact.
  const Synthetic s = make_rows();
  const SimProfile truth = generating_parameters();
  const std::vector<std::size_t> rows = rows24();
  std::vector<double> measured = s(truth, rows);
  for (std::size_t r : {2u, 9u, 16u}) measured[r] *= 1.6;
  FitOptions huber = all_parameters();
  huber.huber_delta = 0.1;
  const FitResult squared_fit = fit_parameters(measured, rows, SimProfile{}, all_parameters(), s);
  const FitResult huber_fit = fit_parameters(measured, rows, SimProfile{}, huber, s);
  const auto worst_clean_error = [&](const FitResult& f) {
    double worst = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (r == 2 || r == 9 || r == 16) continue;
      worst = std::max(worst, std::fabs(f.predicted_s[r] / measured[r] - 1));
    }
    return worst;
  };
  EXPECT_LT(worst_clean_error(huber_fit), 0.5 * worst_clean_error(squared_fit));
  // Its reported loss is the Huber objective of its own predictions.
  EXPECT_DOUBLE_EQ(huber_fit.loss, log_ratio_loss(huber_fit.predicted_s, measured, 0.1));
}

TEST(Fit, StaysInsideTheBounds) {
  const Synthetic s = make_rows();
  const std::vector<std::size_t> rows = rows24();
  std::vector<double> measured = s(SimProfile{}, rows);
  for (double& m : measured) m *= 50;  // needs more than any bound allows
  const FitResult r = fit_parameters(measured, rows, SimProfile{}, all_parameters(), s);
  for (const std::string& k : all_parameters().parameters) {
    const double v = get_free_parameter(r.profile, k);
    EXPECT_LE(v, find_free_parameter(k)->hi * (1 + 1e-12)) << k;
    EXPECT_GE(v, find_free_parameter(k)->lo * (1 - 1e-12)) << k;
  }
  EXPECT_NEAR(r.profile.compute_time_scale, free_parameters()[0].hi, 1e-9);
}

TEST(Fit, OnlyTheNamedParametersMove) {
  const Synthetic s = make_rows();
  SimProfile truth;
  truth.compute_time_scale = 2;
  const std::vector<std::size_t> rows = rows24();
  FitOptions o;
  o.parameters = {"compute_time_scale"};
  const FitResult r = fit_parameters(s(truth, rows), rows, SimProfile{}, o, s);
  EXPECT_NEAR(r.profile.compute_time_scale, 2, 2e-3);
  EXPECT_EQ(r.profile.launch_s, SimProfile{}.launch_s);
  EXPECT_EQ(r.profile.generic_a2a.time_scale, 1);
}

TEST(CrossValidate, HeldOutGroupsArePredictedByFoldsThatNeverSawThem) {
  // Collective time below the A2A time everywhere: a linear model, so every fold's fit is exact and the
  // test isolates the fold mechanics from the kink (covered above).
  Synthetic s = make_rows();
  for (double& c : s.coll) c = 0.1;
  SimProfile truth;
  truth.compute_time_scale = 1.5;
  truth.generic_a2a.time_scale = 1.3;
  const std::vector<std::size_t> rows = rows24();
  std::vector<double> measured = s(truth, rows);
  std::vector<std::string> group(24);
  // Not "g" + std::to_string(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
  for (std::size_t r = 0; r < 24; ++r) group[r] = concat({"g", std::to_string(r % 4)});
  // Group g3's rows are 20% slower than any parameter set explains: its fold cannot know that, the
  // other folds are pulled a little by it.
  for (std::size_t r = 3; r < 24; r += 4) measured[r] *= 1.2;
  const FitOptions o = all_parameters();
  const FitResult full = fit_parameters(measured, rows, SimProfile{}, o, s);
  const CrossValidation cv = cross_validate(measured, rows, group, full, o, s);
  ASSERT_EQ(cv.folds.size(), 4u);
  ASSERT_EQ(cv.predicted_s.size(), 24u);
  // The g3 fold was fitted on exact data: it predicts g3 ~20% fast.
  for (std::size_t r = 3; r < 24; r += 4) EXPECT_NEAR(cv.predicted_s[r] / measured[r], 1 / 1.2, 0.01);
  // Each fold also predicts its training rows (its own spread): the g3 fold fits the other groups exactly,
  // and its held-out rows are the out-of-sample predictions.
  ASSERT_EQ(cv.fold_predicted_s.size(), 4u);
  const std::vector<double>& g3 = cv.fold_predicted_s.at("g3");
  ASSERT_EQ(g3.size(), 24u);
  for (std::size_t r = 0; r < 24; ++r) {
    if (r % 4 == 3) {
      EXPECT_EQ(g3[r], cv.predicted_s[r]);
    } else {
      EXPECT_NEAR(g3[r] / measured[r], 1, 0.01) << r;
    }
  }
  // Refining each fold with replays of its own training rows gives the same answer here.
  FitOptions refine = o;
  refine.refine_outer = 2;
  const CrossValidation cv2 = cross_validate(measured, rows, group, full, refine, s);
  for (std::size_t r = 3; r < 24; r += 4) EXPECT_NEAR(cv2.predicted_s[r] / measured[r], 1 / 1.2, 0.01);
  EXPECT_GT(cv2.replays, cv.replays);
}

TEST(LogRatioLoss, SkipsFailedRows) {
  EXPECT_DOUBLE_EQ(log_ratio_loss({2, 0}, {1, 5}), std::log(2.0) * std::log(2.0));
  // Huber: squared inside the knee, linear beyond with the same value and slope at it.
  const double l = std::log(2.0);
  EXPECT_DOUBLE_EQ(log_ratio_loss({2, 0}, {1, 5}, 1.0), l * l);                // inside the knee
  EXPECT_DOUBLE_EQ(log_ratio_loss({2, 0}, {1, 5}, 0.1), 0.1 * (2 * l - 0.1));  // beyond: linear
  EXPECT_DOUBLE_EQ(log_ratio_loss({0.5}, {1}, 0.1), 0.1 * (2 * l - 0.1));      // symmetric in log
  // An outlier costs linearly: ten times further out costs about ten times more, not a hundred.
  EXPECT_NEAR(log_ratio_loss({std::exp(2.0)}, {1}, 0.1) / log_ratio_loss({std::exp(0.2)}, {1}, 0.1), 13.0,
              1e-9);
  EXPECT_THROW(log_ratio_loss({1}, {1}, -0.1), std::logic_error);
}

}  // namespace
}  // namespace moetwin
