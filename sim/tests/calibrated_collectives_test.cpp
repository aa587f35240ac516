// Calibrated NVLink collectives: a profile's [nvlink] reaches the prediction's collective model (times
// hand-computed from the profile's numbers), GPUs without one keep the defaults, and reports say which.
#include "moetwin/models/calibrated_collectives.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/profile/calibration_profile.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/test_support/nvlink_profile.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

using test_support::catalog;

// qwen3-30b-a3b cut to 2 layers on one node of `instance`: tp 8 (TP collectives on NVLink), ep 8.
Scenario tp8(const std::string& instance) {
  std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n";
  t += "[cluster]\ninstance = \"" + instance + "\"\nnodes = 1\n";
  t += "[parallelism]\ntp = 8\npp = 1\nep = 8\netp = 1\ndp = 1\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = 2\nseq_length = 1024\nrecompute = \"none\"\n";
  t += "[dispatcher]\nname = \"nccl-alltoall\"\n";
  return parse_scenario(t, "test.toml", catalog());
}

// A directory with one H200 profile (schema 3: per-step-message bands) whose [nvlink] says: 20 us per
// call, 2 us per step, all-reduce at 0.5 of NVLink below 1 MiB per step and 0.7 from there.
// One directory per test and process: ctest runs the cases of this file as parallel processes, and a
// shared directory let one case delete or rewrite the profile another was reading (a flaky failure).
fs::path profile_dir() {
  const fs::path dir = fs::temp_directory_path() /
                       ("moetwin-calibrated-collectives-" +
                        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
                        std::to_string(::getpid()));
  fs::create_directories(dir);
  CalibrationProfile p = test_support::bare_h200_profile();
  p.schema_version = 3;
  GemmCurve g;
  g.efficiency = {{64}, {0.5}};
  p.gemm["gemm"] = g;
  NvlinkCollectiveFit f = test_support::nvlink_fit({2}, 20e-6, 2e-6, 2);
  f.curves["all_reduce"] = {{0, 1048576}, {0.5, 0.7}};
  p.nvlink = f;
  EfaFabricFit efa;  // measured between two NICs of a p5en: 20 us one way, 0.6 of line rate
  efa.instance = "p5en.48xlarge";
  efa.buffer = "cuda";
  efa.step_latency_s = 20e-6;
  efa.efficiency = {{0}, {0.6}};
  efa.points = 2;
  p.efa = efa;
  std::ofstream(dir / "h200.toml") << format_calibration_profile(p);
  return dir;
}

std::vector<int> node(int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) r.push_back(i);
  return r;
}

TEST(CalibratedCollectives, ProfileNvlinkTermsReachTheCollectiveModel) {
  const fs::path dir = profile_dir();
  const CollectiveCalibration c = collectives_for(tp8("p5en.48xlarge"), dir.string());
  EXPECT_EQ(c.source, "calibrated NVLink (" + (dir / "h200.toml").string() +
                          ", NCCL on 2 GPUs); calibrated EFA (" + (dir / "h200.toml").string() +
                          ", libfabric cuda buffers)");
  const double nvlink = catalog().gpu("H200-SXM").nvlink_bandwidth;
  // All-reduce of 64 MiB on 8 GPUs: 8 MiB per step (0.7 band), 2 x 7/8 x 64 MiB over NVLink, 14 steps.
  const double big = 64.0 * 1048576;
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, big, node(8)),
                   20e-6 + 14 * 2e-6 + 2 * 7.0 / 8 * big / (nvlink * 0.7));
  // 4 MiB: 512 KiB per step, the 0.5 band.
  const double small = 4.0 * 1048576;
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, small, node(8)),
                   20e-6 + 14 * 2e-6 + 2 * 7.0 / 8 * small / (nvlink * 0.5));
  // All-gather has no curve in the profile: the default curve (0.8 from 1 MiB), calibrated latencies.
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_gather, big, node(8)),
                   20e-6 + 7 * 2e-6 + 7.0 / 8 * big / (nvlink * 0.8));
  fs::remove_all(dir);
}

