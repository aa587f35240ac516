#include "moetwin/accounting/memory_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "moetwin/common/numbers.hpp"
#include "moetwin/test_support/parallel_layout.hpp"
#include "moetwin/test_support/tiny_models.hpp"

namespace moetwin {
namespace {

using test_support::tiny_gqa;

TEST(MemoryModel, LayerActivationsByHand) {
  const ModelSpec m = tiny_gqa();
  ParallelLayout p;
  p.tp = 2;
  // mb 1 x seq 4 = 4 tokens, 2 per GPU under sequence parallelism.
  // Attention: 2 B x 2 x (2h + q + 2kv + q = 40) = 160, softmax statistics 4 B x 2 heads x 2 = 16.
  // MoE MLP: 2 B x 2 x 2h = 64; experts 2 B x 2 x k 2 x (2h + 3 f_e = 28) = 224; router 4 x 2 x 4 x 2 = 64.
  const LayerActivations none = layer_activation_bytes(m, true, p, 1, 4, Recompute::none);
  EXPECT_DOUBLE_EQ(none.attention, 176);
  EXPECT_DOUBLE_EQ(none.mlp, 352);
  const LayerActivations selective = layer_activation_bytes(m, true, p, 1, 4, Recompute::selective);
  EXPECT_DOUBLE_EQ(selective.attention, 160);
  EXPECT_DOUBLE_EQ(selective.mlp, 352);
  const LayerActivations full = layer_activation_bytes(m, true, p, 1, 4, Recompute::full);
  EXPECT_DOUBLE_EQ(full.total(), 2.0 * 8 * 2);  // the layer input only
  // Dense SwiGLU MLP: 2 B x 2 x (2h + 3f = 64) = 256.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, p, 1, 4, Recompute::none).mlp, 256);
  // Expert tensor parallelism: each expert-TP rank holds etp x the token copies' hidden vectors.
  p.etp = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, true, p, 1, 4, Recompute::none).mlp,
                   64 + 2 * 2 * 2 * (32 + 12) + 64);
}

TEST(MemoryModel, MlaAttentionActivationsByHand) {
  const ModelSpec m = test_support::tiny_mla();
  ParallelLayout p;
  // 2h 16 + compressed (4 + 2 + 1) 7 + normed (4 + 2) 6 + Q,K 2 x 2 x 4 = 16 + V, out 2 x 2 x 2 = 8: 53
  // elements x 2 B x 4 tokens, plus 4 B x 2 heads x 4 tokens of softmax statistics.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, false, p, 2, 2, Recompute::none).attention, 53 * 2 * 4 + 32);
}

TEST(MemoryModel, OneFOneBInFlight) {
  const std::vector<double> one{1.0};
  EXPECT_EQ(peak_in_flight(4, 1, 0, 8, one).per_chunk, std::vector<int>{4});
  EXPECT_EQ(peak_in_flight(4, 1, 1, 8, one).per_chunk, std::vector<int>{3});
  EXPECT_EQ(peak_in_flight(4, 1, 3, 8, one).per_chunk, std::vector<int>{1});
  EXPECT_EQ(peak_in_flight(4, 1, 0, 2, one).per_chunk, std::vector<int>{2});  // capped by microbatches
}

TEST(MemoryModel, InterleavedInFlight) {
  // pp 2, vpp 2, 4 microbatches, stage 0: warm-up (2-1) x 2 + (2-1) x 2 = 4 forwards (chunks 0,0,1,1),
  // then the first steady forward (chunk 0) before the first backward: 3 of chunk 0, 2 of chunk 1.
  EXPECT_EQ(peak_in_flight(2, 2, 0, 4, {1.0, 1.0}).per_chunk, (std::vector<int>{3, 2}));
  EXPECT_EQ(peak_in_flight(2, 2, 0, 4, {1.0, 10.0}).per_chunk, (std::vector<int>{3, 2}));
  // Stage 1: warm-up 2 (chunk 0 twice), then one more forward (chunk 1).
  EXPECT_EQ(peak_in_flight(2, 2, 1, 4, {1.0, 1.0}).per_chunk, (std::vector<int>{2, 1}));
  // microbatches == pp: all forwards run first.
  EXPECT_EQ(peak_in_flight(2, 2, 1, 2, {1.0, 1.0}).per_chunk, (std::vector<int>{2, 2}));
  // The brief's count: the first stage holds (pp - 1) x 2 + (vpp - 1) x pp + 1 chunk-microbatches.
  EXPECT_EQ(peak_in_flight(8, 2, 0, 16, {1.0, 1.0}).total(), 7 * 2 + 8 + 1);
  EXPECT_EQ(peak_in_flight(4, 2, 0, 8, {1.0, 1.0}).total(), 3 * 2 + 4 + 1);
}

