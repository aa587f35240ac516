#include "moetwin/reports/report_figures.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "moetwin/reports/gnuplot.hpp"

namespace moetwin {
namespace {

std::string fixture(const std::string& name) {
  return std::string(MOETWIN_SOURCE_DIR) + "/reports/tests/data/" + name;
}

// nccl-alltoall 2.0, 2.2, 3.0 s and deepep-uccl 2.4, 2.3, 2.5 s at 8, 16, 32 nodes: the difference
// -0.4, -0.1, +0.5 changes sign between 16 and 32 nodes; log2-linear: 2^(4 + 0.1 / 0.6) = 2^(25/6).
TEST(ReportFigures, NodesFigureSeriesAndCrossover) {
  const auto figs = nodes_figures(load_report_input(fixture("recommend.csv")));
  ASSERT_EQ(figs.size(), 1u);
  const NodesFigure& f = figs[0];
  EXPECT_EQ(f.title, "kimi-k2 on p6-b300.48xlarge, mb 1");
  ASSERT_EQ(f.series.size(), 2u);
  EXPECT_EQ(f.series[0].name, "deepep-uccl");
  EXPECT_EQ(f.series[1].name, "nccl-alltoall");
  ASSERT_EQ(f.series[1].points.size(), 3u);
  EXPECT_DOUBLE_EQ(f.series[1].points[2].x, 32);
  EXPECT_DOUBLE_EQ(f.series[1].points[2].y, 3.0);
  EXPECT_DOUBLE_EQ(f.series[1].points[2].lo, 2.7);
  EXPECT_DOUBLE_EQ(f.series[1].points[2].hi, 3.6);
  ASSERT_EQ(f.crossovers.size(), 1u);
  EXPECT_EQ(f.crossovers[0].faster_before, "nccl-alltoall");
  EXPECT_EQ(f.crossovers[0].faster_after, "deepep-uccl");
  EXPECT_NEAR(f.crossovers[0].x, std::exp2(25.0 / 6.0), 1e-9);
}

TEST(ReportFigures, CrossoversNeedACommonSignChange) {
  Series a{"a", {{1, 1, 0, 0}, {2, 1, 0, 0}, {4, 1, 0, 0}}};
  Series b{"b", {{1, 2, 0, 0}, {4, 3, 0, 0}}};  // always slower: none
  EXPECT_TRUE(find_crossovers({a, b}).empty());
  Series c{"c", {{1, 2, 0, 0}, {2, 0.5, 0, 0}, {4, 2, 0, 0}}};  // crosses a twice
  const auto x = find_crossovers({a, c});
  ASSERT_EQ(x.size(), 2u);
  // d = a - c: -1 at 1, +0.5 at 2 -> 2^(0 + 1/1.5); +0.5 at 2, -1 at 4 -> 2^(1 + 0.5/1.5).
  EXPECT_NEAR(x[0].x, std::exp2(2.0 / 3.0), 1e-12);
  EXPECT_EQ(x[0].faster_before, "a");
  EXPECT_EQ(x[0].faster_after, "c");
  EXPECT_NEAR(x[1].x, std::exp2(4.0 / 3.0), 1e-12);
  EXPECT_EQ(x[1].faster_before, "c");
}

TEST(ReportFigures, SweepSkipsInvalidPointsAndTakesTheFastest) {
  const auto figs = nodes_figures(load_report_input(fixture("sweep.csv")));
  ASSERT_EQ(figs.size(), 1u);
  ASSERT_EQ(figs[0].series.size(), 2u);
  EXPECT_EQ(figs[0].series[0].name, "deepep-uccl");
  EXPECT_EQ(figs[0].series[0].points.size(), 2u);  // the invalid 64-node point is left out
  // nccl 5.0, 3.0 vs uccl 4.0, 3.5: crossover between 8 and 16 at 2^(3 + 1 / 1.5).
  ASSERT_EQ(figs[0].crossovers.size(), 1u);
  EXPECT_NEAR(figs[0].crossovers[0].x, std::exp2(3.0 + 1.0 / 1.5), 1e-9);
}

TEST(ReportFigures, SweepPointOverHbmIsNeverTheFastest) {
  // At 8 nodes the nccl point at 2.0 s is fastest but needs more memory than the GPU has.
  const std::string csv =
      "point,status,error,model,instance,nodes,dispatcher,iteration_s,fits\n"
      "0,ok,,m,i,8,nccl-alltoall,2.0,false\n"
      "1,ok,,m,i,8,nccl-alltoall,5.0,true\n"
      "2,ok,,m,i,16,nccl-alltoall,3.0,true\n";
  const ReportInput in = parse_report_input(csv, "over-hbm.csv");
  EXPECT_FALSE(in.fits(0));
  EXPECT_TRUE(in.fits(1));
  const auto figs = nodes_figures(in);
  ASSERT_EQ(figs.size(), 1u);
  ASSERT_EQ(figs[0].series.size(), 1u);
  ASSERT_EQ(figs[0].series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(figs[0].series[0].points[0].y, 5.0);
}

TEST(ReportFigures, BreakdownOfRecommendWinners) {
  const BreakdownFigure f = breakdown_figure(load_report_input(fixture("recommend.csv")));
  EXPECT_EQ(f.components, (std::vector<std::string>{"compute", "exposed TP", "exposed EP", "exposed PP",
                                                    "exposed DP", "host wait", "bubble"}));
  ASSERT_EQ(f.bars.size(), 3u);  // one winner per node count
  EXPECT_EQ(f.bars[2], "n32 mb1 deepep-uccl");
  EXPECT_DOUBLE_EQ(f.values[2][2], 0.9);
  // Each bar carries its iteration (drawn across the stack); recommend has no measured time.
  ASSERT_EQ(f.iteration.size(), 3u);
  EXPECT_DOUBLE_EQ(f.iteration[0], 2.0);
  ASSERT_EQ(f.measured.size(), 3u);
  EXPECT_TRUE(std::isnan(f.measured[0]));
  const GnuplotJob job = breakdown_job(f, FigureFormat::svg);
  EXPECT_NE(job.script.find("'iteration.dat' using 1:2:(0.42) with xerrorbars"), std::string::npos);
  EXPECT_EQ(job.script.find("measured.dat"), std::string::npos);
}

// A validate row's measured time is marked beside the predicted one.
TEST(ReportFigures, BreakdownOfValidateMarksMeasuredIteration) {
  const std::string csv =
      "campaign,dispatcher,iter_s,predicted_iter_s,error_pct,compute_s_max,exposed_ep_s_max\n"
      "c1,nccl-alltoall,10.0,10.5,5.00,6.0,3.0\n";
  const BreakdownFigure f = breakdown_figure(parse_report_input(csv, "validate.csv"));
  ASSERT_EQ(f.bars.size(), 1u);
  EXPECT_DOUBLE_EQ(f.iteration[0], 10.5);
  EXPECT_DOUBLE_EQ(f.measured[0], 10.0);
  const GnuplotJob job = breakdown_job(f, FigureFormat::svg);
  EXPECT_NE(job.script.find("title 'iteration (measured)'"), std::string::npos);
}

TEST(ReportFigures, BreakdownOfSweepHasOnlyItsColumns) {
  const BreakdownFigure f = breakdown_figure(load_report_input(fixture("sweep.csv")), 3);
  EXPECT_EQ(f.components, (std::vector<std::string>{"compute", "exposed EP", "bubble"}));
  EXPECT_EQ(f.bars.size(), 3u);
  EXPECT_EQ(f.bars[0], "n8 tp8 pp8 ep8 mb1 nccl-alltoall");
}

// Errors 5%, -15%, 25%, 0%: within 10% two of four, within 20% three of four.
TEST(ReportFigures, ScatterErrorBands) {
  const ScatterFigure f = scatter_figure(load_report_input(fixture("validate.csv")));
  ASSERT_EQ(f.measured.size(), 4u);
  EXPECT_DOUBLE_EQ(f.measured[1], 8.0);
  EXPECT_DOUBLE_EQ(f.predicted[1], 6.8);
  EXPECT_DOUBLE_EQ(f.within10, 0.5);
  EXPECT_DOUBLE_EQ(f.within20, 0.75);
  EXPECT_TRUE(scatter_figure(load_report_input(fixture("plan.csv"))).measured.empty());
}

TEST(ReportFigures, ParetoFromPlan) {
  const ParetoFigure f = pareto_figure(load_report_input(fixture("plan.csv")));
  EXPECT_EQ(f.cost_label, "cost (USD)");
  EXPECT_EQ(f.days.size(), 4u);
  EXPECT_EQ(f.front_days, (std::vector<double>{10.0, 17.5, 32.5}));
  EXPECT_EQ(f.front_cost, (std::vector<double>{1536000, 1344000, 1248000}));
  EXPECT_TRUE(f.has_recommended);
  EXPECT_DOUBLE_EQ(f.recommended_days, 17.5);
  // A plan without prices falls back to node-hours.
  const ParetoFigure g = pareto_figure(load_report_input(fixture("plan.json")));
  EXPECT_EQ(g.cost_label, "node-hours");
  EXPECT_EQ(g.cost, (std::vector<double>{15360.0, 13440.0}));
}

// 51 plan options, 12 drawn: the title says so; vpp 1 and vpp 2 rows of one layout get distinct labels.
TEST(ReportFigures, BreakdownStatesOmittedRowsAndLabelsAreUnique) {
  std::string csv = "rank,nodes,tp,pp,vpp,ep,mb,overlap,dispatcher,days,node_hours,pareto,compute_s_max\n";
  for (int r = 1; r <= 51; ++r) {
    csv += std::to_string(r) + ",32,8,4," + (r % 2 ? "1" : "2") + ",32,4," + (r % 2 ? "false" : "true") +
           ",deepep-uccl,10,100,false,1.5\n";
  }
  const BreakdownFigure f = breakdown_figure(parse_report_input(csv, "plan.csv"));
  EXPECT_EQ(f.usable_rows, 51u);
  ASSERT_EQ(f.bars.size(), 12u);
  EXPECT_EQ(f.title, "Where the time goes (plan, max over ranks): first 12 of 51 options (ranked)");
  EXPECT_EQ(f.bars[0], "n32 tp8 pp4 ep32 mb4 deepep-uccl #1");
  EXPECT_EQ(f.bars[1], "n32 tp8 pp4 vpp2 ep32 mb4 ov deepep-uccl #2");
  std::set<std::string> unique(f.bars.begin(), f.bars.end());
  EXPECT_EQ(unique.size(), f.bars.size());
  // All drawn: no note in the title.
  EXPECT_EQ(breakdown_figure(parse_report_input(csv, "plan.csv"), 60).title,
            "Where the time goes (plan, max over ranks)");
}

TEST(ReportFigures, LogAxisWhenValuesSpanMoreThanThreeFold) {
  EXPECT_TRUE(wants_log_axis(3.5, 67));
  EXPECT_FALSE(wants_log_axis(2.0, 6.0));
  EXPECT_FALSE(wants_log_axis(0, 10));
  const ScatterFigure f = scatter_figure(load_report_input(fixture("validate.csv")));
  const std::string script = scatter_job(f, FigureFormat::svg).script;
  double lo = 1e300, hi = 0;
  for (double v : f.measured) lo = std::min(lo, v), hi = std::max(hi, v);
  for (double v : f.predicted) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(script.find("set logscale xy") != std::string::npos, wants_log_axis(lo, hi)) << script;
}

// Pareto points are numbered in the plot (names go to the caption, where they cannot cover points), the
// recommendation is the square, the deadline is a line.
TEST(ReportFigures, ParetoLabelsAndDeadline) {
  ParetoFigure f = pareto_figure(load_report_input(fixture("plan.csv")));
  ASSERT_EQ(f.front_labels.size(), 3u);
  EXPECT_FALSE(f.front_labels[0].empty());
  EXPECT_FALSE(f.recommended_label.empty());
  EXPECT_EQ(f.deadline_days, 30);  // the CSV's comment header records the deadline
  const std::string script = pareto_job(f, FigureFormat::svg).script;
  EXPECT_NE(script.find("set label '1' at 10, 1536000 center offset 0,1.1 boxed"), std::string::npos)
      << script;
  EXPECT_NE(script.find("set label '2' at 17.5, 1344000 center offset 0,-1.1 boxed"), std::string::npos);
  EXPECT_NE(script.find("set label '3' "), std::string::npos);
  EXPECT_EQ(script.find(f.front_labels[0]), std::string::npos);  // no long names over the points
  EXPECT_NE(script.find("'recommended.dat' using 1:2 with points pt 5"), std::string::npos);
  EXPECT_NE(script.find("set arrow from 30, graph 0 to 30, graph 1"), std::string::npos) << script;
  EXPECT_NE(script.find("'deadline 30 days'"), std::string::npos);
}

// One node count: the band cannot be an area, so it is drawn as error bars.
TEST(ReportFigures, OneNodeCountDrawsTheBandAsErrorBars) {
  NodesFigure f;
  f.title = "m on i";
  f.series.push_back({"a", {{32, 3.0, 2.7, 3.6}}});
  f.series.push_back({"b", {{16, 3.1, 2.8, 3.7}, {32, 2.0, 1.8, 2.4}}});
  const std::string script = nodes_job(f, FigureFormat::svg).script;
  EXPECT_NE(script.find("'series0.dat' using 1:2:3:4 with yerrorbars"), std::string::npos) << script;
  EXPECT_NE(script.find("'series1.dat' using 1:3:4 with filledcurves"), std::string::npos) << script;
  EXPECT_EQ(script.find("set logscale y"), std::string::npos);  // 1.8 .. 3.7: linear
}

// Every series at the same single node count: each drawn beside the node count, not on top of the others.
TEST(ReportFigures, OneNodeCountForAllSeriesSpreadsTheErrorBars) {
  NodesFigure f;
  f.title = "m on i";
  f.series.push_back({"a", {{32, 3.0, 2.7, 3.6}}});
  f.series.push_back({"b", {{32, 3.1, 2.8, 3.7}}});
  const GnuplotJob job = nodes_job(f, FigureFormat::svg);
  EXPECT_NE(job.script.find("set xtics (32)"), std::string::npos) << job.script;
  ASSERT_EQ(job.data.size(), 2u);
  const double a = std::stod(job.data[0].content.substr(job.data[0].content.find('\n') + 1));
  const double b = std::stod(job.data[1].content.substr(job.data[1].content.find('\n') + 1));
  EXPECT_LT(a, 32);
  EXPECT_GT(b, 32);
  EXPECT_NEAR(b / a, std::exp2(0.08), 1e-12);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// A recommend table with two micro-batches: one figure each, so the change of micro-batch between node counts
// (mb 4 absent at 8 nodes) never shows as a dispatcher crossover.
TEST(ReportFigures, RecommendFigurePerMicroBatch) {
  const std::string path = ::testing::TempDir() + "recommend-two-mb.csv";
  std::ofstream(path) << "model,instance,nodes,mb,dispatcher,predicted_iter_s,lo_s,hi_s,winner,margin_pct,"
                         "margin_exceeds_uncertainty\n"
                         "m,i,8,1,a,2.0,1.8,2.4,a,10.00,false\n"
                         "m,i,8,1,b,2.2,2.0,2.6,a,10.00,false\n"
                         "m,i,16,1,a,1.0,0.9,1.2,a,10.00,false\n"
                         "m,i,16,1,b,1.1,1.0,1.3,a,10.00,false\n"
                         "m,i,16,4,a,0.9,0.8,1.1,b,11.11,false\n"
                         "m,i,16,4,b,0.81,0.7,0.9,b,11.11,false\n";
  const auto figs = nodes_figures(load_report_input(path));
  ASSERT_EQ(figs.size(), 2u);
  EXPECT_EQ(figs[0].title, "m on i, mb 1");
  EXPECT_EQ(figs[1].title, "m on i, mb 4");
  EXPECT_TRUE(figs[0].crossovers.empty());
  EXPECT_TRUE(figs[1].crossovers.empty());
}

}  // namespace
}  // namespace moetwin
