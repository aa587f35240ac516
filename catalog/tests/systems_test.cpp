// The DGX and NVL72 systems (issue 42 item 1): InfiniBand as a fabric, the NVLink domain as a field, facts
// without a source carried as bounded assumptions, and the strict loader's errors for each new key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

const Assumption* assumed(const std::vector<Assumption>& list, const std::string& key) {
  const auto it = std::find_if(list.begin(), list.end(), [&](const Assumption& a) { return a.key == key; });
  return it == list.end() ? nullptr : &*it;
}

TEST(Systems, DgxNodesAreEightGpusOnInfiniBandOneNicPerGpu) {
  const Catalog c = Catalog::load(kDir);
  for (const auto& [name, gpu, gbps] :
       {std::tuple<std::string, std::string, double>{"dgx-h100", "H100-SXM", 400},
        {"dgx-b200", "B200", 400},
        {"dgx-b300", "B300", 800}}) {
    const InstanceSpec& i = c.instance(name);
    EXPECT_EQ(i.gpu, gpu) << name;
    EXPECT_EQ(i.gpus, 8) << name;
    EXPECT_EQ(i.fabric, Fabric::infiniband) << name;
    EXPECT_EQ(i.ib_generation, gbps == 400 ? "NDR" : "XDR") << name;
    EXPECT_EQ(i.efa_gen, 0) << name;  // no EFA generation: EFA-only terms (efa_gen2_efficiency) never apply
    EXPECT_EQ(i.efa_nics, 8) << name;
    EXPECT_EQ(i.nics_per_gpu, 1) << name;
    EXPECT_DOUBLE_EQ(i.nic_bandwidth, gbps * 1e9 / 8) << name;  // per-GPU injection: 50 / 100 GB/s
    EXPECT_EQ(i.nvlink_domain_gpus, 8) << name;                 // the default: the node
    EXPECT_TRUE(i.gpu_initiated_rdma) << name;                  // IBGDA
    // No IB latency was found in a source: 14 us is an assumption inside its stated bounds.
    const Assumption* lat = assumed(i.unverified, "base_latency_us");
    ASSERT_NE(lat, nullptr) << name;
    EXPECT_DOUBLE_EQ(lat->value, 14);
    EXPECT_DOUBLE_EQ(i.base_latency_s, 14e-6);
    EXPECT_LE(lat->min, lat->value);
    EXPECT_GE(lat->max, lat->value);
    EXPECT_FALSE(lat->why.empty());
    EXPECT_DOUBLE_EQ(i.ofi_platform_p2p_chunk_bytes, 0) << name;  // no aws-ofi-nccl on IB
  }
  EXPECT_EQ(c.instance("dgx-h100").cpu_cores, 112);
  EXPECT_EQ(c.instance("dgx-b300").fabric, Fabric::infiniband);
  EXPECT_STREQ(to_string(Fabric::infiniband), "infiniband");
}

TEST(Systems, Nvl72TraysShareOneSeventyTwoGpuDomain) {
  const Catalog c = Catalog::load(kDir);
  for (const std::string name : {"dgx-gb200", "dgx-gb300", "p6e-gb200.36xlarge"}) {
    const InstanceSpec& i = c.instance(name);
    EXPECT_EQ(i.gpus, 4) << name;  // one compute tray: 4 GPUs + 2 Grace
    EXPECT_EQ(i.nvlink_domain_gpus, 72) << name;
    EXPECT_EQ(i.cpu_cores, 144) << name;  // 2 x 72 Neoverse V2
    EXPECT_EQ(i.nics_per_gpu, 1) << name;
  }
  EXPECT_EQ(c.instance("dgx-gb200").gpu, "GB200");
  EXPECT_EQ(c.instance("dgx-gb300").gpu, "GB300");
  EXPECT_DOUBLE_EQ(c.instance("dgx-gb300").nic_bandwidth, 100e9);  // ConnectX-8, 800 Gb/s
  // AWS's tray is on EFAv4: 28.8 Tb/s per 72 GPUs = 400 Gb/s per GPU.
  const InstanceSpec& p6e = c.instance("p6e-gb200.36xlarge");
  EXPECT_EQ(p6e.fabric, Fabric::efa);
  EXPECT_EQ(p6e.efa_gen, 4);
  EXPECT_DOUBLE_EQ(p6e.nic_bandwidth * p6e.efa_nics * 18 * 8, 28.8e12);
  // Every EC2 instance of before keeps a domain of its node.
  for (const std::string name :
       {"p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge"}) {
    EXPECT_EQ(c.instance(name).nvlink_domain_gpus, 8) << name;
    EXPECT_EQ(c.instance(name).fabric, Fabric::efa) << name;
  }
}

TEST(Systems, GraceBlackwellGpus) {
  const Catalog c = Catalog::load(kDir);
  const GpuSpec& gb200 = c.gpu("GB200");
  const GpuSpec& gb300 = c.gpu("GB300");
  EXPECT_DOUBLE_EQ(gb200.bf16_flops, 2.5e15);
  EXPECT_DOUBLE_EQ(gb200.fp8_flops, 5e15);
  EXPECT_DOUBLE_EQ(gb300.hbm_bytes, 279e9);
  EXPECT_DOUBLE_EQ(gb300.nvlink_bandwidth, 900e9);  // 1.8 TB/s bidirectional
  EXPECT_TRUE(gb200.mxfp8);
  // The rack-derived GB200 rates lie above the HGX B200's; the B200's figures bound them.
  const Assumption* bf16 = assumed(gb200.unverified, "bf16_tflops");
  ASSERT_NE(bf16, nullptr);
  EXPECT_DOUBLE_EQ(bf16->min, c.gpu("B200").bf16_flops / 1e12);
  ASSERT_NE(assumed(gb300.unverified, "sms"), nullptr);  // SM count not found in a source
  EXPECT_TRUE(c.gpu("H100-SXM").unverified.empty());
}

