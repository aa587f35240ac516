#include "moetwin/reports/report_input.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

std::string fixture(const std::string& name) {
  return std::string(MOETWIN_SOURCE_DIR) + "/reports/tests/data/" + name;
}

TEST(ReportInput, Sha256KnownAnswers) {
  // FIPS 180-4 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(ReportInput, DetectsEveryKindFromItsColumns) {
  EXPECT_EQ(load_report_input(fixture("plan.csv")).kind, ReportKind::plan);
  EXPECT_EQ(load_report_input(fixture("recommend.csv")).kind, ReportKind::recommend);
  EXPECT_EQ(load_report_input(fixture("validate.csv")).kind, ReportKind::validate);
  EXPECT_EQ(load_report_input(fixture("sweep.csv")).kind, ReportKind::sweep);
  EXPECT_EQ(detect_report_kind({"point", "status", "predicted_iter_s"}, "x"), ReportKind::sweep);
  // compare carries predict's scenario and predicted_iter_s too: its ratio columns decide.
  EXPECT_EQ(
      detect_report_kind({"scenario", "predicted_iter_s", "ratio", "ratio_lo", "ratio_hi", "verdict"}, "x"),
      ReportKind::compare);
}

TEST(ReportInput, UnknownColumnsNameTheSignatures) {
  try {
    parse_report_input("a,b\n1,2\n", "t.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "t.csv: columns: 2 columns: the output of plan (days, node_hours, pareto), recommend (winner, "
        "margin_pct, predicted_lo_s, predicted_hi_s), validate or predict --runs (error_pct or iter_err_pct, "
        "predicted_iter_s), sweep (point, status, iteration_s), predict (scenario, predicted_iter_s) or "
        "compare "
        "(ratio, ratio_lo, ratio_hi, verdict)");
  }
}

TEST(ReportInput, CsvCellsAndNumbers) {
  const ReportInput in = load_report_input(fixture("sweep.csv"));
  ASSERT_EQ(in.rows.size(), 5u);
  EXPECT_EQ(in.cell(4, {"status"}), "invalid");
  EXPECT_EQ(in.cell(4, {"error"}), "plan: parallelism.ep: 512: a divisor of experts = 256");
  EXPECT_DOUBLE_EQ(in.number(1, {"predicted_iter_s", "iteration_s"}), 3.0);
  EXPECT_TRUE(std::isnan(in.number(4, {"iteration_s"})));
  EXPECT_TRUE(std::isnan(in.number(0, {"no_such_column"})));
  EXPECT_EQ(in.sha256, sha256_hex(read_text_file(fixture("sweep.csv"))));
}

TEST(ReportInput, JsonRowsAndContext) {
  const ReportInput in = load_report_input(fixture("plan.json"));
  EXPECT_EQ(in.kind, ReportKind::plan);
  ASSERT_EQ(in.rows.size(), 2u);
  EXPECT_EQ(in.columns.front(), "rank");
  EXPECT_EQ(in.cell(1, {"dispatcher"}), "nccl-alltoall");
  EXPECT_EQ(in.cell(1, {"cost_usd"}), "");  // null
  EXPECT_EQ(in.cell(0, {"pareto"}), "true");
  EXPECT_DOUBLE_EQ(in.number(1, {"days"}), 17.5);
  EXPECT_EQ(in.moetwin_version, "0.1.0");
  EXPECT_EQ(in.git_revision, "abc123");
  EXPECT_EQ(in.profile, "built-in defaults (unfitted)");
}

TEST(ReportInput, MalformedJson) {
  EXPECT_THROW(parse_report_input("{\"rows\": [", "bad.json"), InputError);
  EXPECT_THROW(parse_report_input("{\"context\": {}}", "empty.json"), InputError);
}

// `predict` output is accepted: one scenario as its own kind, --runs as validate (iter_err_pct is its error).
TEST(ReportInput, AcceptsPredictOutput) {
  const ReportInput one = parse_report_input(
      "scenario,predicted_iter_s,predicted_tokens_s,predicted_tflops_gpu,compute_s_max\nt,5.9,177809.5,180.6,"
      "0.9\n",
      "pred.csv");
  EXPECT_EQ(one.kind, ReportKind::predict);
  const ReportInput runs =
      parse_report_input("campaign,iter_s,predicted_iter_s,iter_err_pct\nc,10,11,10.00\n", "runs.csv");
  EXPECT_EQ(runs.kind, ReportKind::validate);
  EXPECT_DOUBLE_EQ(runs.number(0, {"error_pct"}), 10.0);
}

// A sweep's HDF5 file is refused with the file to pass instead, not read as a garbled CSV.
TEST(ReportInput, RefusesHdf5Clearly) {
  try {
    load_report_input("out/sweep.h5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "out/sweep.h5: input: an HDF5 file: a CSV or JSON output (a sweep writes PREFIX.csv beside "
              "PREFIX.h5 with the same rows: pass that)");
  }
}

}  // namespace
}  // namespace moetwin