// The steady phase repeats every pp x vpp steps, so one period gives the peak: the same holding as a
// step-by-step replay of every microbatch, for any microbatch count, and a 2^30 global batch answers at
// once (issue 55: 7 s before the size guard could refuse it).
// Megatron's schedule replayed pass by pass over every microbatch (what peak_in_flight did before).
std::vector<int> replayed_peak(int pp, int vpp, int stage, int microbatches,
                               const std::vector<double>& bytes) {
  const int total = microbatches * vpp;
  const int warmup = vpp == 1             ? std::min(pp - stage - 1, total)
                     : microbatches == pp ? total
                                          : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  const int group = pp * vpp;
  const auto chunk = [&](int k) { return vpp == 1 ? 0 : (k % group) / pp; };
  std::vector<int> held(static_cast<std::size_t>(vpp), 0), best = held;
  double now = 0, peak = -1;
  const auto forward = [&](int k) {
    ++held[static_cast<std::size_t>(chunk(k))];
    now += bytes[static_cast<std::size_t>(chunk(k))];
    if (now > peak) {
      peak = now;
      best = held;
    }
  };
  for (int k = 0; k < warmup; ++k) forward(k);
  for (int i = 0; i < total - warmup; ++i) {
    forward(warmup + i);
    --held[static_cast<std::size_t>(vpp - 1 - chunk(i))];
    now -= bytes[static_cast<std::size_t>(vpp - 1 - chunk(i))];
  }
  return best;
}

