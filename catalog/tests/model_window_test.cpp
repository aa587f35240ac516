// Sliding-window attention and attention sinks in models.toml (gpt-oss): the shipped entries, and the
// loader's strict errors for a window on MLA, a full-attention period without a window or of 1, and sinks
// on MLA.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

TEST(ModelWindow, GptOssAlternatesWindowedAndFullLayersWithSinks) {
  const Catalog c = Catalog::load(kDir);
  for (const char* name : {"gpt-oss-120b", "gpt-oss-20b"}) {
    const ModelSpec& m = c.model(name);
    EXPECT_EQ(m.sliding_window, 128) << name;
    EXPECT_EQ(m.full_attention_every, 2) << name;
    EXPECT_TRUE(m.attention_sinks) << name;
    EXPECT_EQ(m.attention, AttentionKind::gqa) << name;
    EXPECT_EQ(m.top_k, 4) << name;
  }
  EXPECT_EQ(c.model("gpt-oss-120b").experts, 128);
  EXPECT_EQ(c.model("gpt-oss-20b").experts, 32);
  // Every other shipped model keeps full attention and no sinks.
  EXPECT_EQ(c.model("deepseek-v3").sliding_window, 0);
  EXPECT_FALSE(c.model("llama3-70b").attention_sinks);
}

// The load error of a scratch catalog: the shipped files with `model` appended to models.toml.
std::string load_error_with_model(const std::string& name, const std::string& model) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("moetwin_model_window_test_" + name);
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::ofstream(dir / "models.toml", std::ios::app) << "\n" << model;
  try {
    Catalog::load(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kGqa =
    "[w]\nlayers = 4\ndense_layers = 0\nhidden = 64\nffn_hidden = 64\nattention = \"gqa\"\nheads = 4\n"
    "query_groups = 2\nhead_dim = 16\nexperts = 4\nexpert_ffn_hidden = 32\ntop_k = 2\nvocab = 100\n"
    "source = \"test\"\n";
const std::string kMla =
    "[w]\nlayers = 4\ndense_layers = 0\nhidden = 64\nffn_hidden = 64\nattention = \"mla\"\nheads = 4\n"
    "kv_lora_rank = 16\nqk_head_dim = 16\nqk_rope_dim = 8\nv_head_dim = 16\nexperts = 4\n"
    "expert_ffn_hidden = 32\ntop_k = 2\nvocab = 100\nsource = \"test\"\n";

TEST(ModelWindow, AcceptsAWindowOnGqa) {
  EXPECT_EQ(load_error_with_model("ok", kGqa + "sliding_window = 8\nfull_attention_every = 2\n"), "");
  EXPECT_EQ(load_error_with_model("all", kGqa + "sliding_window = 8\n"), "");  // every layer windowed
}

TEST(ModelWindow, RefusesAWindowOnMla) {
  const std::string e = load_error_with_model("mla", kMla + "sliding_window = 8\n");
  EXPECT_NE(e.find("[w].sliding_window: 8: 0 for attention = \"mla\""), std::string::npos) << e;
}

TEST(ModelWindow, RefusesAFullAttentionPeriodWithoutWindowOrOfOne) {
  const std::string none = load_error_with_model("nowin", kGqa + "full_attention_every = 2\n");
  EXPECT_NE(none.find("[w].full_attention_every: 2: no key without sliding_window > 0"), std::string::npos)
      << none;
  const std::string one =
      load_error_with_model("one", kGqa + "sliding_window = 8\nfull_attention_every = 1\n");
  EXPECT_NE(one.find("[w].full_attention_every: 1: 0 (every layer windowed) or 2..layers"), std::string::npos)
      << one;
  const std::string big =
      load_error_with_model("big", kGqa + "sliding_window = 8\nfull_attention_every = 5\n");
  EXPECT_NE(big.find("[w].full_attention_every: 5"), std::string::npos) << big;
  const std::string neg = load_error_with_model("neg", kGqa + "sliding_window = -1\n");
  EXPECT_NE(neg.find("[w].sliding_window: -1"), std::string::npos) << neg;
}

TEST(ModelWindow, RefusesSinksOnMla) {
  const std::string e = load_error_with_model("sinks", kMla + "attention_sinks = true\n");
  EXPECT_NE(e.find("[w].attention_sinks: true: false for attention = \"mla\""), std::string::npos) << e;
}

}  // namespace
}  // namespace moetwin
