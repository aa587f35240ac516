// End-to-end: the UltraServer what-ifs of issue 42 item 6 (scenarios/examples/*-p6e-gb200x72.toml and the
// 18 p6-b300 comparisons). predict, inspect, recommend and compare run on them with exit 0; the novelty
// line names every dimension the fit never saw (GPU, instance, NVLink domain, precision, EP span); EP64
// inside the NVLink domain has no network all-to-all leg. Numbers: docs/2026-12-04-nvlink-domain.md.
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
const std::string kExamples = kSource + "/scenarios/examples/";

int run(const std::string& args, const fs::path& out, const fs::path& err) {
  return e2e::run_moetwin_to(args, out, err);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(UltraServer, PredictNamesEveryNewDimensionAndKeepsTheAllToAllOnNvlink) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fresh_dir("ultraserver_e2e_predict");
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  for (const std::string model : {"dsv3", "kimi-k2"}) {
    ASSERT_EQ(run("predict " + kExamples + model + "-p6e-gb200x72.toml", out, err), 0)
        << read_text_file(err.string());
    const std::string text = read_text_file(out.string());
    EXPECT_TRUE(
        contains(text,
                 "novelty            platform: gpu=GB200;instance=p6e-gb200.36xlarge;nvlink-domain=nvl64;"
                 "precision=mxfp8;layout=ep-nodes1"))
        << text;
    // The scenario does not fit one UltraServer's HBM, and says so (exit 0 without --require-fit).
    EXPECT_TRUE(contains(text, "does not fit in HBM")) << text;
  }
  // The same job with the NVLink domain cut to one tray (a what-if of the domain alone): its EP all-to-all
  // crosses the network and the iteration is slower.
  const fs::path csv_domain = dir / "domain.csv", csv_tray = dir / "tray.csv";
  ASSERT_EQ(run("predict " + kExamples + "dsv3-p6e-gb200x72.toml --format csv", csv_domain, err), 0);
  std::string tray = read_text_file(kExamples + "dsv3-p6e-gb200x72.toml");
  const std::string key = "nvlink_domain_gpus = 64";
  ASSERT_NE(tray.find(key), std::string::npos);
  tray.replace(tray.find(key), key.size(), "nvlink_domain_gpus = 4");
  const fs::path tray_toml = dir / "dsv3-tray-domain.toml";
  std::ofstream(tray_toml) << tray;
  ASSERT_EQ(run("predict " + tray_toml.string() + " --format csv", csv_tray, err), 0)
      << read_text_file(err.string());
  const CsvTable d = read_csv_file(csv_domain.string()), t = read_csv_file(csv_tray.string());
  const double in_domain = std::stod(d.rows.at(0).fields.at(d.column("predicted_iter_s")));
  const double per_tray = std::stod(t.rows.at(0).fields.at(t.column("predicted_iter_s")));
  EXPECT_GT(per_tray, in_domain * 1.05);
}

TEST(UltraServer, InspectRecommendAndCompareRun) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fresh_dir("ultraserver_e2e_commands");
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  ASSERT_EQ(run("inspect " + kExamples + "dsv3-p6e-gb200x72.toml", out, err), 0)
      << read_text_file(err.string());
  EXPECT_TRUE(contains(read_text_file(out.string()), "per pipeline stage, one GPU (GiB):"));
  EXPECT_TRUE(contains(read_text_file(out.string()), "DOES NOT FIT"));
  // Recommend: one UltraServer (16 trays) does not fit; four (64 trays, PP2) do.
  ASSERT_EQ(run("recommend " + kExamples + "dsv3-p6e-gb200x72.toml --nodes 16,64 --dispatchers nccl-alltoall",
                out, err),
            0)
      << read_text_file(err.string());
  const std::string rec = read_text_file(out.string());
  EXPECT_TRUE(contains(rec, "nodes 64 (pp 2), mb 1")) << rec;
  EXPECT_TRUE(contains(rec, "does not fit [1]")) << rec;
  // Compare the UltraServer with 18 p6-b300 nodes, for both models. The UltraServer examples do not fit
  // in HBM (about 2x a GB200's): compare refuses a verdict on them (issue 52) unless --ignore-memory, and
  // then says so with the verdict.
  for (const std::string model : {"dsv3", "kimi-k2"}) {
    const std::string both =
        "compare " + kExamples + model + "-p6e-gb200x72.toml " + kExamples + model + "-p6-b300-18n.toml";
    ASSERT_EQ(run(both, out, err), 2);
    EXPECT_TRUE(contains(read_text_file(err.string()), "does not fit in HBM"))
        << read_text_file(err.string());
    ASSERT_EQ(run(both + " --ignore-memory", out, err), 0) << read_text_file(err.string());
    EXPECT_TRUE(contains(read_text_file(out.string()), "differs in: instance, nodes, layout"))
        << read_text_file(out.string());
    EXPECT_TRUE(contains(read_text_file(out.string()), "does NOT fit in HBM (--ignore-memory)"))
        << read_text_file(out.string());
  }
}

}  // namespace
}  // namespace moetwin
