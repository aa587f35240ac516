#include "moetwin/models/dispatcher_moe_cost.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/models/comm_cost.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/models/dispatcher_params.hpp"
#include "moetwin/models/topology_comm.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// qwen3-30b-a3b (128 experts, top-8, hidden 2048) cut to 4 layers on `nodes` x p5en (8 GPUs each, default
// 2): tp1 pp1, ep = dp = every GPU, so the one EP group spans every node (8 ranks per node); mb 1,
// 2 microbatches.
Scenario make(const std::string& dispatcher, const std::string& routing = "",
              const std::string& instance = "p5en.48xlarge", int nodes = 2) {
  const std::string gpus = std::to_string(8 * nodes);
  std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n";
  t += "[cluster]\ninstance = \"" + instance + "\"\nnodes = " + std::to_string(nodes) + "\n";
  t += "[parallelism]\ntp = 1\npp = 1\nvpp = 1\nep = " + gpus + "\netp = 1\ncp = 1\ndp = " + gpus + "\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(16 * nodes) +
       "\nseq_length = 4096\nrecompute = \"none\"\n";
  t += "[dispatcher]\nname = \"" + dispatcher + "\"\n";
  t += routing;
  return parse_scenario(t, "test.toml", catalog());
}

std::vector<int> group16() {
  std::vector<int> g(16);
  for (int i = 0; i < 16; ++i) g[static_cast<std::size_t>(i)] = i;
  return g;
}

std::vector<std::string> predicted_warnings(const Scenario& s) {
  PredictOptions o;
  o.seams.moe = std::make_shared<DispatcherMoeCost>(s);
  return predict(s, o).warnings;
}

double predicted_iteration(const Scenario& s) {
  PredictOptions o;
  o.seams.moe = std::make_shared<DispatcherMoeCost>(s);
  return predict(s, o).iteration_s;
}

TEST(DispatcherMoeCost, RoutingSpecFromScenario) {
  const RoutingSpec spec = routing_spec_for(make("nccl-alltoall"));
  EXPECT_EQ(spec.experts, 128);
  EXPECT_EQ(spec.top_k, 8);
  EXPECT_EQ(spec.ep_ranks, 16);
  EXPECT_EQ(spec.ranks_per_node, 8);  // EP16 over 2 nodes
  EXPECT_EQ(spec.nodes(), 2);
  EXPECT_EQ(spec.tokens_per_rank, 4096);  // mb 1 x seq 4096 / (tp 1 x cp 1)
}

TEST(DispatcherMoeCost, BalancedTokensAndDispatcherDifferences) {
  const DispatcherMoeCost nccl(make("nccl-alltoall"));
  const DispatcherMoeCost uccl(make("deepep-uccl"));
  std::vector<MoeRankCost> a, b;
  nccl.layer_costs(0, 0, 0, group16(), a);
  uccl.layer_costs(0, 0, 0, group16(), b);
  ASSERT_EQ(a.size(), 16u);
  ASSERT_EQ(b.size(), 16u);
  for (std::size_t k = 0; k < 16; ++k) {
    // Balanced: every rank receives 4096 tokens x top-8 = 32768 copies, whatever the dispatcher.
    EXPECT_EQ(a[k].tokens, 32768);
    EXPECT_EQ(b[k].tokens, 32768);
    EXPECT_GT(a[k].dispatch_ns, 0);
    EXPECT_GT(b[k].dispatch_ns, 0);
    EXPECT_NE(a[k].dispatch_ns, b[k].dispatch_ns);
    EXPECT_GT(a[k].permute_ns, 0);  // NCCL: separate permute / unpermute kernels
    EXPECT_GT(a[k].unpermute_ns, 0);
    EXPECT_EQ(b[k].permute_ns, 0);  // DeepEP fuses them
    EXPECT_EQ(b[k].unpermute_ns, 0);
    EXPECT_EQ(a[k].sms, 16);  // nccl-alltoall "sms" parameter
    EXPECT_EQ(b[k].sms, 20);  // catalog: deepep-uccl normal kernels
  }
  const DispatcherMoeCost nvshmem(make("deepep-nvshmem"));
  std::vector<MoeRankCost> c;
  nvshmem.layer_costs(0, 0, 0, group16(), c);
  EXPECT_NE(c[0].dispatch_ns, a[0].dispatch_ns);
  EXPECT_EQ(c[0].sms, 24);
  EXPECT_NE(predicted_iteration(make("nccl-alltoall")), predicted_iteration(make("deepep-uccl")));
}