// The load error of a scratch catalog: the shipped files with `extra` appended to instances.toml.
std::string load_error_with_instance(const std::string& name, const std::string& extra) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("moetwin_systems_test_" + name);
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "instances.toml", std::ios::app) << "\n" << extra;
  try {
    Catalog::load(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// An IB tray of 4 GPUs; `keys` adds or overrides lines (later keys would be TOML duplicates, so the fields
// a case changes are left out of the base by name).
std::string ib_tray(const std::string& keys, const std::string& without = "") {
  std::string base;
  for (const std::string line :
       {"gpu = \"GB200\"", "gpus = 4", "fabric = \"infiniband\"", "ib_generation = \"NDR\"", "ib_nics = 4",
        "nic_gbps = 400", "nics_per_gpu = 1", "nvlink_domain_gpus = 72", "host_mem_tib = 0.5",
        "gpu_initiated_rdma = true", "base_latency_us = 14", "price_usd_per_hour = 0", "price_source = \"p\"",
        "cpu = \"Grace\"", "cpu_cores = 144", "cpu_geekbench6_single = 2000", "cpu_source = \"c\"",
        "source = \"s\""}) {
    if (!without.empty() && line.rfind(without + " =", 0) == 0) continue;
    base += line + "\n";
  }
  return "[tray]\n" + base + keys;
}

TEST(Systems, TheLoaderRejectsBadFabricAndDomainValues) {
  EXPECT_EQ(load_error_with_instance("ok", ib_tray("")), "");
  const std::string domain =
      load_error_with_instance("domain", ib_tray("nvlink_domain_gpus = 70\n", "nvlink_domain_gpus"));
  EXPECT_NE(domain.find("instances.toml:"), std::string::npos) << domain;
  EXPECT_NE(domain.find("[tray].nvlink_domain_gpus: 70: a multiple of gpus (4)"), std::string::npos)
      << domain;
  const std::string small =
      load_error_with_instance("small", ib_tray("nvlink_domain_gpus = 2\n", "nvlink_domain_gpus"));
  EXPECT_NE(small.find("[tray].nvlink_domain_gpus: 2: a multiple of gpus (4)"), std::string::npos) << small;
  const std::string huge =
      load_error_with_instance("huge", ib_tray("nvlink_domain_gpus = 4096\n", "nvlink_domain_gpus"));
  EXPECT_NE(huge.find("[tray].nvlink_domain_gpus: 4096:"), std::string::npos) << huge;
  const std::string fabric = load_error_with_instance("fabric", ib_tray("fabric = \"ethernet\"\n", "fabric"));
  EXPECT_NE(fabric.find("[tray].fabric: \"ethernet\""), std::string::npos) << fabric;
  EXPECT_NE(fabric.find("efa"), std::string::npos) << fabric;
  const std::string rate = load_error_with_instance("rate", ib_tray("nic_gbps = 800\n", "nic_gbps"));
  EXPECT_NE(rate.find("[tray].nic_gbps: 800: 400 (an NDR InfiniBand port)"), std::string::npos) << rate;
  // EFA keys on an InfiniBand node are typos of the fabric, not silently ignored.
  const std::string efa = load_error_with_instance("efa", ib_tray("efa_gen = 4\n"));
  EXPECT_NE(efa.find("[tray].efa_gen: 4: no such key"), std::string::npos) << efa;
  const std::string gen =
      load_error_with_instance("gen", ib_tray("ib_generation = \"HDR\"\n", "ib_generation"));
  EXPECT_NE(gen.find("[tray].ib_generation: \"HDR\""), std::string::npos) << gen;
}

TEST(Systems, AssumptionsMustBoundTheirValue) {
  const std::string out = load_error_with_instance(
      "out", ib_tray("unverified.base_latency_us = { min = 20, max = 35, why = \"w\" }\n"));
  EXPECT_NE(out.find("[tray].unverified.base_latency_us.min: 20..35: bounds that hold the assumed value "
                     "base_latency_us = 14"),
            std::string::npos)
      << out;
  const std::string unknown = load_error_with_instance(
      "unknown", ib_tray("unverified.latency_us = { min = 1, max = 2, why = \"w\" }\n"));
  EXPECT_NE(unknown.find("[tray].unverified.latency_us: a table: no such key"), std::string::npos) << unknown;
  const std::string why =
      load_error_with_instance("why", ib_tray("unverified.cpu_cores = { min = 1, max = 200 }\n"));
  EXPECT_NE(why.find("[tray].unverified.cpu_cores.why"), std::string::npos) << why;
  const std::string scalar = load_error_with_instance("scalar", ib_tray("unverified.cpu_cores = 3\n"));
  EXPECT_NE(scalar.find("[tray].unverified.cpu_cores"), std::string::npos) << scalar;
}

}  // namespace
}  // namespace moetwin
