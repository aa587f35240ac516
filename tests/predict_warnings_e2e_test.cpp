// End-to-end: `moetwin predict` shows the dispatcher's validity warnings (DispatcherModel::check via
// Prediction::warnings): "warning: ..." lines in text, a "warnings" array in JSON (empty when none), stderr
// with CSV. The fixture is DeepEP v2 over NCCL GIN on 2 x p5.48xlarge, which has no EFA-GDA (catalog
// gpu_initiated_rdma = false), so the model runs it in proxy fallback mode and says so.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;
const std::string kBinary = e2e::kMoetwin;
const std::string kFallback =
    "deepep-v2-gin: p5.48xlarge has no EFA-GDA (GPU-initiated RDMA); modelled in proxy fallback mode (one "
    "proxy thread)";

// What the shipped fit (B300, p5en and p5 rows of five models on 4-32 nodes, nccl-alltoall and the DeepEP
// transports over UCCL-EP and NVSHMEM) has no live runs of in the p5 scenario, in dimension order: H100,
// p5 and Qwen3-30B-A3B it has (the p5 campaign), 2 nodes and DeepEP v2 it has not.
const std::string kScaleNotInFit =
    "2 nodes: no live runs in the fit at this scale (fitted 4-32 nodes; 1.0 doublings beyond)";
const std::string kGinNotInFit =
    "dispatcher deepep-v2-gin: no live runs in the fit (no live training row: its A2A terms are its measured "
    "relatives')";
const std::vector<std::string> kNotInFit = {kScaleNotInFit, kGinNotInFit};

// Exit code of `moetwin --catalog ... predict ARGS`, stdout to `out`, stderr to `err`.
int predict(const std::string& args, const fs::path& out, const fs::path& err) {
  return e2e::run_moetwin_to("predict " + args, out, err);
}

// Qwen3-30B-A3B cut to 2 layers, EP16 over 2 nodes of `instance`, DeepEP v2 (GIN).
fs::path write_scenario(const fs::path& dir, const std::string& instance) {
  const fs::path file = dir / (instance + ".toml");
  std::ofstream(file) << "name = \"gin-" << instance << "\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n"
                      << "[cluster]\ninstance = \"" << instance << "\"\nnodes = 2\n"
                      << "[parallelism]\ntp = 1\npp = 1\nep = 16\ndp = 16\n"
                      << "[training]\nmicro_batch = 1\nglobal_batch = 32\nseq_length = 1024\n"
                      << "recompute = \"none\"\n[dispatcher]\nname = \"deepep-v2-gin\"\n";
  return file;
}

int count_lines_starting(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    if (text.compare(start, prefix.size(), prefix) == 0) ++n;
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return n;
}