// Balanced plans are priced once per count class: a cached answer equals the fresh one of a new model,
// whatever the order of the calls, for every dispatcher.
TEST(DispatcherMoeCost, CachedBalancedCostsEqualFreshOnes) {
  for (const std::string d : {"nccl-alltoall", "deepep-uccl", "deepep-nvshmem"}) {
    const Scenario s = make(d);
    const DispatcherMoeCost warm(s);
    std::vector<MoeRankCost> out;
    for (int layer = 0; layer < 4; ++layer) {
      for (int mb = 0; mb < 2; ++mb) warm.layer_costs(layer, mb, 0, group16(), out);
    }
    for (int layer = 3; layer >= 0; --layer) {
      for (int mb = 1; mb >= 0; --mb) {
        warm.layer_costs(layer, mb, 0, group16(), out);
        std::vector<MoeRankCost> fresh;
        DispatcherMoeCost(s).layer_costs(layer, mb, 0, group16(), fresh);
        ASSERT_EQ(out.size(), fresh.size());
        for (std::size_t k = 0; k < out.size(); ++k) {
          EXPECT_EQ(out[k].tokens, fresh[k].tokens) << d;
          EXPECT_EQ(out[k].dispatch_ns, fresh[k].dispatch_ns) << d;
          EXPECT_EQ(out[k].combine_ns, fresh[k].combine_ns) << d;
          EXPECT_EQ(out[k].dispatch_latency_ns, fresh[k].dispatch_latency_ns) << d;
          EXPECT_EQ(out[k].combine_latency_ns, fresh[k].combine_latency_ns) << d;
          EXPECT_EQ(out[k].permute_ns, fresh[k].permute_ns) << d;
          EXPECT_EQ(out[k].unpermute_ns, fresh[k].unpermute_ns) << d;
          EXPECT_EQ(out[k].sms, fresh[k].sms) << d;
          EXPECT_EQ(out[k].dispatch_remote_tokens, fresh[k].dispatch_remote_tokens) << d;
          EXPECT_EQ(out[k].combine_remote_tokens, fresh[k].combine_remote_tokens) << d;
        }
      }
    }
  }
}

TEST(DispatcherMoeCost, ZipfNeverFasterThanBalanced) {
  for (const char* d : {"nccl-alltoall", "deepep-uccl", "deepep-nvshmem"}) {
    const double balanced = predicted_iteration(make(d, "[routing]\nkind = \"balanced\"\nseed = 7\n"));
    const double zipf =
        predicted_iteration(make(d, "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.2\nseed = 7\n"));
    EXPECT_GE(zipf, balanced) << d;
  }
  // A skewed layer concentrates copies: the hottest rank receives more than the balanced 32768.
  const DispatcherMoeCost z(
      make("nccl-alltoall", "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.2\nseed = 7\n"));
  std::vector<MoeRankCost> out;
  z.layer_costs(0, 0, 0, group16(), out);
  std::int64_t hottest = 0, total = 0;
  for (const MoeRankCost& c : out) {
    hottest = std::max(hottest, c.tokens);
    total += c.tokens;
  }
  EXPECT_EQ(total, 16 * 32768);  // copies are conserved
  EXPECT_GT(hottest, 32768);
}

TEST(DispatcherMoeCost, RemoteTokensPerDispatcher) {
  // EP16 over 2 nodes, 4096 tokens per rank, top-8 over 128 experts, balanced. NCCL sends every copy on
  // its own: half of the 32768 copies go to the other node. DeepEP sends a token once per remote node that
  // holds one of its experts: with 8 of 16 ranks there, almost every token (at most 4096).
  std::vector<MoeRankCost> nccl, uccl;
  DispatcherMoeCost(make("nccl-alltoall")).layer_costs(0, 0, 0, group16(), nccl);
  DispatcherMoeCost(make("deepep-uccl")).layer_costs(0, 0, 0, group16(), uccl);
  for (std::size_t k = 0; k < 16; ++k) {
    EXPECT_EQ(nccl[k].dispatch_remote_tokens, 16384) << k;
    EXPECT_EQ(nccl[k].combine_remote_tokens, 16384) << k;
    EXPECT_GT(uccl[k].dispatch_remote_tokens, 4000) << k;
    EXPECT_LE(uccl[k].dispatch_remote_tokens, 4096) << k;
    EXPECT_GT(uccl[k].combine_remote_tokens, 0) << k;
  }
  // One node (ranks 0-7 of an EP8 group): nothing crosses the network.
  std::vector<MoeRankCost> one;
  DispatcherMoeCost(make("deepep-uccl", "", "p5en.48xlarge", 1))
      .layer_costs(0, 0, 0, {0, 1, 2, 3, 4, 5, 6, 7}, one);
  for (const MoeRankCost& c : one) {
    EXPECT_EQ(c.dispatch_remote_tokens, 0);
    EXPECT_EQ(c.combine_remote_tokens, 0);
  }
}

