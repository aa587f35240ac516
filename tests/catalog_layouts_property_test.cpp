// Property (issue 52 item 1): on every catalog instance, random layouts a user could write (any catalog
// model cut to a few layers, tp, pp, vpp, ep, dp, micro-batch, recompute, overlap, dispatcher; on NVL72 trays
// job sizes that fill racks unequally, on DGX and p5 nodes of 8) are either predicted or refused as bad
// input (InputError: exit 2 with the reason), never an internal error (std::logic_error and the like: exit
// 3). Draws come from the twin's own PRNG (models/rng.hpp) with a fixed seed: the same layouts every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/models/rng.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

template <typename T>
T pick(Rng& rng, const std::vector<T>& from) {
  return from[static_cast<std::size_t>(rng.below(from.size()))];
}

struct Draw {
  std::string toml;
  std::string label;
};

// One random layout on `instance`: valid by construction where that is cheap to say (world = tp x pp x dp,
// ep divides the experts and tp x dp, microbatches a multiple of pp), the rest left to the scenario rules.
Draw draw(Rng& rng, const InstanceSpec& instance, const std::vector<std::string>& models,
          const std::vector<std::string>& dispatchers) {
  const ModelSpec& model = catalog().model(pick(rng, models));
  const int per_node = instance.gpus;
  // Trays of 4 in racks of 72: 18 trays fill one rack, 20 and 32 fill two unequally; nodes of 8: 1..4.
  const std::vector<int> node_counts = nvlink_domain_gpus(instance) > per_node
                                           ? std::vector<int>{1, 2, 4, 16, 18, 20, 32}
                                           : std::vector<int>{1, 2, 4};
  const int nodes = pick(rng, node_counts);
  const int world = nodes * per_node;
  std::vector<int> tps;
  for (int tp : {1, 2, 4, 8}) {
    if (tp <= per_node && world % tp == 0) tps.push_back(tp);
  }
  const int tp = pick(rng, tps);
  std::vector<int> pps;
  for (int pp : {1, 2, 4}) {
    if ((world / tp) % pp == 0) pps.push_back(pp);
  }
  const int pp = pick(rng, pps);
  const int vpp = pp > 1 ? pick(rng, std::vector<int>{1, 2}) : 1;
  const int dp = world / (tp * pp);
  int ep = 1;
  if (model.experts > 0) {
    std::vector<int> eps;
    for (int e = 1; e <= tp * dp; e *= 2) {
      if (model.experts % e == 0 && (tp * dp) % e == 0) eps.push_back(e);
    }
    // Also the sizes NVIDIA runs across racks (32, 64) when they divide.
    ep = pick(rng, eps);
  }
  const int mb = pick(rng, std::vector<int>{1, 2});
  const int microbatches = 2 * pp;
  const std::string recompute = pick(rng, std::vector<std::string>{"none", "selective", "full"});
  const bool overlap = ep > 1 && (vpp > 1 || pp == 1) && recompute != "full" && rng.below(2) == 1;
  const std::string dispatcher = model.experts > 0 ? pick(rng, dispatchers) : "nccl-alltoall";
  // A few layers per chunk keep a draw cheap: 4 per chunk, past any leading dense layers.
  const int layers =
      std::max(4 * pp * vpp, pp * vpp * ((model.dense_layers + 4 + pp * vpp - 1) / (pp * vpp)));
  std::string t =
      "name = \"draw\"\n[model]\nname = \"" + model.name + "\"\nlayers = " + std::to_string(layers);
  t += "\n[cluster]\ninstance = \"" + instance.name + "\"\nnodes = " + std::to_string(nodes);
  t += "\n[parallelism]\ntp = " + std::to_string(tp) + "\npp = " + std::to_string(pp) +
       "\nvpp = " + std::to_string(vpp) + "\nep = " + std::to_string(ep) +
       "\netp = 1\ncp = 1\ndp = " + std::to_string(dp);
  t += "\n[training]\nmicro_batch = " + std::to_string(mb) +
       "\nglobal_batch = " + std::to_string(dp * mb * microbatches) + "\nseq_length = 1024\nrecompute = \"" +
       recompute + "\"\noverlap_moe_a2a = " + (overlap ? "true" : "false");
  t += "\n[dispatcher]\nname = \"" + dispatcher + "\"\n";
  const std::string label = instance.name + " " + model.name + " n" + std::to_string(nodes) + " tp" +
                            std::to_string(tp) + " pp" + std::to_string(pp) + " vpp" + std::to_string(vpp) +
                            " ep" + std::to_string(ep) + " dp" + std::to_string(dp) + " mb" +
                            std::to_string(mb) + " " + recompute + (overlap ? " overlap " : " ") + dispatcher;
  return {t, label};
}

TEST(CatalogLayoutsProperty, EveryRandomLayoutIsPredictedOrRefusedNeverAnInternalError) {
  std::vector<std::string> models, dispatchers;
  for (const auto& [name, m] : catalog().models()) models.push_back(name);
  for (const auto& [name, d] : catalog().dispatchers()) dispatchers.push_back(name);
  constexpr int kDrawsPerInstance = 24;
  Rng rng(52);
  std::map<std::string, int> predicted_by_instance;
  int predicted = 0, refused = 0;
  for (const auto& [name, instance] : catalog().instances()) {
    for (int k = 0; k < kDrawsPerInstance; ++k) {
      const Draw d = draw(rng, instance, models, dispatchers);
      try {
        const Scenario s = parse_scenario(d.toml, "draw.toml", catalog());
        PredictOptions options;
        options.threads = 2;
        const Prediction p = predict(s, options);
        EXPECT_GT(p.iteration_s, 0) << d.label;
        ++predicted;
        ++predicted_by_instance[name];
      } catch (const InputError& e) {
        // Bad input, exit 2: it must say why.
        EXPECT_GT(std::string(e.what()).size(), 10u) << d.label;
        ++refused;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "internal error (exit 3) on " << d.label << ": " << e.what() << "\n" << d.toml;
      }
    }
  }
  std::cout << predicted << " draws predicted, " << refused << " refused as bad input\n";
  // Not vacuous: most draws are layouts the twin predicts.
  EXPECT_GT(predicted, refused) << predicted << " predicted, " << refused << " refused";
  for (const auto& [name, instance] : catalog().instances())
    EXPECT_GT(predicted_by_instance[name], 0) << name << ": no draw predicted";
}

}  // namespace
}  // namespace moetwin
