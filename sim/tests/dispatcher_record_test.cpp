// A dispatcher is one catalog record: a fifth dispatcher (here a DeepEP-style node-dedup dispatcher over
// GPU-initiated RDMA, as HybridEP or DeepEP v2 over InfiniBand would be) is added by a TOML record alone and
// predicted end to end; records no model covers, or lacking a term their model reads, are input errors
// naming the record.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/dispatcher_moe_cost.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shipped catalog with `extra` appended to dispatchers.toml, in a fresh directory.
std::string catalog_with(const std::string& extra, const std::string& dir_name) {
  const fs::path src = fs::path(MOETWIN_SOURCE_DIR) / "catalog" / "data";
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "dispatcher-record-test" / dir_name;
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "instances.toml", "models.toml", "stacks.toml"})
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  std::ofstream(dir / "dispatchers.toml") << read_file(src / "dispatchers.toml") << "\n" << extra;
  return dir.string();
}

std::string term(const std::string& dispatcher, const std::string& name, const std::string& value,
                 const std::string& unit, const std::string& min, const std::string& max) {
  return "[[" + dispatcher + ".terms]]\nname = \"" + name + "\"\nvalue = " + value + "\nunit = \"" + unit +
         "\"\nmin = " + min + "\nmax = " + max + "\nfitted = false\nsource = \"test record\"\n";
}

// A GPU-initiated node-dedup dispatcher with fewer SMs and a cheaper work request than deepep-v2-gin.
std::string hybrid_record(bool with_all_terms) {
  std::string r =
      "[hybrid-ep]\ndescription = \"test: node-dedup dispatcher over GPU-initiated RDMA\"\n"
      "megatron_flag = \"--moe-token-dispatcher-type flex (test)\"\ntransport = \"gpu-initiated\"\n"
      "fallback_transport = \"cpu-proxy\"\nneeds_gpu_initiated_rdma = true\nnode_dedup = true\n"
      "fused_permute = true\nsms = 4\nproxy_threads_per_gpu = 0\nmax_ranks_normal = 0\n"
      "max_ranks_low_latency = 0\nsource = \"test\"\n";
  r += term("hybrid-ep", "latency_rounds", "3", "count", "0", "20");
  r += term("hybrid-ep", "rdma_efficiency", "0.9", "fraction", "0.3", "1");
  r += term("hybrid-ep", "combine_efficiency", "0.8", "fraction", "0.2", "1");
  r += term("hybrid-ep", "per_message_s", "2e-7", "s", "0", "2e-5");
  r += term("hybrid-ep", "inflight_writes", "128", "count", "1", "4096");
  r += term("hybrid-ep", "chunk_tokens", "16", "tokens", "1", "128");
  r += term("hybrid-ep", "nvlink_efficiency", "0.8", "fraction", "0.3", "1");
  r += term("hybrid-ep", "efa_gen2_efficiency", "1", "fraction", "0.3", "1");
  if (with_all_terms) r += term("hybrid-ep", "fallback_per_message_s", "1e-6", "s", "0", "2e-5");
  return r;
}

Scenario scenario_on(const Catalog& catalog, const std::string& dispatcher) {
  const std::string t =
      "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n"
      "[cluster]\ninstance = \"p6-b200.48xlarge\"\nnodes = 2\n"
      "[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = 16\netp = 1\ncp = 1\ndp = 16\n"
      "[training]\nmicro_batch = 1\nglobal_batch = 32\nseq_length = 4096\nrecompute = \"none\"\n"
      "[dispatcher]\nname = \"" +
      dispatcher + "\"\n";
  return parse_scenario(t, "test.toml", catalog);
}

double iteration_s(const Scenario& s) {
  PredictOptions o;
  o.seams.moe = std::make_shared<DispatcherMoeCost>(s);
  return predict(s, o).iteration_s;
}

TEST(DispatcherRecord, FifthDispatcherFromATomlRecordAlone) {
  const Catalog catalog = Catalog::load(catalog_with(hybrid_record(true), "fifth"));
  ASSERT_EQ(catalog.dispatchers().size(), 7u);  // the six shipped ones and this
  const DispatcherSpec& spec = catalog.dispatcher("hybrid-ep");
  EXPECT_EQ(dispatcher_model_kind(spec), DispatcherModelKind::node_dedup_rdma);
  const auto model = make_dispatcher_model(spec);
  EXPECT_EQ(model->name(), "hybrid-ep");
  EXPECT_DOUBLE_EQ(model->params().get("per_message_s"), 2e-7);

  const double hybrid = iteration_s(scenario_on(catalog, "hybrid-ep"));
  const double gin = iteration_s(scenario_on(catalog, "deepep-v2-gin"));
  ASSERT_GT(hybrid, 0);
  // Same kernel design and transport, fewer SMs taken from compute, cheaper and more overlapped writes, a
  // shorter handshake: never slower than deepep-v2-gin, and its own record's values are what it runs.
  EXPECT_LE(hybrid, gin);
  EXPECT_NE(hybrid, gin);
}

TEST(DispatcherRecord, MissingTermIsAnInputErrorNamingRecordAndTerm) {
  const Catalog catalog = Catalog::load(catalog_with(hybrid_record(false), "missing-term"));
  try {
    (void)make_dispatcher_model(catalog.dispatcher("hybrid-ep"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("hybrid-ep"), std::string::npos) << what;
    EXPECT_NE(what.find("fallback_per_message_s"), std::string::npos) << what;
  }
}

TEST(DispatcherRecord, FieldsNoModelCoversAreAnInputError) {
  std::string r = hybrid_record(true);
  r.replace(r.find("transport = \"gpu-initiated\""), std::string("transport = \"gpu-initiated\"").size(),
            "transport = \"nccl\"");
  const Catalog catalog = Catalog::load(catalog_with(r, "nccl-dedup"));
  try {
    (void)make_dispatcher_model(catalog.dispatcher("hybrid-ep"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("[hybrid-ep].transport"), std::string::npos) << e.what();
  }
}

TEST(DispatcherRecord, TermErrorsNameFileKeyAndValue) {
  const auto load_error = [](const std::string& record, const std::string& name) -> std::string {
    try {
      (void)Catalog::load(catalog_with(record, name));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  // A value outside its own bounds.
  std::string r = hybrid_record(true);
  r.replace(r.find("value = 0.9"), 11, "value = 1.7");
  std::string what = load_error(r, "out-of-bounds");
  EXPECT_NE(what.find("dispatchers.toml"), std::string::npos) << what;
  EXPECT_NE(what.find("[hybrid-ep].terms[1].value"), std::string::npos) << what;
  EXPECT_NE(what.find("1.7"), std::string::npos) << what;
  // A term defined twice.
  what =
      load_error(hybrid_record(true) + term("hybrid-ep", "chunk_tokens", "8", "tokens", "1", "128"), "dup");
  EXPECT_NE(what.find("chunk_tokens"), std::string::npos) << what;
  EXPECT_NE(what.find("not used before"), std::string::npos) << what;
  // A typo in a term's keys.
  r = hybrid_record(true);
  r.replace(r.find("fitted = false"), 14, "fited = false");
  what = load_error(r, "typo");
  EXPECT_NE(what.find("fited"), std::string::npos) << what;
  // A unit the models do not know.
  r = hybrid_record(true);
  r.replace(r.find("unit = \"count\""), 14, "unit = \"furlongs\"");
  what = load_error(r, "unit");
  EXPECT_NE(what.find("furlongs"), std::string::npos) << what;
}

}  // namespace
}  // namespace moetwin
