// End-to-end (issue 52 item 1): every catalog instance x every catalog model, at one node count sized for the
// model, through plan (that one node count, the cheapest search: --screen 1), then on plan's first option
// predict, recommend (that node count) and compare --dispatchers with every dispatcher the gate
// (catalog/dispatcher_gate.hpp) lets run that layout. Each command exits 0, or 2 with its reason on stderr;
// never 3 (an internal error). A model too big for the node count is plan's exit 2 naming HBM. Plus the
// commands of the issue that exited 3, as regression inputs. The matrix is generated from the catalog: a
// new instance, model or dispatcher is covered the day its record lands.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "moetwin/accounting/model_accounting.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/e2e/cli_run.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

namespace fs = std::filesystem;

const std::string kSource = e2e::kSourceDir;
const std::string kBinary = e2e::kMoetwin;

using test_support::catalog;

using Outcome = e2e::CliRun;

Outcome invoke(const std::string& args, const fs::path& dir) {
  return e2e::run_moetwin(args, dir);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(MOETWIN_BINARY_DIR) / "catalog_matrix_e2e" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Exit 0, or exit 2 with a reason; never 3 (or a crash).
void expect_answer(const Outcome& r, const std::string& what) {
  EXPECT_TRUE(r.code == 0 || r.code == 2) << what << ": exit " << r.code << "\n" << r.err;
  if (r.code == 2) {
    EXPECT_NE(r.err.find("error"), std::string::npos) << what << ": exit 2 without a reason";
  }
}

// Nodes for `model` on `instance`: enough HBM for ~10 bytes per parameter (bf16 weights and gradients,
// the distributed optimizer's fp32 state spread over data parallelism) at 60% of HBM, a power of two.
int node_count(const ModelSpec& model, const InstanceSpec& instance) {
  const double params = static_cast<double>(count_parameters(model, 1).total());
  const double per_node = 0.6 * instance.gpus * catalog().gpu(instance.gpu).hbm_bytes;
  int nodes = 1;
  while (nodes * per_node < 10 * params && nodes < 32) nodes *= 2;
  // Trays of an NVL72 rack: at least one 8-GPU-sized job so EP spans more than a tray.
  if (instance.gpus < 8) nodes = std::max(nodes, 2);
  return nodes;
}

class CatalogMatrix : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogMatrix, EveryModelPlansPredictsRecommendsAndComparesOrSaysWhyNot) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const InstanceSpec& instance = catalog().instance(GetParam());
  std::string safe = instance.name;
  std::replace(safe.begin(), safe.end(), '.', '_');
  for (const auto& [name, model] : catalog().models()) {
    const fs::path dir = fresh_dir(safe + "-" + name);
    const int nodes = node_count(model, instance);
    const std::string what = instance.name + " x " + name + " at " + std::to_string(nodes) + " nodes";
    // gbs: one sequence per data-parallel rank and a few microbatches, whatever the layout.
    const int gbs = nodes * instance.gpus;
    const Outcome plan =
        invoke("plan --model " + name + " --instance " + instance.name + " --tokens 1e9 --min-nodes " +
                   std::to_string(nodes) + " --max-nodes " + std::to_string(nodes) + " --gbs " +
                   std::to_string(gbs) + " --seq 1024 --screen 1 --max-layouts 1 --threads 2 --top 1" +
                   " --write-scenarios " + (dir / "plan").string(),
               dir);
    expect_answer(plan, "plan " + what);
    if (plan.code != 0) continue;
    std::vector<fs::path> written;
    for (const auto& e : fs::directory_iterator(dir / "plan")) {
      if (e.path().extension() == ".toml") written.push_back(e.path());
    }
    if (written.empty()) continue;  // every layout refused: plan said why (exit 0, nothing to write)
    std::sort(written.begin(), written.end());
    const std::string first = written.front().string();
    expect_answer(invoke("predict " + first, dir), "predict " + what);
    expect_answer(
        invoke("recommend " + first + " --nodes " + std::to_string(nodes) + " --tokens 1e9 --threads 2", dir),
        "recommend " + what);
    // Every dispatcher the one gate lets run this layout.
    const Scenario s = load_scenario_file(first, catalog());
    std::string allowed;
    for (const auto& [d, spec] : catalog().dispatchers()) {
      if (!dispatcher_refusal(spec, s.instance, s.gpu, s.parallel.etp * s.parallel.ep, s.gpus()) &&
          !rank_cap_refusal(spec, s.parallel.ep))
        allowed += (allowed.empty() ? "" : ",") + d;
    }
    if (allowed.find(',') != std::string::npos)
      expect_answer(invoke("compare " + first + " --dispatchers " + allowed, dir),
                    "compare --dispatchers " + allowed + " " + what);
  }
}

