// The mechanisms that make a prediction transfer across stacks and instances, each against a value
// computed by hand: NCCL's per-chunk cost at the stack's P2P chunk, Megatron's probabilities all-to-all,
// the dropless alltoall dispatcher's counts all-gather and host sync (absent with pad-to-capacity), and host
// time scaled by the instance CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/models/compute_model.hpp"
#include "moetwin/models/dispatcher_model.hpp"
#include "moetwin/models/dispatcher_moe_cost.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/dispatcher_fit.hpp"
#include "moetwin/sim/fitted_profile.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

using test_support::catalog;

// qwen3-30b-a3b (hidden 2048, 128 experts, top-8) on 2 p5en nodes, EP16, tp1, mb1, seq 4096, balanced:
// 4096 tokens x 8 = 32768 copies per rank, 2048 to each of 16 ranks, 8 of them on the other node:
// 2048 x 4096 B = 8 MiB per remote peer, 64 MiB over the rails.
Scenario make(const std::string& stack_table, const std::string& training_extra = "") {
  std::string t = "name = \"t\"\n[model]\nname = \"qwen3-30b-a3b\"\nlayers = 2\n";
  t += "[cluster]\ninstance = \"p5en.48xlarge\"\nnodes = 2\n";
  t += "[parallelism]\ntp = 1\npp = 1\nep = 16\ndp = 16\n";
  t += "[training]\nmicro_batch = 1\nglobal_batch = 16\nseq_length = 4096\n" + training_extra;
  t += "[dispatcher]\nname = \"nccl-alltoall\"\n" + stack_table;
  return parse_scenario(t, "test.toml", catalog());
}

std::vector<int> group16() {
  std::vector<int> g(16);
  for (int i = 0; i < 16; ++i) g[static_cast<std::size_t>(i)] = i;
  return g;
}

MoeRankCost cost(const Scenario& s, const std::map<std::string, double>& params) {
  std::vector<MoeRankCost> out;
  DispatcherMoeCost(s, params).layer_costs(0, 0, 0, group16(), out);
  return out.front();
}

const char* const kNemo = "[stack]\nname = \"nemo-26.04.01\"\n";                       // 128 KiB chunks
const char* const kMlm = "[stack]\nname = \"megatron-lm-core_r0.17.0-nccl2.28.9\"\n";  // 512 KiB on p5en

TEST(TransferMechanisms, StackDecidesTheP2pChunk) {
  EXPECT_DOUBLE_EQ(make(kNemo).stack.p2p_net_chunk_bytes, 131072.0);
  EXPECT_DOUBLE_EQ(make(kMlm).stack.p2p_net_chunk_bytes, 524288.0);
  EXPECT_TRUE(make("").stack.from_default);
  EXPECT_FALSE(make(kMlm).stack.from_default);
  EXPECT_DOUBLE_EQ(make("[stack]\nname = \"nemo-26.04.01\"\nnccl_p2p_net_chunksize_kib = 1024\n")
                       .stack.p2p_net_chunk_bytes,
                   1048576.0);
}

TEST(TransferMechanisms, NetChunkCostChargesTheChunksBeyondCalibration) {
  // 8 MiB per remote peer: 64 chunks of 128 KiB, 16 of 512 KiB (the calibration chunk): 48 more per peer
  // x 8 peers = 384 chunks x 2 us = 768 us, on dispatch and on combine.
  const std::map<std::string, double> params = {{"nccl-alltoall.net_chunk_s", 2e-6}};
  const MoeRankCost nemo = cost(make(kNemo), params);
  const MoeRankCost mlm = cost(make(kMlm), params);
  EXPECT_NEAR(static_cast<double>(nemo.dispatch_ns - mlm.dispatch_ns), 768000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(nemo.combine_ns - mlm.combine_ns), 768000.0, 2.0);
  // At the calibration chunk the bulk term is 0; only the probabilities call's one chunk per remote peer
  // remains (8 x 2 us), and the combine, which has no such call, is as without the term.
  EXPECT_NEAR(static_cast<double>(mlm.dispatch_ns - cost(make(kMlm), {}).dispatch_ns), 16000.0, 2.0);
  EXPECT_EQ(mlm.combine_ns, cost(make(kMlm), {}).combine_ns);
  // Another dispatcher's keys are ignored.
  EXPECT_EQ(cost(make(kNemo), {{"deepep-uccl.net_chunk_s", 2e-6}}).dispatch_ns,
            cost(make(kNemo), {}).dispatch_ns);
}