// Schema 4: all-reduce bands by GPU count and per-rank buffer, measured on 2 and 4 GPUs (0.5 / 0.6 below
// a 1 MiB buffer, 0.7 / 0.9 from there). A TP8 group holds the 4-GPU bands, 3 GPUs interpolate in log2(3).
TEST(CalibratedCollectives, BandsByGpuCountReachTheCollectiveModel) {
  const fs::path dir = fs::temp_directory_path() / "moetwin-calibrated-collectives-by-count-test";
  fs::create_directories(dir);
  CalibrationProfile p = test_support::bare_h200_profile();
  NvlinkCollectiveFit f = test_support::nvlink_fit({2, 4}, 20e-6, 2e-6, 4);
  f.buffer_curves["all_reduce"][2] = {{0, 1048576}, {0.5, 0.7}};
  f.buffer_curves["all_reduce"][4] = {{0, 1048576}, {0.6, 0.9}};
  p.nvlink = f;
  std::ofstream(dir / "h200.toml") << format_calibration_profile(p);
  const CollectiveCalibration c = collectives_for(tp8("p5en.48xlarge"), dir.string());
  EXPECT_EQ(c.source, "calibrated NVLink (" + (dir / "h200.toml").string() + ", NCCL on 2,4 GPUs)");
  const double nvlink = catalog().gpu("H200-SXM").nvlink_bandwidth;
  const double big = 64.0 * 1048576, small = 512.0 * 1024;
  // 8 GPUs, 64 MiB: the 4-GPU 1 MiB band (0.9), 14 steps.
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, big, node(8)),
                   20e-6 + 14 * 2e-6 + 2 * 7.0 / 8 * big / (nvlink * 0.9));
  // 2 GPUs, 512 KiB: the 2-GPU first band (0.5), 2 steps.
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, small, node(2)),
                   20e-6 + 2 * 2e-6 + 2 * 1.0 / 2 * small / (nvlink * 0.5));
  // 3 GPUs, 64 MiB: 0.7 + (0.9 - 0.7) x (log2 3 - 1) = 0.8169925001442312, 4 steps.
  EXPECT_NEAR(c.comm->seconds(CollectiveOp::all_reduce, big, node(3)),
              20e-6 + 4 * 2e-6 + 2 * 2.0 / 3 * big / (nvlink * 0.8169925001442312), 1e-15);
  fs::remove_all(dir);
}

TEST(CalibratedCollectives, OtherGpusAndLookupOffKeepTheDefaults) {
  const fs::path dir = profile_dir();
  const Scenario b300 = tp8("p6-b300.48xlarge");
  const CollectiveCalibration c = collectives_for(b300, dir.string());
  EXPECT_EQ(c.source, "NVLink defaults (no calibration profile for B300)");
  const TopologyComm plain(b300);
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, 1e8, node(8)),
                   plain.seconds(CollectiveOp::all_reduce, 1e8, node(8)));
  EXPECT_EQ(collectives_for(tp8("p5en.48xlarge"), "").source, "NVLink defaults (calibration lookup off)");
  fs::remove_all(dir);
}