TEST(BalancedMoeCost, RemoteTokensAreTheOtherNodesShare) {
  // The fallback model (no dispatcher model): 4096 x 8 = 32768 copies spread evenly over 16 ranks, half of
  // them on the other node.
  const Scenario s = make("nccl-alltoall");
  const BalancedMoeCost m(s, std::make_shared<TopologyComm>(s), ComputeProfile::from_gpu(s.gpu), 16);
  std::vector<MoeRankCost> out;
  m.layer_costs(0, 0, 0, group16(), out);
  ASSERT_EQ(out.size(), 16u);
  for (const MoeRankCost& c : out) {
    EXPECT_EQ(c.dispatch_remote_tokens, 16384);
    EXPECT_EQ(c.combine_remote_tokens, 16384);
  }
  // A 12-rank group, 8 on node 0 and 4 on node 1: a node-0 rank sends 4/12 of its copies away, a node-1
  // rank 8/12 (rounded to whole tokens).
  m.layer_costs(0, 0, 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, out);
  ASSERT_EQ(out.size(), 12u);
  EXPECT_EQ(out[0].dispatch_remote_tokens, 10923);
  EXPECT_EQ(out[11].dispatch_remote_tokens, 21845);
}

TEST(DispatcherMoeCost, CarriesTheModelsHandshakeLatency) {
  // The fitted A2A scale leaves the handshake latency alone (ScaledMoeCost), so the seam reports it:
  // latency_rounds x the instance base latency, the same for every rank and inside its time; Megatron's
  // alltoall dispatch makes a second (probabilities) call with its own handshake.
  for (const std::string d : {"nccl-alltoall", "deepep-uccl"}) {
    const Scenario s = make(d);
    const DispatcherMoeCost m(s);
    std::vector<MoeRankCost> out;
    m.layer_costs(0, 0, 0, group16(), out);
    const double rounds =
        default_dispatcher_params(catalog().dispatcher(d)).get("latency_rounds", s.instance.name);
    const TimeNs latency = to_ns(rounds * s.instance.base_latency_s);
    ASSERT_GT(latency, 0) << d;
    const double calls =
        d == "nccl-alltoall" ? 1 + default_dispatcher_params(catalog().dispatcher(d)).get("probs_calls") : 1;
    for (const MoeRankCost& c : out) {
      EXPECT_EQ(c.dispatch_latency_ns, to_ns(calls * rounds * s.instance.base_latency_s)) << d;
      EXPECT_EQ(c.combine_latency_ns, latency) << d;
      EXPECT_GT(c.dispatch_ns, c.dispatch_latency_ns) << d;
    }
  }
}

TEST(DispatcherMoeCost, PredictionCarriesTheDispatcherWarnings) {
  // DeepEP v2 needs EFA-GDA; p5 has none (catalog gpu_initiated_rdma = false): proxy fallback warning.
  const Scenario p5 = make("deepep-v2-gin", "", "p5.48xlarge");
  PredictOptions o;
  o.seams.moe = std::make_shared<DispatcherMoeCost>(p5);
  EXPECT_EQ(
      o.seams.moe->warnings(),  // through the MoeCostModel interface
      std::vector<std::string>{"deepep-v2-gin: p5.48xlarge has no EFA-GDA (GPU-initiated RDMA); modelled "
                               "in proxy fallback mode (one proxy thread)"});
  EXPECT_EQ(predict(p5, o).warnings, o.seams.moe->warnings());
  EXPECT_EQ(ScaledMoeCost(o.seams.moe, 2.0, 1e-3).warnings(), o.seams.moe->warnings());  // fitted wrapper
  // Default options use the scenario's dispatcher too.
  EXPECT_EQ(predict(p5, PredictOptions{}).warnings, o.seams.moe->warnings());
  // p5en has EFA-GDA; nccl-alltoall has no limits at EP16; the balanced MoE cost has no dispatcher.
  EXPECT_TRUE(DispatcherMoeCost(make("deepep-v2-gin")).warnings().empty());
  EXPECT_TRUE(predicted_warnings(make("deepep-v2-gin")).empty());
  EXPECT_TRUE(predicted_warnings(make("nccl-alltoall", "", "p5.48xlarge")).empty());
  PredictOptions balanced;  // BalancedMoeCost: no dispatcher model, no warnings
  balanced.moe_cost = PredictOptions::MoeCost::balanced;
  EXPECT_TRUE(predict(p5, balanced).warnings.empty());
}