TEST(TransferMechanisms, ProbabilitiesAllToAllRidesOnDispatchOnly) {
  // The second all_to_all_single (fp32 probabilities, 4 B per copy): latency_rounds x base latency
  // (x 35 us) + per remote peer (8 x per_remote_peer_s) + the transfer x 4 / 4096 (64 MiB over 2 x 25 GB/s
  // = 1.34217728 ms -> 1.31072 us) more on dispatch than on combine (shipped terms: 195.52 us).
  const ParamSet terms = default_dispatcher_params(catalog().dispatcher("nccl-alltoall"));
  const double expected_ns =
      (terms.get("latency_rounds") * 35e-6 + 8 * terms.get("per_remote_peer_s") + 1.31072e-6) * 1e9;
  const MoeRankCost c = cost(make(kMlm), {});
  EXPECT_NEAR(static_cast<double>(c.dispatch_ns - c.combine_ns), expected_ns, 2.0);
}

bool has_label(const BuiltWorkload& w, const std::string& name) {
  for (const Program& p : w.workload.programs) {
    const auto& labels = p.labels();
    if (std::find(labels.begin(), labels.end(), name) != labels.end()) return true;
  }
  return false;
}

TEST(TransferMechanisms, DroplessGathersCountsPaddedDoesNot) {
  const BuiltWorkload dropless = build_workload(make(kNemo));
  const BuiltWorkload padded = build_workload(make(kMlm));
  EXPECT_FALSE(make(kNemo).training.moe_pad_to_capacity);
  EXPECT_TRUE(make(kMlm).training.moe_pad_to_capacity);
  EXPECT_TRUE(has_label(dropless, "ep.counts_allgather"));
  EXPECT_FALSE(has_label(padded, "ep.counts_allgather"));
  // The scenario can say otherwise than its stack's recipe.
  EXPECT_FALSE(make(kMlm, "moe_pad_to_capacity = false\n").training.moe_pad_to_capacity);
  // Host syncs: one per MoE layer forward (2 layers x 1 microbatch) when dropless, none when padded.
  const auto syncs = [](const BuiltWorkload& w) {
    int n = 0;
    for (const Program& p : w.workload.programs) {
      for (const OpSpec& op : p.ops()) n += op.sync == HostSync::op ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(syncs(dropless), 2);
  EXPECT_EQ(syncs(padded), 0);
}

// The first op labelled `name` on rank 0.
const OpSpec& first_op(const BuiltWorkload& w, const std::string& name) {
  const Program& p = w.workload.programs.front();
  const auto label = std::find(p.labels().begin(), p.labels().end(), name) - p.labels().begin();
  for (const OpSpec& op : p.ops()) {
    if (op.label == label) return op;
  }
  throw std::logic_error("no op " + name);
}

// An FP8 linear layer: the GEMM at the FP8 peak (catalog roofline here: no calibration seam) on FP8
// operands and a bf16 output, plus TE's cast-transpose of its input, plus one C++-issued launch.
// qwen3-30b attn.qkv at 4096 tokens: n = 32 x 128 + 2 x 4 x 128 = 5120, k = 2048; 2 x 4096 x 2048 x 5120
// FLOP at 1979 TFLOP/s x 0.77 = 56.37 us (bf16: 989 x 0.77 -> 112.8 us); the delayed-scaling cast reads 2
// and writes 1 + 1 bytes of 4096 x 2048 elements at 4.8 TB/s x 0.627 (kDelayedCastHbmFraction) = 11.15 us.
TEST(TransferMechanisms, Fp8LinearIsTheFp8GemmPlusItsCast) {
  const Scenario bf16 = make(kNemo);
  const Scenario fp8 = make(kNemo, "precision = \"fp8-hybrid\"\n");
  const BuiltWorkload wb = build_workload(bf16);
  const BuiltWorkload wf = build_workload(fp8);
  const OpSpec& b = first_op(wb, "attn.qkv");
  const OpSpec& f = first_op(wf, "attn.qkv");
  EXPECT_NEAR(static_cast<double>(b.duration), 112.8e3, 0.1e3);
  EXPECT_NEAR(static_cast<double>(f.duration), 56.37e3 + 11.15e3, 0.05e3);
  const double flops = 2.0 * 4096 * 2048 * 5120;
  const double bytes = 0.5 * 2 * (2048.0 * 5120 + 4096.0 * (2048 + 5120)) + 4096.0 * 5120;
  EXPECT_EQ(f.duration, to_ns(fp8_kernel_seconds(wf.compute, QuantRecipe::fp8_delayed, OpClass::gemm, flops,
                                                 bytes, {4096, 5120, 2048}) +
                              quantize_seconds(wf.compute, QuantRecipe::fp8_delayed, 4096.0 * 2048)));
  // One more C++-issued launch per FP8 linear op (at the p5en CPU's host factor).
  const SimProfile prof;
  EXPECT_EQ(f.host_ns - b.host_ns, to_ns(prof.grouped_gemm_launch_s * host_time_factor(prof, fp8.instance)));
  // The router and the attention core stay bf16.
  EXPECT_EQ(first_op(wb, "moe.router").duration, first_op(wf, "moe.router").duration);
  EXPECT_EQ(first_op(wb, "attn.core").duration, first_op(wf, "attn.core").duration);
}

TEST(TransferMechanisms, HostTimeScalesWithTheInstanceCpu) {
  SimProfile prof;
  prof.launch_s = 60e-6;
  prof.layer_host_s = 4e-3;
  // Fitted on p6-b300 (Xeon 8559C, Geekbench 6 single 2257); p5en's 8488C scores 2076, p5's 7R13 1668.
  EXPECT_DOUBLE_EQ(host_time_factor(prof, catalog().instance("p6-b300.48xlarge")), 1.0);
  EXPECT_DOUBLE_EQ(host_time_factor(prof, catalog().instance("p5en.48xlarge")), 2257.0 / 2076.0);
  const SimProfile p5 = host_scaled(prof, catalog().instance("p5.48xlarge"));
  EXPECT_DOUBLE_EQ(p5.launch_s, 60e-6 * 2257.0 / 1668.0);
  EXPECT_DOUBLE_EQ(p5.layer_host_s, 4e-3 * 2257.0 / 1668.0);
  EXPECT_DOUBLE_EQ(p5.grouped_gemm_launch_s, prof.grouped_gemm_launch_s * 2257.0 / 1668.0);
  // Unknown reference: unscaled.
  prof.host_reference_cpu_score = 0;
  EXPECT_DOUBLE_EQ(host_time_factor(prof, catalog().instance("p5.48xlarge")), 1.0);
}

TEST(TransferMechanisms, DeepEpTermsScaleWithTheInstancesPostingPath) {
  SimProfile prof;
  SimProfile::A2aFit uccl;
  uccl.latency_s = 2e-3;
  uccl.node_latency_s = 3e-4;
  uccl.remote_token_s = 5e-8;
  prof.a2a_by_dispatcher["deepep-uccl"] = uccl;
  prof.a2a_by_dispatcher["deepep-nvshmem"] = uccl;
  set_generic_a2a_from_dispatchers(prof);
  const InstanceSpec& p5 = catalog().instance("p5.48xlarge");
  const InstanceSpec& b300 = catalog().instance("p6-b300.48xlarge");
  // What one remote copy of test_low_latency.py's call (128 tokens x top-8 over 4 nodes, even spread)
  // costs, dispatch and combine, from the dispatcher's low-latency terms on that instance: the per-copy
  // model (per_copy_view: UCCL-EP's per-destination split of its low-latency kernels does not carry).
  const auto message = [](const std::string& name, const InstanceSpec& i) {
    DispatchHardware hw;
    hw.instance = i;
    hw.gpu = catalog().gpu(i.gpu);
    hw.nodes = 4;
    const auto m = make_dispatcher_model(per_copy_view(catalog().dispatcher(name)));
    const int rpn = i.gpus;
    const int ranks = 4 * rpn;
    const auto traffic = [&](bool fp8) {
      A2aTraffic t;
      t.ranks = ranks;
      t.ranks_per_node = rpn;
      t.nodes = 4;
      t.bytes_per_token = token_bytes(7168, fp8);
      RankLegs l;
      l.network_tokens_out = l.network_tokens_in = 1024 * (ranks - rpn) / ranks;
      l.network_out = l.network_in = static_cast<double>(l.network_tokens_out) * t.bytes_per_token;
      l.nvlink_out = l.nvlink_in = static_cast<double>(1024 * (rpn - 1) / ranks) * t.bytes_per_token;
      l.copies_out = l.copies_in = 1024;
      t.legs.assign(static_cast<std::size_t>(ranks), l);
      return t;
    };
    const auto d = m->low_latency_cost(traffic(true), A2aDirection::dispatch, hw);
    const auto c = m->low_latency_cost(traffic(false), A2aDirection::combine, hw);
    return static_cast<double>(d->duration_ns + c->duration_ns) * 1e-9 /
           (2.0 * static_cast<double>(1024 * (ranks - rpn) / ranks));
  };
  // Own terms: one UCCL-EP write on p5 over one on p6-b300 (the reference), both from the catalog's
  // instance-scoped per_message_s; the per-call term scales with the host CPU.
  const A2aTransfer t = a2a_transfer(prof, catalog().dispatcher("deepep-uccl"), p5);
  EXPECT_DOUBLE_EQ(t.proxy_factor, message("deepep-uccl", p5) / message("deepep-uccl", b300));
  EXPECT_GT(t.proxy_factor, 3.0);  // p5's low-latency rows: UCCL-EP copies cost several times p6-b300's
  EXPECT_DOUBLE_EQ(t.host_factor, 2257.0 / 1668.0);
  const SimProfile::A2aFit moved = transferred(uccl, t);
  EXPECT_DOUBLE_EQ(moved.node_latency_s, 3e-4 * t.proxy_factor);
  EXPECT_DOUBLE_EQ(moved.remote_token_s, 5e-8 * t.proxy_factor);
  EXPECT_DOUBLE_EQ(moved.latency_s, 2e-3 * t.host_factor);
  // The carry does not read the low-latency split: UCCL-EP's record with 4x its work per destination rank
  // carries the same factor.
  DispatcherSpec heavier = catalog().dispatcher("deepep-uccl");
  for (ModelParam& m : heavier.terms)
    if (m.name == "ll_peer_s") m.value *= 4;
  EXPECT_DOUBLE_EQ(a2a_transfer(prof, heavier, p5).proxy_factor, t.proxy_factor);
  // On the reference instance nothing moves.
  const A2aTransfer at_ref = a2a_transfer(prof, catalog().dispatcher("deepep-uccl"), b300);
  EXPECT_DOUBLE_EQ(at_ref.proxy_factor, 1.0);
  EXPECT_DOUBLE_EQ(at_ref.host_factor, 1.0);
  // A dispatcher without runs: its own write cost here over the median of its relatives' at the reference
  // (two relatives: the mean of the two).
  const InstanceSpec& b200 = catalog().instance("p6-b200.48xlarge");
  const A2aTransfer gin = a2a_transfer(prof, catalog().dispatcher("deepep-v2-gin"), b200);
  const double relatives = (message("deepep-uccl", b300) + message("deepep-nvshmem", b300)) / 2;
  EXPECT_DOUBLE_EQ(gin.reference_message_s, relatives);
  EXPECT_DOUBLE_EQ(gin.proxy_factor, message("deepep-v2-gin", b200) / relatives);
  // NCCL's all-to-all has no posting path: only the host factor applies.
  const A2aTransfer nccl = a2a_transfer(prof, catalog().dispatcher("nccl-alltoall"), p5);
  EXPECT_DOUBLE_EQ(nccl.proxy_factor, 1.0);
  const std::string factor = concat({"x", format_fixed(t.proxy_factor, 2)});
  EXPECT_NE(t.describe("own fitted", p5.name).find(factor), std::string::npos);
}

}  // namespace
}  // namespace moetwin