// An H100 profile of its own measured on one GPU (no [nvlink]: NCCL ran on 1 GPU) prices the H100's compute
// and keeps the NVLink bands of its catalog calibration_from GPU (H200-SXM: the same NVLink 4 at 900 GB/s),
// the source saying both; the lender's EFA terms stay with the lender.
TEST(CalibratedCollectives, AGpuProfileWithoutNvlinkKeepsItsLendersBands) {
  const fs::path dir = profile_dir();
  CalibrationProfile h100;
  h100.gpu = "H100-SXM";
  h100.peak_bf16_flops = 989e12;
  h100.d2d_bandwidth = 3e12;
  GemmCurve g;
  g.efficiency = {{64}, {0.6}};
  h100.gemm["gemm"] = g;
  std::ofstream(dir / "h100.toml") << format_calibration_profile(h100);
  const Scenario p5 = tp8("p5.48xlarge");
  const ScenarioCalibration cal = calibration_for(p5, dir.string());
  ASSERT_TRUE(cal.profile);
  EXPECT_EQ(cal.profile->gpu, "H100-SXM");  // its own compute, not borrowed
  EXPECT_TRUE(cal.borrowed.empty());
  ASSERT_TRUE(cal.nvlink_profile);
  const CollectiveCalibration c = collectives_from(p5, cal);
  EXPECT_EQ(c.source, "calibrated NVLink (" + (dir / "h200.toml").string() +
                          ", NCCL on 2 GPUs of H200-SXM; " + (dir / "h100.toml").string() +
                          " has no [nvlink])");
  // The lender's all-reduce bands and latencies on the H100's NVLink (the same 450 GB/s per direction).
  const double nvlink = catalog().gpu("H100-SXM").nvlink_bandwidth;
  EXPECT_DOUBLE_EQ(nvlink, catalog().gpu("H200-SXM").nvlink_bandwidth);
  const double big = 64.0 * 1048576;
  EXPECT_DOUBLE_EQ(c.comm->seconds(CollectiveOp::all_reduce, big, node(8)),
                   20e-6 + 14 * 2e-6 + 2 * 7.0 / 8 * big / (nvlink * 0.7));
  // Without the lender's profile in the folder: the defaults, saying why.
  fs::remove(dir / "h200.toml");
  EXPECT_EQ(collectives_for(p5, dir.string()).source,
            "NVLink defaults (" + (dir / "h100.toml").string() + " has no [nvlink])");
  fs::remove_all(dir);
}

TEST(CalibratedCollectives, PredictionSaysWhereTheNvlinkTermsCameFrom) {
  PredictOptions o;
  EXPECT_EQ(predict(tp8("p5en.48xlarge"), o).collective_source,
            "calibrated NVLink (calibrate/profiles/h200-measured.toml, NCCL on 2,4 GPUs)");
  o.calibration = false;
  EXPECT_EQ(predict(tp8("p5en.48xlarge"), o).collective_source, "NVLink defaults (calibration lookup off)");
}

TEST(CalibratedCollectives, EfaTermsApplyAcrossNodesOnTheMeasuredInstance) {
  const fs::path dir = profile_dir();
  Scenario two = tp8("p5en.48xlarge");
  two.nodes = 2;
  std::string source;
  const CollectiveParams p = collective_params_for(two, dir.string(), source);
  EXPECT_DOUBLE_EQ(p.network_step_latency_s.value_or(0), 20e-6);
  EXPECT_DOUBLE_EQ(p.efa_efficiency.factor(1e9), 0.6);
  // Ring all-reduce of 256 MiB over 16 GPUs on 2 nodes: each node sends 2 x 15/16 x 256 MiB through its
  // 16 NICs at 0.6 of line rate (rails), 2 of the 30 steps cross EFA at 20 us, 28 stay on NVLink at 2 us,
  // plus nothing for the call (measured inside one node only).
  const double nic = two.instance.nic_bandwidth * two.instance.nics_per_gpu;
  const double v = 2 * 15.0 / 16 * 256 * 1048576;
  const double expected = 2 * 20e-6 + 28 * 2e-6 + (v / 8) / (nic * 0.6);
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = i;
  const CollectiveCalibration c = collectives_for(two, dir.string());
  EXPECT_NEAR(c.comm->seconds(CollectiveOp::all_reduce, 256.0 * 1048576, all), expected, 1e-12);
  // A profile measured on another instance keeps the EFA defaults for this one.
  std::string text = read_text_file((dir / "h200.toml").string());
  text.replace(text.find("instance = \"p5en.48xlarge\""), 26, "instance = \"p5.48xlarge\"");
  std::ofstream(dir / "h200.toml") << text;
  collective_params_for(two, dir.string(), source);
  EXPECT_NE(source.find("; EFA defaults (the profile's EFA was measured on p5.48xlarge)"), std::string::npos)
      << source;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace moetwin
