#include "moetwin/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

TEST(Catalog, LoadsShippedEntriesInSiUnits) {
  const Catalog c = Catalog::load(kDir);
  EXPECT_EQ(c.gpus().size(), 4u);
  EXPECT_EQ(c.instances().size(), 4u);
  EXPECT_EQ(c.models().size(), 5u);
  EXPECT_EQ(c.stacks().size(), 2u);
  EXPECT_EQ(c.default_stack().name, "nemo-26.04.01");
  EXPECT_EQ(c.dispatchers().size(), 4u);
  const GpuSpec& h200 = c.gpu("H200-SXM");
  EXPECT_DOUBLE_EQ(h200.bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h200.hbm_bytes, 141e9);
  EXPECT_DOUBLE_EQ(h200.nvlink_bandwidth, 450e9);  // 900 GB/s bidirectional -> 450 per direction
  const InstanceSpec& p5 = c.instance("p5.48xlarge");
  EXPECT_DOUBLE_EQ(p5.nic_bandwidth, 12.5e9);  // 100 Gb/s
  EXPECT_EQ(p5.nics_per_gpu, 4);
  EXPECT_FALSE(p5.gpu_initiated_rdma);
  const ModelSpec& dsv3 = c.model("deepseek-v3");
  EXPECT_EQ(dsv3.attention, AttentionKind::mla);
  EXPECT_EQ(dsv3.mtp_layers, 1);
  EXPECT_EQ(dsv3.router_groups, 8);
  EXPECT_EQ(c.dispatcher("deepep-v2-gin").fallback_transport, DispatcherTransport::cpu_proxy);
}

TEST(Catalog, UnknownNameListsKnownOnes) {
  const Catalog c = Catalog::load(kDir);
  try {
    c.model("gpt-5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("deepseek-v3, kimi-k2"), std::string::npos) << e.what();
  }
}

TEST(Catalog, RejectsUnknownKeyWithFileAndLine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "moetwin_catalog_test";
  fs::create_directories(dir);
  for (const char* f : {"instances.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "gpus.toml")
      << "[X]\nbf16_tflops = 1\nfp8_tflops = 2\nhbm_gb = 1\nhbm_tbps = 1\n"
         "nvlink_gen = 4\nnvlink_gbps_bidir = 900\nsms = 1\nmxfp8 = false\nsource = \"s\"\n"
         "efficiency = { gemm = 0.5, grouped_gemm = 0.5, attention = 0.5, "
         "elementwise = 0.5 }\nbogus = 3\n";
  try {
    Catalog::load(dir.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpus.toml:12: [X].bogus: 3: no such key"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace moetwin
