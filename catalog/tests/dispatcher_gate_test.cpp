// Which dispatchers run where: Megatron-Bridge's flex-backend gate on the GPU and each transport's fabric, on
// the shipped catalog (catalog/dispatcher_gate.hpp), and the strict reading of the new record keys.
#include "moetwin/catalog/dispatcher_gate.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

std::optional<std::string> refusal(const std::string& dispatcher, const std::string& instance) {
  const InstanceSpec& i = catalog().instance(instance);
  return dispatcher_refusal(catalog().dispatcher(dispatcher), i, catalog().gpu(i.gpu));
}

TEST(DispatcherGate, DeepepRunsOnHopperAndDiscreteBlackwellNotOnGraceSuperchips) {
  for (const char* instance : {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge"}) {
    for (const char* d : {"deepep-uccl", "deepep-nvshmem", "deepep-v2-gin", "nccl-alltoall"})
      EXPECT_EQ(refusal(d, instance), std::nullopt) << d << " on " << instance;
  }
  for (const char* instance : {"p6e-gb200.36xlarge", "dgx-gb200", "dgx-gb300"}) {
    const auto why = refusal("deepep-uccl", instance);
    ASSERT_TRUE(why.has_value()) << instance;
    EXPECT_NE(why->find("falls back to the alltoall dispatcher"), std::string::npos) << *why;
    EXPECT_NE(why->find("a Grace superchip GPU"), std::string::npos) << *why;
    EXPECT_NE(why->find("choose nccl-alltoall (NVIDIA's recipes run hybridep there"), std::string::npos)
        << *why;
    EXPECT_EQ(refusal("nccl-alltoall", instance), std::nullopt) << instance;
  }
  // On InfiniBand GB200/GB300 both the IBGDA transport and the gate apply: the gate speaks.
  EXPECT_NE(refusal("deepep-ibgda", "dgx-gb300")->find("Megatron-Bridge"), std::string::npos);
  EXPECT_EQ(refusal("hybridep", "dgx-gb200"), std::nullopt);
  EXPECT_EQ(refusal("hybridep", "dgx-gb300"), std::nullopt);
}

TEST(DispatcherGate, HybridepNeedsComputeCapability8To10) {
  GpuSpec gpu = catalog().gpu("B300");
  const DispatcherSpec& hybridep = catalog().dispatcher("hybridep");
  EXPECT_EQ(flex_backend_refusal(hybridep, gpu), std::nullopt);
  gpu.compute_capability = 12.0;  // a consumer Blackwell part
  const auto why = flex_backend_refusal(hybridep, gpu);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(
      *why,
      "Megatron-Bridge runs the flex backend \"hybridep\" only on compute capability 8.x-10.x; on B300 "
      "(12.0) it falls back to the alltoall dispatcher (flex_dispatcher_backend.py): choose nccl-alltoall");
  // The discrete B300 at 12.0 also loses deepep (not 8.x/9.x, not a 10.x board GPU).
  EXPECT_TRUE(flex_backend_refusal(catalog().dispatcher("deepep-uccl"), gpu).has_value());
}

TEST(DispatcherGate, TransportsRunOnTheirFabrics) {
  // NVSHMEM's libfabric host proxy is EFA's path; on InfiniBand DeepEP v1 posts from the GPU (IBGDA).
  EXPECT_EQ(*refusal("deepep-nvshmem", "dgx-h100"),
            "deepep-nvshmem runs on efa only; dgx-h100 is on infiniband (" +
                catalog().dispatcher("deepep-nvshmem").description + ")");
  EXPECT_EQ(refusal("deepep-ibgda", "dgx-h100"), std::nullopt);
  EXPECT_EQ(refusal("deepep-ibgda", "dgx-b300"), std::nullopt);
  EXPECT_NE(refusal("deepep-ibgda", "p5.48xlarge")->find("runs on infiniband only"), std::string::npos);
  EXPECT_NE(refusal("hybridep", "p6-b300.48xlarge")->find("runs on infiniband only"), std::string::npos);
  // NCCL's all-to-all and the fabric-agnostic transports run everywhere.
  for (const char* d : {"nccl-alltoall", "deepep-uccl", "deepep-v2-gin"})
    EXPECT_EQ(refusal(d, "dgx-h100"), std::nullopt) << d;
  // GPU-initiated RDMA without a fallback transport needs the instance to have it.
  InstanceSpec no_gda = catalog().instance("dgx-h100");
  no_gda.gpu_initiated_rdma = false;
  EXPECT_EQ(*transport_refusal(catalog().dispatcher("deepep-ibgda"), no_gda),
            "deepep-ibgda needs GPU-initiated RDMA, which dgx-h100 lacks");
  // deepep-v2-gin falls back to a proxy (p5 has no EFA-GDA): not refused.
  EXPECT_EQ(refusal("deepep-v2-gin", "p5.48xlarge"), std::nullopt);
}

// An EP group inside the dispatcher's NVLink reach never touches its RDMA path: the fabric does not matter.
TEST(DispatcherGate, EpGroupsInsideTheNvlinkReachRunOnAnyFabric) {
  const auto refusal_for = [](const std::string& d, const std::string& instance, int ep_gpus, int world = 0) {
    const InstanceSpec& i = catalog().instance(instance);
    return dispatcher_refusal(catalog().dispatcher(d), i, catalog().gpu(i.gpu), ep_gpus, world);
  };
  EXPECT_FALSE(catalog().dispatcher("deepep-ibgda").reaches_nvlink_domain);  // DeepEP v1: the host node
  EXPECT_TRUE(catalog().dispatcher("hybridep").reaches_nvlink_domain);       // TMA over the whole domain
  EXPECT_TRUE(catalog().dispatcher("nccl-alltoall").reaches_nvlink_domain);
  // HybridEP with EP64 on 64 GPUs of the EFA UltraServer's 72-GPU domain, or EP36 tiling it: no RDMA leg.
  EXPECT_EQ(refusal_for("hybridep", "p6e-gb200.36xlarge", 64, 64), std::nullopt);
  // EP64 groups on 144 GPUs: the second group straddles two domains.
  EXPECT_NE(refusal_for("hybridep", "p6e-gb200.36xlarge", 64, 144)->find("infiniband only"),
            std::string::npos);
  EXPECT_EQ(refusal_for("hybridep", "p6e-gb200.36xlarge", 36), std::nullopt);
  // EP144 spans two domains, EP48 does not tile 72: over EFA, refused.
  EXPECT_NE(refusal_for("hybridep", "p6e-gb200.36xlarge", 144)->find("infiniband only"), std::string::npos);
  EXPECT_NE(refusal_for("hybridep", "p6e-gb200.36xlarge", 48)->find("infiniband only"), std::string::npos);
  // DeepEP v1 inside one p5 node runs its intranode kernels (NVLink only); across nodes it needs IBGDA.
  EXPECT_EQ(refusal_for("deepep-ibgda", "p5.48xlarge", 8), std::nullopt);
  EXPECT_NE(refusal_for("deepep-ibgda", "p5.48xlarge", 16)->find("infiniband only"), std::string::npos);
  // The GPU gate applies whatever the span.
  EXPECT_NE(refusal_for("deepep-uccl", "p6e-gb200.36xlarge", 4)->find("Megatron-Bridge"), std::string::npos);
}

// The shipped catalog with `dispatchers.toml` extended by `extra`; the load error ("" when it loads).
std::string load_error_with_extra_dispatcher(const std::string& tag, const std::string& extra) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("moetwin_gate_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(Catalog::default_dir()))
    fs::copy_file(e.path(), dir / e.path().filename());
  {
    std::ofstream out(dir / "dispatchers.toml", std::ios::app);
    out << "\n" << extra;
  }
  std::string error;
  try {
    (void)Catalog::load(dir.string());
  } catch (const InputError& e) {
    error = e.what();
  }
  fs::remove_all(dir);
  return error;
}

std::string record(const std::string& keys) {
  return "[carrier]\ndescription = \"d\"\nmegatron_flag = \"f\"\ntransport = \"nccl\"\nnode_dedup = false\n"
         "fused_permute = false\nsms = 0\nproxy_threads_per_gpu = 0\nmax_ranks_normal = 0\n"
         "max_ranks_low_latency = 0\nsource = \"s\"\n" +
         keys;
}

TEST(DispatcherGate, NewRecordKeysAreReadStrictly) {
  const std::string fabric = load_error_with_extra_dispatcher("fabric", record("fabrics = [\"ethernet\"]\n"));
  EXPECT_NE(fabric.find("[carrier].fabrics: \"ethernet\": a list of \"efa\" and \"infiniband\""),
            std::string::npos)
      << fabric;
  const std::string empty = load_error_with_extra_dispatcher("empty", record("fabrics = []\n"));
  EXPECT_NE(empty.find("[carrier].fabrics: []: at least one fabric"), std::string::npos) << empty;
  const std::string backend =
      load_error_with_extra_dispatcher("backend", record("flex_backend = \"deepx\"\n"));
  EXPECT_NE(backend.find("[carrier].flex_backend: \"deepx\""), std::string::npos) << backend;
  EXPECT_NE(backend.find("hybridep"), std::string::npos) << backend;
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

std::optional<std::string> alike(const std::string& a, const std::string& b, const std::string& instance) {
  return same_mechanism_note(catalog().dispatcher(a), catalog().dispatcher(b), catalog().instance(instance));
}

// Issue 52: deepep-ibgda and hybridep priced alike on DGX B200 without a word. Their mechanisms are one there
// (GPU-posted IBGDA writes, one copy per 8-GPU node: the node is the NVLink domain); on an NVL72 rack
// HybridEP's TMA stage reaches 72 GPUs where DeepEP's stops at the tray, and different transports never
// price alike.
TEST(DispatcherGate, DispatchersThatPriceAlikeSayWhy) {
  for (const char* instance : {"dgx-b200", "dgx-b300", "dgx-h100"}) {
    const auto why = alike("deepep-ibgda", "hybridep", instance);
    ASSERT_TRUE(why.has_value()) << instance;
    EXPECT_NE(why->find("one token copy per destination NVLink group of 8 GPUs"), std::string::npos) << *why;
    EXPECT_NE(why->find("they differ only in SMs held (24 vs 32: they slow overlapped compute only), "
                        "chunk_tokens (16 vs 128)"),
              std::string::npos)
        << *why;
    EXPECT_EQ(*why, *alike("deepep-ibgda", "hybridep", instance));
  }
  EXPECT_EQ(alike("hybridep", "nccl-alltoall", "dgx-b200"), std::nullopt);           // per-copy vs node dedup
  EXPECT_EQ(alike("deepep-uccl", "deepep-nvshmem", "p5en.48xlarge"), std::nullopt);  // CPU vs host proxy
  EXPECT_EQ(alike("deepep-ibgda", "deepep-ibgda", "dgx-b200"), std::nullopt);
  // One posting path and reach, but DeepEP v2's own calibrated terms tell it apart from v1 over IBGDA.
  EXPECT_EQ(alike("deepep-ibgda", "deepep-v2-gin", "dgx-b200"), std::nullopt);
  // A 72-GPU rack: the reach differs (tray of 4 vs the domain).
  InstanceSpec rack = catalog().instance("dgx-gb200");
  EXPECT_EQ(same_mechanism_note(catalog().dispatcher("deepep-ibgda"), catalog().dispatcher("hybridep"), rack),
            std::nullopt);
}

}  // namespace
}  // namespace moetwin
