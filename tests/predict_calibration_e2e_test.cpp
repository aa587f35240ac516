// End-to-end: `moetwin predict` (and `moetwin net`) say where their compute and NVLink collective times
// come from. An H200 scenario uses the shipped calibration profile (calibrate/profiles/h200-measured.toml),
// a B300 one falls back to catalog efficiencies, `--calibration none` turns the lookup off, and a
// malformed profile is exit code 2 with a message naming file and key.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;
const std::string kBinary = e2e::kMoetwin;

// Exit code of `moetwin --catalog ... predict ARGS`, stdout to `out`, stderr to `err`.
int predict(const std::string& args, const fs::path& out, const fs::path& err) {
  return e2e::run_moetwin_to("predict " + args, out, err);
}

// Whether `text` has a key-value line "KEY   VALUE" (render_key_values pads keys with spaces).
bool has_key_line(const std::string& text, const std::string& key, const std::string& value) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.compare(0, key.size(), key) == 0) {
      const std::size_t v = line.find_first_not_of(' ', key.size());
      if (v > key.size() && v != std::string::npos && line.substr(v) == value) return true;
    }
    start = end + 1;
  }
  return false;
}

TEST(PredictCalibration, SourceIsCalibratedForH200AndCatalogForB300) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "predict_calibration_e2e";
  fs::remove_all(dir);
  fs::create_directories(dir / "bad");
  const std::string h200 = kSource + "/scenarios/examples/qwen3-30b-p5en-2n.toml";
  const fs::path out = dir / "out.txt", err = dir / "err.txt";

  ASSERT_EQ(predict(h200, out, err), 0) << read_text_file(err.string());
  EXPECT_TRUE(has_key_line(read_text_file(out.string()), "compute",
                           "calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)"))
      << read_text_file(out.string());
  EXPECT_TRUE(has_key_line(read_text_file(out.string()), "collectives",
                           "calibrated NVLink (calibrate/profiles/h200-measured.toml, NCCL on 2,4 GPUs)"))
      << read_text_file(out.string());
  ASSERT_EQ(predict(h200 + " --format json", out, err), 0) << read_text_file(err.string());
  const std::string json = read_text_file(out.string());
  EXPECT_NE(json.find("\"compute_source\""), std::string::npos) << json;
  EXPECT_NE(json.find("calibrated (calibrate/profiles/h200-measured.toml, H200-SXM)"), std::string::npos);

  // The same model on one B300 node: no profile was measured there.
  const fs::path b300 = dir / "b300.toml";
  std::ofstream(b300)
      << "name = \"b300\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n"
      << "[cluster]\ninstance = \"p6-b300.48xlarge\"\nnodes = 1\n"
      << "[parallelism]\ntp = 1\npp = 1\nep = 8\ndp = 8\n"
      << "[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 1024\nrecompute = \"none\"\n"
      << "[dispatcher]\nname = \"nccl-alltoall\"\n";
  ASSERT_EQ(predict(b300.string() + " --format csv", out, err), 0) << read_text_file(err.string());
  const CsvTable csv = read_csv_file(out.string());
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0].fields[csv.column("compute_source")],
            "catalog efficiencies (no calibration profile for B300)");
  EXPECT_EQ(csv.rows[0].fields[csv.column("collective_source")],
            "NVLink defaults (no calibration profile for B300)");

  // `moetwin net` reads the same [nvlink] terms: the calibrated TP all-reduce of 1 GiB on 2 H200 is slower
  // than the defaults' 0.8 of NVLink (measured 0.73 at 512 MiB per step) and pays the measured call latency.
  const std::string net_cmd = kBinary + " --catalog " + kSource + "/catalog/data net " + h200 +
                              " --collective all-reduce --bytes 1GiB --group tp --format json";
  ASSERT_EQ(std::system((net_cmd + " >" + out.string() + " 2>" + err.string()).c_str()), 0)
      << read_text_file(err.string());
  const std::string net = read_text_file(out.string());
  EXPECT_NE(
      net.find(
          "\"collective_source\": \"calibrated NVLink (calibrate/profiles/h200-measured.toml, NCCL on 2,4 "
          "GPUs)\""),
      std::string::npos)
      << net;
  ASSERT_EQ(std::system((net_cmd + " --calibration none >" + out.string() + " 2>" + err.string()).c_str()),
            0);
  EXPECT_NE(read_text_file(out.string())
                .find("\"collective_source\": \"NVLink defaults (calibration lookup off)\""),
            std::string::npos);

  ASSERT_EQ(predict(h200 + " --calibration none", out, err), 0) << read_text_file(err.string());
  EXPECT_TRUE(
      has_key_line(read_text_file(out.string()), "compute", "catalog efficiencies (calibration lookup off)"));

  // A profile with an out-of-range value: exit code 2 naming file, line and key.
  std::string text = read_text_file(kSource + "/calibrate/profiles/h200-measured.toml");
  text.replace(text.find("peak_bf16_flops = "), 18, "peak_bf16_flops = -");
  std::ofstream(dir / "bad" / "h200.toml") << text;
  EXPECT_EQ(predict(h200 + " --calibration " + (dir / "bad").string(), out, err), 2);
  const std::string e = read_text_file(err.string());
  EXPECT_NE(e.find((dir / "bad" / "h200.toml").string() + ":"), std::string::npos) << e;
  EXPECT_NE(e.find("peak_bf16_flops: -"), std::string::npos) << e;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace moetwin