TEST(MemoryModel, InFlightPeakNeedsOnlyOnePeriod) {
  for (const int pp : {1, 2, 3, 4, 8}) {
    for (const int vpp : {1, 2, 3}) {
      std::vector<double> bytes;
      for (int v = 0; v < vpp; ++v) bytes.push_back(1.0 + 0.37 * v);
      for (int stage = 0; stage < pp; ++stage) {
        for (const int microbatches : {1, pp, 2 * pp + 1, 8 * pp, 13 * pp, 1000 * pp}) {
          if (vpp > 1 && microbatches % pp != 0) continue;  // Megatron's interleaved schedule needs it
          EXPECT_EQ(peak_in_flight(pp, vpp, stage, microbatches, bytes).per_chunk,
                    replayed_peak(pp, vpp, stage, microbatches, bytes))
              << "pp " << pp << " vpp " << vpp << " stage " << stage << " microbatches " << microbatches;
        }
      }
    }
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(peak_in_flight(4, 2, 0, 1 << 30, {1.0, 1.0}).total(), 3 * 2 + 4 + 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(MemoryModel, DeepEpBuffersByHand) {
  // hidden 7168, EP 32, 20 SMs -> 10 channels, 8 NVLink peers, 4 RDMA ranks, 288 NVLink receive tokens.
  // Token slot: 14336 + 8 + 1024 + 512 + 512 = 16392 B.
  const double nvl = 10.0 * 8 * (2 * 4 + 3) * 4 + 10.0 * 8 * 288 * 16392;
  const double rdma = 10.0 * 4 * 18 * 2 * 4 + 10.0 * 4 * 128 * 2 * (16392 + 16);
  EXPECT_DOUBLE_EQ(deepep_buffer_bytes(7168, 32, 20), nvl + rdma);
  EXPECT_NEAR(deepep_buffer_bytes(7168, 32, 20) / 1e6, 545.7, 0.1);
  // Inside one node: NVLink buffer only.
  EXPECT_DOUBLE_EQ(deepep_buffer_bytes(7168, 8, 20), 10.0 * 8 * 5 * 4 + 10.0 * 8 * 256 * 16392);
}

// Two stages of one MoE layer each, tp 1, dp 2, ep 2 (edp 1), mb 1, gbs 4 (2 microbatches), seq 4.
Scenario tiny_scenario() {
  Scenario sc;
  sc.model = tiny_gqa();
  sc.gpu.hbm_bytes = 7.0 * kGiB;
  sc.parallel.tp = 1;
  sc.parallel.pp = 2;
  sc.parallel.dp = 2;
  sc.parallel.ep = 2;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 4;
  sc.training.seq_length = 4;
  sc.training.recompute = Recompute::none;
  sc.dispatcher.transport = DispatcherTransport::nccl;
  return sc;
}

TEST(MemoryModel, StagesByHand) {
  const Scenario sc = tiny_scenario();
  const PipelineLayout layout = make_pipeline_layout(sc.model, sc.parallel, InputLocation{"t", 0});
  const MemoryEstimate est = estimate_memory(sc, layout);
  ASSERT_EQ(est.stages.size(), 2u);
  const StageMemory& s0 = est.stages[0];
  // Stage 0: attention 200 + norm 8 + router 32 + embedding 16 x 8 = 368 dense; 2 experts x 96 = 192.
  EXPECT_EQ(s0.dense_params, 368);
  EXPECT_EQ(s0.expert_params, 192);
  EXPECT_DOUBLE_EQ(s0.weights, 2.0 * 560);
  EXPECT_DOUBLE_EQ(s0.gradients, 4.0 * 560);
  EXPECT_DOUBLE_EQ(s0.optimizer, 12.0 * (368 / 2.0 + 192 / 1.0));  // dense over dp 2, experts over edp 1
  // Layer (4 tokens, tp 1): attention 2 x 40 x 4 + 4 x 2 x 4 = 352; MLP 128 + 448 + 128 = 704.
  EXPECT_EQ(s0.in_flight.total(), 2);  // 1F1B stage 0 of 2, 2 microbatches
  EXPECT_DOUBLE_EQ(s0.activations, 2 * 1056.0);
  EXPECT_DOUBLE_EQ(s0.logits, 0);
  EXPECT_DOUBLE_EQ(s0.dispatcher, 2.0 * 2 * 4 * 2 * 8);  // send + receive, k copies of 4 tokens
  EXPECT_DOUBLE_EQ(s0.total(), 10240 + kMemoryReserveBytes);
  const StageMemory& s1 = est.stages[1];
  // Stage 1: layer 368 - 128 + output layer 128 + final norm 8.
  EXPECT_EQ(s1.dense_params, 376);
  EXPECT_EQ(s1.in_flight.total(), 1);
  EXPECT_DOUBLE_EQ(s1.activations, 1056 + 2.0 * 2 * 8 * 4);  // + final norm input/output
  // Softmax kept in fp32 for 4 tokens x 16 vocab, plus the transient bf16 logits.
  EXPECT_DOUBLE_EQ(s1.logits, 4.0 * 64 + 2.0 * 64);
  EXPECT_DOUBLE_EQ(s1.total(), 1136 + 2272 + 4560 + 1184 + 384 + 256 + kMemoryReserveBytes);
  EXPECT_EQ(est.worst_stage, 0);
  EXPECT_TRUE(est.fits);

  Scenario small = sc;
  small.gpu.hbm_bytes = 6.0 * kGiB;  // the reserve alone fills it
  EXPECT_FALSE(estimate_memory(small, layout).fits);
  Scenario plain = sc;
  plain.training.distributed_optimizer = false;
  EXPECT_DOUBLE_EQ(estimate_memory(plain, layout).stages[0].optimizer, 12.0 * 560);
  Scenario full = sc;
  full.training.recompute = Recompute::full;
  // Two layer inputs (2 x 8 x 4 B) plus one layer's activations for the recompute.
  EXPECT_DOUBLE_EQ(estimate_memory(full, layout).stages[0].activations, 2 * 64.0 + 1056);
}

// Catalog-scale cases.
Scenario catalog_scenario(const Catalog& c, const std::string& model, const std::string& instance, int nodes,
                          ParallelLayout p, int mb, int gbs, Recompute r, const std::string& dispatcher) {
  Scenario sc;
  sc.model = c.model(model);
  sc.instance = c.instance(instance);
  sc.gpu = c.gpu(sc.instance.gpu);
  sc.nodes = nodes;
  sc.parallel = p;
  sc.training.micro_batch = mb;
  sc.training.global_batch = gbs;
  sc.training.seq_length = 4096;
  sc.training.recompute = r;
  sc.dispatcher = c.dispatcher(dispatcher);
  return sc;
}

// FP8 recipes add Transformer Engine's FP8 weight copy and its transpose (1 + 1 B per parameter) and the
// amax histories (6 GEMMs x 3 tensors x 1024 x 4 B per layer); bf16 adds nothing.
TEST(MemoryModel, Fp8WeightCopiesAndAmaxHistoriesByHand) {
  Scenario sc = tiny_scenario();
  const PipelineLayout layout = make_pipeline_layout(sc.model, sc.parallel, InputLocation{"t", 0});
  EXPECT_DOUBLE_EQ(estimate_memory(sc, layout).stages[0].fp8, 0);
  const double bf16_total = estimate_memory(sc, layout).stages[0].total();
  sc.training.precision = Precision::fp8_hybrid;
  const StageMemory s0 = estimate_memory(sc, layout).stages[0];
  const double layers = s0.decoder_layers + s0.mtp_layers;
  EXPECT_DOUBLE_EQ(s0.fp8, 2.0 * 560 + layers * 6 * 3 * 1024 * 4);
  EXPECT_DOUBLE_EQ(s0.total(), bf16_total + s0.fp8);
}

TEST(MemoryModel, KimiK2OnThirtyTwoP5DoesNotFit) {
  const Catalog c = Catalog::load(std::string(MOETWIN_SOURCE_DIR) + "/catalog/data");
  const Scenario sc =
      catalog_scenario(c, "kimi-k2", "p5.48xlarge", 32, test_support::parallel_layout(8, 8, 32, 4), 1, 256,
                       Recompute::full, "nccl-alltoall");
  const MemoryEstimate est = estimate_memory(sc, make_pipeline_layout(sc.model, sc.parallel, {"t", 0}));
  EXPECT_FALSE(est.fits);
  EXPECT_DOUBLE_EQ(est.hbm_bytes, 80e9);
  // 12 experts x 8 MoE layers x 44 M parameters on a middle stage, edp 1: 18 B each is ~76 GB alone.
  EXPECT_EQ(est.worst().expert_params, 12LL * 8 * 3 * 7168 * 2048);
  EXPECT_GT(est.worst().total(), 85e9);
  // The same job on p6-b300 (288 GB) fits.
  Scenario b300 = sc;
  b300.instance = c.instance("p6-b300.48xlarge");
  b300.gpu = c.gpu(b300.instance.gpu);
  EXPECT_TRUE(estimate_memory(b300, make_pipeline_layout(b300.model, b300.parallel, {"t", 0})).fits);
}

// The HBM verdict as a warning: silent when the layout fits, GiB needed and available when it does not.
TEST(MemoryModel, HbmFitWarningNamesNeededAndAvailable) {
  Scenario s;
  s.gpu.name = "H100-SXM";
  MemoryEstimate m;
  m.stages.resize(2);
  m.stages[1].weights = 79.9 * kGiB;
  m.worst_stage = 1;
  m.hbm_bytes = 74.5 * kGiB;
  m.fits = false;
  EXPECT_EQ(hbm_fit_warning(s, m),
            "does not fit in HBM: 79.9 GiB needed per GPU on stage 1 (the most loaded), 74.5 GiB available "
            "(H100-SXM); `moetwin inspect` gives the breakdown");
  m.fits = true;
  EXPECT_EQ(hbm_fit_warning(s, m), "");
}

}  // namespace
}  // namespace moetwin
