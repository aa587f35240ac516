// The software-stack catalog (stacks.toml): the shipped entries, the P2P chunk each stack runs with, and
// the strict loader's errors (file, key, value, what was expected).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/test_support/input_error_of.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;
const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

// A catalog directory with the shipped files and `stacks` as stacks.toml.
std::string catalog_with_stacks(const std::string& name, const std::string& stacks) {
  const fs::path dir = fs::temp_directory_path() / ("moetwin_stacks_test_" + name);
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "stacks.toml") << stacks;
  return dir.string();
}

std::string load_error(const std::string& dir) {
  return test_support::error_of([&] { Catalog::load(dir); });
}

const char* const kMinimal =
    "[s]\ndescription = \"d\"\ndefault = true\nmegatron_core = \"0.17\"\nnccl = \"2.28\"\naws_ofi_nccl = "
    "\"1.18\"\nofi_platform_aws = true\nsource = \"x\"\n";

TEST(Stacks, ShippedStacksAndTheirCampaigns) {
  const Catalog c = Catalog::load(kDir);
  const StackSpec& nemo = c.stack("nemo-26.04.01");
  EXPECT_FALSE(nemo.ofi_platform_aws);
  EXPECT_FALSE(nemo.alltoall_pad_to_capacity);
  EXPECT_EQ(c.stack_of_campaign("dsv3-b300-32n-20260601"), &nemo);
  const StackSpec& mlm = c.stack("megatron-lm-core_r0.17.0-nccl2.28.9");
  EXPECT_TRUE(mlm.alltoall_pad_to_capacity);
  EXPECT_EQ(mlm.nccl_env.algo, "Ring");
  EXPECT_EQ(mlm.nccl_env.proto, "Simple");
  EXPECT_EQ(c.stack_of_campaign("uccl-p5en-4n-20260430"), &mlm);
  EXPECT_EQ(c.stack_of_campaign("someone-elses-campaign"), nullptr);
}

TEST(Stacks, P2pChunkFollowsKnobPlatformAndNcclDefault) {
  const Catalog c = Catalog::load(kDir);
  const InstanceSpec& p5en = c.instance("p5en.48xlarge");
  const InstanceSpec& p5 = c.instance("p5.48xlarge");
  // NeMo 26.04 built aws-ofi-nccl without platform-aws: NCCL's 128 KiB stays.
  EXPECT_DOUBLE_EQ(p2p_net_chunk_bytes(c.stack("nemo-26.04.01"), {}, p5en), 131072.0);
  // aws-ofi-nccl 1.18 with platform-aws sets 512 KiB on p5en, nothing on p5.
  const StackSpec& mlm = c.stack("megatron-lm-core_r0.17.0-nccl2.28.9");
  EXPECT_DOUBLE_EQ(p2p_net_chunk_bytes(mlm, {}, p5en), 524288.0);
  EXPECT_DOUBLE_EQ(p2p_net_chunk_bytes(mlm, {}, p5), 131072.0);
  // The run's knob wins.
  NcclKnobs knobs;
  knobs.p2p_net_chunk_bytes = 1048576.0;
  EXPECT_DOUBLE_EQ(p2p_net_chunk_bytes(c.stack("nemo-26.04.01"), knobs, p5en), 1048576.0);
}

TEST(Stacks, UnknownStackListsTheKnownOnes) {
  const Catalog c = Catalog::load(kDir);
  try {
    c.stack("nemo-99");
    FAIL();
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("\"nemo-99\""), std::string::npos) << what;
    EXPECT_NE(what.find("megatron-lm-core_r0.17.0-nccl2.28.9, nemo-26.04.01"), std::string::npos) << what;
  }
}

TEST(Stacks, UnknownKnobIsNamedWithFileAndLine) {
  const std::string dir =
      catalog_with_stacks("knob", std::string(kMinimal) + "[s.nccl_env]\nnccl_max_channels = 8\n");
  const std::string what = load_error(dir);
  EXPECT_NE(what.find("stacks.toml:10: [s].nccl_env.nccl_max_channels: 8: no such key"), std::string::npos)
      << what;
}

TEST(Stacks, OutOfRangeKnobSaysWhatWasExpected) {
  const std::string dir =
      catalog_with_stacks("range", std::string(kMinimal) + "[s.nccl_env]\nnccl_max_nchannels = 0\n");
  const std::string what = load_error(dir);
  EXPECT_NE(what.find("stacks.toml:10: [s].nccl_env.nccl_max_nchannels: 0"), std::string::npos) << what;
  EXPECT_NE(what.find("[1, 64]"), std::string::npos) << what;
}

TEST(Stacks, BadProtocolNamesTheChoices) {
  const std::string dir =
      catalog_with_stacks("proto", std::string(kMinimal) + "[s.nccl_env]\nnccl_proto = \"ll\"\n");
  const std::string what = load_error(dir);
  EXPECT_NE(what.find("stacks.toml:10: [s].nccl_env.nccl_proto: \"ll\": one of Simple, LL, LL128"),
            std::string::npos)
      << what;
}

TEST(Stacks, ExactlyOneDefaultAndCampaignsOwnedOnce) {
  std::string two = std::string(kMinimal) + "campaigns = [\"c1\"]\n" +
                    "[t]\ndescription = \"d\"\ndefault = true\nmegatron_core = \"0.17\"\nnccl = \"2.28\"\n"
                    "aws_ofi_nccl = \"1.18\"\nofi_platform_aws = false\nsource = \"x\"\n";
  EXPECT_NE(load_error(catalog_with_stacks("two-defaults", two)).find("one default stack only"),
            std::string::npos);
  std::string none =
      "[s]\ndescription = \"d\"\nmegatron_core = \"0.17\"\nnccl = \"2.28\"\naws_ofi_nccl = "
      "\"1.18\"\nofi_platform_aws = true\nsource = \"x\"\n";
  EXPECT_NE(load_error(catalog_with_stacks("no-default", none)).find("one stack marked default = true"),
            std::string::npos);
  std::string shared = std::string(kMinimal) + "campaigns = [\"c1\"]\n" +
                       "[t]\ndescription = \"d\"\nmegatron_core = \"0.17\"\nnccl = \"2.28\"\naws_ofi_nccl = "
                       "\"1.18\"\nofi_platform_aws = false\ncampaigns = [\"c1\"]\nsource = \"x\"\n";
  EXPECT_NE(load_error(catalog_with_stacks("shared", shared)).find("a campaign of one stack only"),
            std::string::npos);
}

TEST(Stacks, MhaModelHasOneKvHeadPerQueryHead) {
  const Catalog c = Catalog::load(kDir);
  const ModelSpec& proxy = c.model("uccl-dsv3-proxy");
  EXPECT_EQ(proxy.attention, AttentionKind::mha);
  EXPECT_EQ(proxy.query_groups, proxy.heads);
  EXPECT_EQ(proxy.head_dim, 56);
  EXPECT_TRUE(proxy.tied_embeddings);
}

}  // namespace
}  // namespace moetwin