TEST(DispatcherMoeCost, Deterministic) {
  const std::string zipf = "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.0\nseed = 3\n";
  const DispatcherMoeCost a(make("deepep-uccl", zipf));
  const DispatcherMoeCost b(make("deepep-uccl", zipf));
  std::vector<MoeRankCost> x, y;
  for (int mb = 0; mb < 2; ++mb) {
    a.layer_costs(1, mb, 0, group16(), x);
    b.layer_costs(1, mb, 0, group16(), y);
    for (std::size_t k = 0; k < x.size(); ++k) {
      EXPECT_EQ(x[k].tokens, y[k].tokens);
      EXPECT_EQ(x[k].dispatch_ns, y[k].dispatch_ns);
      EXPECT_EQ(x[k].combine_ns, y[k].combine_ns);
    }
  }
  // Asking again (after other calls) gives the same answer: plans are a function of (layer, microbatch).
  a.layer_costs(1, 0, 0, group16(), x);
  b.layer_costs(3, 1, 0, group16(), y);
  b.layer_costs(1, 0, 0, group16(), y);
  for (std::size_t k = 0; k < x.size(); ++k) EXPECT_EQ(x[k].dispatch_ns, y[k].dispatch_ns);
  const Scenario s = make("nccl-alltoall", zipf);
  EXPECT_EQ(predicted_iteration(s), predicted_iteration(s));
}

// The builder prices skewed plans on several threads (build_workload's `threads`): one model shared by
// all of them, and the workload the same byte for byte as on one thread.
TEST(DispatcherMoeCost, WorkloadIndependentOfBuildThreads) {
  for (const std::string dispatcher : {"nccl-alltoall", "deepep-uccl"}) {
    const Scenario s = make(dispatcher, "[routing]\nkind = \"zipf\"\nzipf_exponent = 1.0\nseed = 5\n");
    WorkloadSeams seams;
    seams.moe = std::make_shared<DispatcherMoeCost>(s);
    const Workload one = build_workload(s, {}, seams, 1).workload;
    seams.moe = std::make_shared<DispatcherMoeCost>(s);
    const Workload four = build_workload(s, {}, seams, 4).workload;
    ASSERT_EQ(one.var_offset, four.var_offset) << dispatcher;
    ASSERT_EQ(one.var_durations.size(), four.var_durations.size()) << dispatcher;
    for (std::size_t i = 0; i < one.var_durations.size(); ++i)
      ASSERT_EQ(one.var_durations[i], four.var_durations[i]) << dispatcher << " slot " << i;
    ASSERT_EQ(one.programs.size(), four.programs.size());
    for (std::size_t p = 0; p < one.programs.size(); ++p) {
      ASSERT_EQ(one.programs[p].size(), four.programs[p].size());
      for (int i = 0; i < one.programs[p].size(); ++i) {
        const OpSpec& a = one.programs[p].ops()[static_cast<std::size_t>(i)];
        const OpSpec& b = four.programs[p].ops()[static_cast<std::size_t>(i)];
        ASSERT_EQ(a.duration, b.duration) << dispatcher << " op " << i;
        ASSERT_EQ(a.sms, b.sms) << dispatcher << " op " << i;
        ASSERT_EQ(a.net_load, b.net_load) << dispatcher << " op " << i;
      }
      ASSERT_EQ(one.programs[p].net_loads(), four.programs[p].net_loads());
    }
    PredictOptions o;
    o.threads = 3;
    const Prediction threaded = predict(s, o);
    o.threads = 1;
    EXPECT_EQ(threaded.engine.iteration, predict(s, o).engine.iteration) << dispatcher;
  }
}

TEST(DispatcherMoeCost, RejectsMismatchedGroup) {
  const DispatcherMoeCost m(make("nccl-alltoall"));
  std::vector<MoeRankCost> out;
  EXPECT_THROW(m.layer_costs(0, 0, 0, {0, 1, 2, 3}, out), std::logic_error);
}

}  // namespace
}  // namespace moetwin

