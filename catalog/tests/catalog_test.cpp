#include "moetwin/catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

TEST(Catalog, LoadsShippedEntriesInSiUnits) {
  const Catalog c = Catalog::load(kDir);
  EXPECT_EQ(c.gpus().size(), 7u);        // + GB200, GB300 (systems_test.cpp), H800-SXM (DeepEP test bed)
  EXPECT_EQ(c.instances().size(), 12u);  // + 5 DGX systems, p6e-gb200.36xlarge, deepep-testbed-h800
  EXPECT_EQ(c.models().size(), 17u);     // + the dense Llama 3 8B, 70B, 405B, gpt-oss-120b, -20b
  EXPECT_EQ(c.stacks().size(), 3u);      // nemo-26.04.01, megatron-lm core_r0.17.0, nemo-26.08
  EXPECT_EQ(c.default_stack().name, "nemo-26.04.01");
  EXPECT_EQ(c.dispatchers().size(), 6u);  // + deepep-ibgda, hybridep (InfiniBand)
  const GpuSpec& h200 = c.gpu("H200-SXM");
  EXPECT_DOUBLE_EQ(h200.bf16_flops, 989e12);
  EXPECT_DOUBLE_EQ(h200.hbm_bytes, 141e9);
  EXPECT_DOUBLE_EQ(h200.nvlink_bandwidth, 450e9);  // 900 GB/s bidirectional -> 450 per direction
  // The H100 borrows the measured H200 profile (same die); the lender's HBM rate comes with the name.
  EXPECT_EQ(c.gpu("H100-SXM").calibration_from, "H200-SXM");
  EXPECT_DOUBLE_EQ(c.gpu("H100-SXM").calibration_from_hbm_bandwidth, 4.8e12);
  EXPECT_EQ(h200.calibration_from, "");
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

// p5e.48xlarge is the H200 on p5's network and host: everything but the GPU is p5's, the GPU is p5en's.
TEST(Catalog, P5eIsTheH200OnP5sNetwork) {
  const Catalog c = Catalog::load(kDir);
  const InstanceSpec& p5e = c.instance("p5e.48xlarge");
  const InstanceSpec& p5 = c.instance("p5.48xlarge");
  EXPECT_EQ(p5e.gpu, "H200-SXM");
  EXPECT_EQ(p5e.gpu, c.instance("p5en.48xlarge").gpu);
  EXPECT_EQ(p5e.gpus, 8);
  EXPECT_EQ(p5e.efa_gen, p5.efa_gen);
  EXPECT_EQ(p5e.efa_nics, 32);
  EXPECT_DOUBLE_EQ(p5e.nic_bandwidth, 12.5e9);  // 100 Gb/s per NIC, 3.2 Tb/s per node
  EXPECT_EQ(p5e.nics_per_gpu, p5.nics_per_gpu);
  EXPECT_EQ(p5e.gpu_initiated_rdma, p5.gpu_initiated_rdma);
  EXPECT_DOUBLE_EQ(p5e.base_latency_s, p5.base_latency_s);
  EXPECT_EQ(p5e.cpu, p5.cpu);
  EXPECT_EQ(p5e.cpu_cores, p5.cpu_cores);
  EXPECT_DOUBLE_EQ(p5e.cpu_single_thread_score, p5.cpu_single_thread_score);
  EXPECT_DOUBLE_EQ(p5e.price_usd_per_hour, 0);  // capacity blocks only: plan asks for --price
  EXPECT_FALSE(p5e.source.empty());
  EXPECT_FALSE(p5e.cpu_source.empty());
  EXPECT_NE(p5e.price_source.find("--price"), std::string::npos);
}

TEST(Catalog, UnknownNameListsKnownOnes) {
  const Catalog c = Catalog::load(kDir);
  try {
    c.model("gpt-5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("deepseek-v3, glm-4.5, glm-4.5-air, gpt-oss-120b, gpt-oss-20b, kimi-k2"),
        std::string::npos)
        << e.what();
  }
}

// The load error of a scratch catalog: the shipped files with `gpus_toml` as its gpus.toml ("" if none).
std::string load_error_with_gpus_toml(const std::string& name, const std::string& gpus_toml) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("moetwin_catalog_test_" + name);
  fs::create_directories(dir);
  for (const char* f : {"instances.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "gpus.toml") << gpus_toml;
  try {
    Catalog::load(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Catalog, RejectsUnknownKeyWithFileAndLine) {
  const std::string e = load_error_with_gpus_toml(
      "bogus",
      "[X]\nbf16_tflops = 1\nfp8_tflops = 2\nhbm_gb = 1\nhbm_tbps = 1\n"
      "nvlink_gen = 4\nnvlink_gbps_bidir = 900\nsms = 1\nmxfp8 = false\ncompute_capability = 9.0\n"
      "grace_superchip = false\nsource = \"s\"\n"
      "efficiency = { gemm = 0.5, grouped_gemm = 0.5, attention = 0.5, "
      "elementwise = 0.5 }\nbogus = 3\n");
  EXPECT_NE(e.find("gpus.toml:14: [X].bogus: 3: no such key"), std::string::npos) << e;
}

// The seven GPUs the shipped instances name, all of one die except H100-SXM's `h100_sms`; `h100_extra` goes
// into [H100-SXM] (e.g. its calibration_from).
std::string load_error_with_gpus(const std::string& name, const std::string& h100_sms,
                                 const std::string& h100_extra) {
  const std::string common =
      "bf16_tflops = 989\nfp8_tflops = 1979\nhbm_tbps = 3.35\nhbm_gb = 80\nnvlink_gen = 4\n"
      "nvlink_gbps_bidir = 900\nmxfp8 = false\ncompute_capability = 9.0\ngrace_superchip = false\nsource = "
      "\"s\"\n"
      "efficiency = { gemm = 0.5, grouped_gemm = 0.5, attention = 0.5, elementwise = 0.5 }\n";
  return load_error_with_gpus_toml(name, "[H200-SXM]\n" + common + "sms = 132\n[H100-SXM]\n" + common +
                                             "sms = " + h100_sms + "\n" + h100_extra + "[B200]\n" + common +
                                             "sms = 148\n[B300]\n" + common + "sms = 148\n[GB200]\n" +
                                             common + "sms = 148\n[GB300]\n" + common +
                                             "sms = 148\n[H800-SXM]\n" + common + "sms = 132\n");
}

TEST(Catalog, CalibrationFromMustNameAGpuOfTheSameDie) {
  EXPECT_EQ(load_error_with_gpus("same", "132", "calibration_from = \"H200-SXM\"\n"), "");
  const std::string sms = load_error_with_gpus("sms", "144", "calibration_from = \"H200-SXM\"\n");
  EXPECT_NE(sms.find("gpus.toml:27: [H100-SXM].calibration_from: \"H200-SXM\": a GPU of the same die "
                     "(H100-SXM's sms differs from H200-SXM's; only HBM may)"),
            std::string::npos)
      << sms;
  const std::string unknown = load_error_with_gpus("unknown", "132", "calibration_from = \"H300\"\n");
  EXPECT_NE(unknown.find("[H100-SXM].calibration_from: \"H300\": another GPU of gpus.toml"),
            std::string::npos)
      << unknown;
  const std::string self = load_error_with_gpus("self", "132", "calibration_from = \"H100-SXM\"\n");
  EXPECT_NE(self.find("[H100-SXM].calibration_from: \"H100-SXM\": another GPU"), std::string::npos) << self;
}

// The load error of a scratch catalog: the shipped files with `extra` appended to dispatchers.toml.
std::string load_error_with_dispatcher_terms(const std::string& name, const std::string& extra) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("moetwin_catalog_scoped_test_" + name);
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "dispatchers.toml", std::ios::app) << "\n" << extra;
  try {
    Catalog::load(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string scoped_term(const std::string& term, const std::string& instance) {
  return "[[deepep-uccl.terms]]\nname = \"" + term + "\"\ninstance = \"" + instance +
         "\"\nvalue = 1e-06\nunit = \"s\"\nmin = 0\nmax = 2e-05\nfitted = true\nsource = \"test\"\n";
}

TEST(Catalog, InstanceScopedTermsAreCheckedStrictly) {
  const Catalog c = Catalog::load(kDir);
  const DispatcherSpec& uccl = c.dispatcher("deepep-uccl");
  const auto scoped = std::count_if(uccl.terms.begin(), uccl.terms.end(), [](const ModelParam& m) {
    return m.name == "per_message_s" && !m.instance.empty();
  });
  EXPECT_GE(scoped, 3);  // p5, p5en and p6-b200 each priced by their own low-latency rows
  const std::string unknown = load_error_with_dispatcher_terms("unknown", scoped_term("per_message_s", "p9"));
  EXPECT_NE(unknown.find("dispatchers.toml:"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("[deepep-uccl].terms[25].instance: \"p9\": an instance defined in instances.toml"),
            std::string::npos)
      << unknown;
  const std::string orphan =
      load_error_with_dispatcher_terms("orphan", scoped_term("per_node_s", "p5.48xlarge"));
  EXPECT_NE(orphan.find(".instance: \"p5.48xlarge\": an instance-scoped term after the unscoped term "
                        "per_node_s it overrides"),
            std::string::npos)
      << orphan;
  const std::string twice =
      load_error_with_dispatcher_terms("twice", scoped_term("per_message_s", "p5.48xlarge"));
  EXPECT_NE(twice.find(".name: \"per_message_s\": one term per name and instance (\"p5.48xlarge\" has one "
                       "already)"),
            std::string::npos)
      << twice;
}

}  // namespace
}  // namespace moetwin