TEST(PredictWarnings, GinOnP5WarnsInTextJsonAndCsv) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_warnings_e2e";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string p5 = write_scenario(dir, "p5.48xlarge").string();
  const fs::path out = dir / "out.txt", err = dir / "err.txt";

  ASSERT_EQ(predict(p5, out, err), 0) << read_text_file(err.string());
  const std::string text = read_text_file(out.string());
  EXPECT_NE(text.find("\nwarning: " + kFallback + "\n"), std::string::npos) << text;
  // Beside the model's own warning, the dimensions the shipped fit has no live runs of (2 nodes, v2-gin).
  EXPECT_EQ(count_lines_starting(text, "warning: "), 1 + static_cast<int>(kNotInFit.size())) << text;
  for (const std::string& w : kNotInFit)
    EXPECT_NE(text.find("\nwarning: " + w + "\n"), std::string::npos) << w;
  EXPECT_EQ(read_text_file(err.string()), "");

  ASSERT_EQ(predict(p5 + " --format json", out, err), 0) << read_text_file(err.string());
  const auto json = nlohmann::json::parse(read_text_file(out.string()));
  nlohmann::json expected = nlohmann::json::array({kFallback});
  for (const std::string& w : kNotInFit) expected.push_back(w);
  EXPECT_EQ(json.at("warnings"), expected);
  EXPECT_EQ(json.at("rows").size(), 1u);
  EXPECT_EQ(read_text_file(err.string()), "");
  // A new scale: the novelty names it, and the 80% interval is wider than the in-family one of a covered
  // scenario (the shipped default).
  EXPECT_EQ(json.at("novelty").at("level"), "configuration");
  EXPECT_TRUE(json.at("novelty").at("dimensions").contains("scale"));
  EXPECT_FALSE(json.at("novelty").at("dimensions").contains("gpu"));
  EXPECT_EQ(json.at("novelty").at("dimensions").at("dispatcher"), "deepep-v2-gin");
  const auto& row = json.at("rows").at(0);
  const double p5_ratio = row.at("predicted_hi_s").get<double>() / row.at("predicted_lo_s").get<double>();
  ASSERT_EQ(predict(kSource + "/scenarios/default.toml --format json", out, err), 0)
      << read_text_file(err.string());
  const auto covered = nlohmann::json::parse(read_text_file(out.string()));
  EXPECT_EQ(covered.at("novelty").at("level"), "covered");
  const auto& covered_row = covered.at("rows").at(0);
  const double covered_ratio =
      covered_row.at("predicted_hi_s").get<double>() / covered_row.at("predicted_lo_s").get<double>();
  EXPECT_GT(p5_ratio, covered_ratio * 1.05);

  // CSV: stdout stays one clean table, the warning goes to stderr.
  ASSERT_EQ(predict(p5 + " --format csv", out, err), 0) << read_text_file(err.string());
  const CsvTable csv = read_csv_file(out.string());
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].fields[csv.column("scenario")], "gin-p5.48xlarge");
  std::string lines = "warning: " + kFallback + "\n";
  for (const std::string& w : kNotInFit) lines += "warning: " + w + "\n";
  EXPECT_EQ(read_text_file(err.string()), lines);
}

TEST(PredictWarnings, GinOnP5enHasNone) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_warnings_e2e_none";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string p5en = write_scenario(dir, "p5en.48xlarge").string();  // EFA-GDA: GPU-initiated
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  // No model warning; only what the shipped fit has no runs of: the scale and deepep-v2-gin (H200, p5en and
  // Qwen3-30B-A3B it has), and two combinations it never ran together (issue 53): p5en with an EP group over
  // 2 nodes (its campaign spanned 4) and the H200 at bf16 (its campaign ran fp8-hybrid).
  const std::string span =
      "combination instance=p5en.48xlarge with ep-nodes=2: no live runs in the fit (each was fitted, never "
      "together; 1.0 units)";
  const std::string bf16 =
      "combination gpu=H200-SXM with precision=bf16: no live runs in the fit (each was fitted, never "
      "together; "
      "1.0 units)";
  ASSERT_EQ(predict(p5en, out, err), 0) << read_text_file(err.string());
  EXPECT_EQ(count_lines_starting(read_text_file(out.string()), "warning: "), 4);
  ASSERT_EQ(predict(p5en + " --format json", out, err), 0) << read_text_file(err.string());
  EXPECT_EQ(nlohmann::json::parse(read_text_file(out.string())).at("warnings"),
            nlohmann::json::array({kScaleNotInFit, kGinNotInFit, span, bf16}));
  ASSERT_EQ(predict(p5en + " --format csv", out, err), 0) << read_text_file(err.string());
  EXPECT_EQ(read_text_file(err.string()), "warning: " + kScaleNotInFit + "\nwarning: " + kGinNotInFit +
                                              "\nwarning: " + span + "\nwarning: " + bf16 + "\n");
  // Without a fitted profile there is no fit to be outside of.
  ASSERT_EQ(predict(p5en + " --profile none --format csv", out, err), 0) << read_text_file(err.string());
  EXPECT_EQ(read_text_file(err.string()), "");
}

}  // namespace
}  // namespace moetwin