namespace moetwin {
namespace {

// The routing plan's "node" is the dispatcher's NVLink reach (comm_cost.hpp a2a_nvlink_reach_gpus): on the
// UltraServer trays (4 GPUs, domain 72) EP64 is one NVLink group of 64 for NCCL's all-to-all (no network
// leg) and 16 nodes of 4 for DeepEP's node dedup; an EP group filling domains unequally is priced by its
// slowest domain.
TEST(DispatcherMoeCost, RoutingSpecFollowsTheNvlinkReach) {
  const auto tray = [](const std::string& dispatcher, int nodes, int pp) {
    const int world = 4 * nodes;
    std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 4\n";
    t += "[cluster]\ninstance = \"p6e-gb200.36xlarge\"\nnodes = " + std::to_string(nodes) + "\n";
    t += "[parallelism]\ntp = 1\npp = " + std::to_string(pp) +
         "\nep = 64\ndp = " + std::to_string(world / pp) + "\n";
    t += "[training]\nmicro_batch = 1\nglobal_batch = " + std::to_string(world / pp * 4) +
         "\nseq_length = 4096\nrecompute = \"none\"\n";
    t += "[dispatcher]\nname = \"" + dispatcher + "\"\n";
    return parse_scenario(t, "tray.toml", catalog());
  };
  const Scenario nccl = tray("nccl-alltoall", 16, 1);
  EXPECT_EQ(a2a_nvlink_reach_gpus(nccl), 72);
  EXPECT_EQ(routing_spec_for(nccl).ranks_per_node, 64);
  EXPECT_EQ(routing_spec_for(nccl).nodes(), 1);
  // HybridEP's TMA stage spans the domain as NCCL does (and runs on EFA: EP64 never leaves the domain).
  const Scenario hybridep = tray("hybridep", 16, 1);
  EXPECT_EQ(a2a_nvlink_reach_gpus(hybridep), 72);
  EXPECT_EQ(routing_spec_for(hybridep).nodes(), 1);
  // DeepEP v1's kernels reach the tray only. The scenario check refuses DeepEP on GB200 (Megatron-Bridge's
  // gate, catalog/dispatcher_gate.hpp), so the record is swapped in past the parser: the reach rule is the
  // kernels', whatever the gate says.
  Scenario deepep = nccl;
  deepep.dispatcher = catalog().dispatcher("deepep-nvshmem");
  EXPECT_EQ(a2a_nvlink_reach_gpus(deepep), 4);
  EXPECT_EQ(routing_spec_for(deepep).ranks_per_node, 4);
  EXPECT_EQ(routing_spec_for(deepep).nodes(), 16);
  // NCCL's EP64 on one domain: every rank's copies to the other 63 ranks go over NVLink, none remote.
  const DispatcherMoeCost cost(nccl);
  std::vector<int> group(64);
  for (int i = 0; i < 64; ++i) group[static_cast<std::size_t>(i)] = i;
  std::vector<MoeRankCost> out;
  cost.layer_costs(0, 0, 0, group, out);
  ASSERT_EQ(out.size(), 64u);
  for (const MoeRankCost& c : out) {
    EXPECT_EQ(c.dispatch_remote_tokens, 0);
    EXPECT_EQ(c.dispatch_network_s, 0.0f);
    EXPECT_GT(c.dispatch_nvlink_s, 0.0f);
  }
  // 32 trays, PP2: stage 1 (ranks 64..127) puts 8 ranks in the first 72-GPU domain and 56 in the second
  // (issue 52: plan exited 3 here). Priced by its slowest domain: shares of gcd(64, 8, 56) = 8 ranks.
  const Scenario unequal = tray("nccl-alltoall", 32, 2);
  EXPECT_EQ(routing_spec_for(unequal).ranks_per_node, 8);
  EXPECT_EQ(routing_spec_for(unequal).nodes(), 8);
  // Hand value: the 8 ranks of the small share send 56 of every 64 copies across the domains. Balanced
  // routing, 4096 tokens x top-8 = 32768 copies per rank, 512 to each of the 64 ranks: 56 x 512 = 28672
  // remote, as in the plan's shares of 8; the ranks of the large share are priced at the same 28672 (an upper
  // bound on their true 8 x 512 = 4096).
  const DispatcherMoeCost split(unequal);
  std::vector<int> stage1(64);
  for (int i = 0; i < 64; ++i) stage1[static_cast<std::size_t>(i)] = 64 + i;
  split.layer_costs(0, 0, 0, stage1, out);
  ASSERT_EQ(out.size(), 64u);
  for (const MoeRankCost& c : out) EXPECT_EQ(c.dispatch_remote_tokens, 28672);
  EXPECT_GT(out.front().dispatch_network_s, 0.0f);
}

}  // namespace
}  // namespace moetwin