std::vector<std::string> instance_names() {
  std::vector<std::string> out;
  for (const auto& [name, i] : catalog().instances()) out.push_back(name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Instances, CatalogMatrix, ::testing::ValuesIn(instance_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// The commands issue 52 found exiting 3, as they were typed (tokens and global batch included).
TEST(CatalogMatrix, TheIssuesCommandsAnswer) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fresh_dir("issue-52");
  // hybridep offered with EP inside a p5 node: its RDMA leg carries nothing, so no EFA-generation term.
  const Outcome p5 = invoke(
      "plan --model qwen3-30b-a3b --instance p5.48xlarge --tokens 1e11 --min-nodes 8 --max-nodes 8 --gbs 256 "
      "--threads 2",
      dir);
  EXPECT_EQ(p5.code, 0) << p5.err;
  // EP groups over two NVL72 racks, filled unequally: priced by the slowest domain.
  for (const char* instance : {"dgx-gb200", "dgx-gb300", "p6e-gb200.36xlarge"}) {
    for (const char* model : {"deepseek-v3", "qwen3-235b-a22b"}) {
      const Outcome r =
          invoke(std::string("plan --model ") + model + " --instance " + instance +
                     " --tokens 1e12 --min-nodes 64 --max-nodes 64 --gbs 256 --screen 1 --max-layouts 1 "
                     "--threads 2",
                 dir);
      expect_answer(r, std::string("plan ") + model + " on 64 " + instance);
    }
  }
}

// hybridep predicted with EP inside one p5 node (issue 52: exit 3, efa_gen2_efficiency).
TEST(CatalogMatrix, HybridepInsideAP5NodePredicts) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fresh_dir("hybridep-p5");
  const std::string toml = std::string("name = \"h\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n") +
                           "[cluster]\ninstance = \"p5.48xlarge\"\nnodes = 2\n" +
                           "[parallelism]\ntp = 1\npp = 1\nep = 8\ndp = 16\n" +
                           "[training]\nmicro_batch = 1\nglobal_batch = 32\nseq_length = 4096\n" +
                           "[dispatcher]\nname = \"hybridep\"\n";
  const fs::path file = dir / "hybridep-p5.toml";
  {
    std::FILE* f = std::fopen(file.string().c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(toml.c_str(), f);
    std::fclose(f);
  }
  const Outcome predict = invoke("predict " + file.string(), dir);
  EXPECT_EQ(predict.code, 0) << predict.err;
  const Outcome recommend =
      invoke("recommend " + file.string() + " --nodes 2 --tokens 1e10 --threads 2", dir);
  EXPECT_EQ(recommend.code, 0) << recommend.err;
}

// NVIDIA's published MoE layouts (validate/data/nvidia-moe-layouts.csv, what-if rows): no exit 3, at least
// 90% predicted, every refusal named.
TEST(CatalogMatrix, NvidiaMoeLayoutsArePredicted) {
  if (!fs::exists(kBinary)) GTEST_SKIP() << "moetwin binary not built";
  const fs::path dir = fresh_dir("nvidia-moe-layouts");
  const Outcome r =
      invoke("predict --runs " + kSource + "/validate/data/nvidia-moe-layouts.csv --format csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const CsvTable table = parse_csv(r.out, "predict.csv");
  const std::size_t predicted = table.rows.size();
  EXPECT_GE(predicted * 10, 131u * 9) << predicted << " of 131 predicted\n" << r.err;
  EXPECT_EQ(table.rows.front().fields.at(table.column("iter_err_pct")), "");
}

}  // namespace
}  // namespace moetwin
