// TP communication overlap (tp_comm_overlap.hpp): the exposed time of a chunked overlap by hand, the
// SM margin, the eight overlapped collectives of a TP4 Llama layer priced by those formulas against the
// non-overlapped replay's own collective and GEMM times, and the iteration shortened by exactly their sum.
#include "moetwin/sim/tp_comm_overlap.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"
#include "moetwin/sim/workload.hpp"
#include "moetwin/test_support/shipped_catalog.hpp"

namespace moetwin {
namespace {

TEST(TpCommOverlap, CommShorterThanGemmExposesOneChunk) {
  // TP4: a 1 ms all-gather split in 4 chunks of 0.25 ms pipelined with a 2 ms GEMM (4 chunks of 0.5 ms):
  // the first chunk arrives before any GEMM chunk can start, every later chunk hides under the GEMM.
  EXPECT_DOUBLE_EQ(pipelined_exposed_s(1e-3, 2e-3, 4), 0.25e-3);
  // Equal times: makespan c + 3 max(c, g) + g = 4 x 0.5 + 0.5 ms, 0.5 ms beyond the GEMM = one chunk.
  EXPECT_DOUBLE_EQ(pipelined_exposed_s(2e-3, 2e-3, 4), 0.5e-3);
  // One chunk: no pipelining, the whole collective is exposed.
  EXPECT_DOUBLE_EQ(pipelined_exposed_s(1e-3, 2e-3, 1), 1e-3);
}

TEST(TpCommOverlap, CommLongerThanGemmExposesTheExcessPlusTheLastGemmChunk) {
  // 3 ms of communication against 2 ms of GEMM in 4 chunks: c = 0.75, g = 0.5 ms; makespan
  // 0.75 + 3 x 0.75 + 0.5 = 3.5 ms, i.e. 1.5 ms beyond the GEMM = the 1 ms excess + the last GEMM chunk.
  EXPECT_DOUBLE_EQ(pipelined_exposed_s(3e-3, 2e-3, 4), 1.5e-3);
  // No GEMM to hide under: all of it.
  EXPECT_DOUBLE_EQ(pipelined_exposed_s(3e-3, 0, 4), 3e-3);
  // Bulk (the whole collective beside an independent GEMM): the excess only, none when shorter.
  EXPECT_DOUBLE_EQ(bulk_exposed_s(3e-3, 2e-3), 1e-3);
  EXPECT_DOUBLE_EQ(bulk_exposed_s(1e-3, 2e-3), 0);
  EXPECT_DOUBLE_EQ(exposed_s(TpOverlapMethod::bulk, 3e-3, 2e-3, 4), 1e-3);
  EXPECT_DOUBLE_EQ(exposed_s(TpOverlapMethod::pipeline, 3e-3, 2e-3, 4), 1.5e-3);
  EXPECT_DOUBLE_EQ(exposed_s(TpOverlapMethod::ring_exchange, 1e-3, 2e-3, 4), 0.25e-3);
}

TEST(TpCommOverlap, PipelineAndBulkGemmsLoseTheOverlapSms) {
  // B200: 148 SMs; 16 held by the userbuffers kernels: 2 ms x 148 / 132 = 2.2424 ms.
  EXPECT_DOUBLE_EQ(overlapped_gemm_s(TpOverlapMethod::pipeline, 2e-3, 148, 16), 2e-3 * 148.0 / 132.0);
  EXPECT_DOUBLE_EQ(overlapped_gemm_s(TpOverlapMethod::bulk, 2e-3, 148, 16), 2e-3 * 148.0 / 132.0);
  // Ring exchange moves its chunks with the copy engines: the GEMM keeps every SM.
  EXPECT_DOUBLE_EQ(overlapped_gemm_s(TpOverlapMethod::ring_exchange, 2e-3, 148, 16), 2e-3);
  EXPECT_THROW(overlapped_gemm_s(TpOverlapMethod::pipeline, 2e-3, 148, 148), std::invalid_argument);
  EXPECT_THROW(overlapped_gemm_s(TpOverlapMethod::pipeline, 2e-3, 148, 0), std::invalid_argument);
  EXPECT_THROW(pipelined_exposed_s(1e-3, 2e-3, 0), std::invalid_argument);
  EXPECT_THROW(pipelined_exposed_s(-1e-3, 2e-3, 4), std::invalid_argument);
  EXPECT_THROW(bulk_exposed_s(1e-3, -2e-3), std::invalid_argument);
  // The default lies inside its bounds.
  EXPECT_GE(SimProfile{}.tp_overlap_sms, kTpOverlapSmsMin);
  EXPECT_LE(SimProfile{}.tp_overlap_sms, kTpOverlapSmsMax);
}

using test_support::catalog;

// A Llama 3 model cut to 2 layers on one DGX B200, TP4 DP2, one microbatch at seq 8192; DP collectives after
// the backward (nothing overlaps the layer's ops but TE's userbuffers).
std::string llama_text(const std::string& model, const std::string& training) {
  return "name = \"t\"\n[model]\nname = \"" + model +
         "\"\nlayers = 2\ndense_layers = 2\n[cluster]\ninstance = \"dgx-b200\"\nnodes = 1\n"
         "[parallelism]\ntp = 4\npp = 1\nvpp = 1\nep = 1\netp = 1\ncp = 1\ndp = 2\n"
         "[training]\nmicro_batch = 1\nglobal_batch = 2\nseq_length = 8192\noverlap_grad_reduce = false\n"
         "overlap_param_gather = false\n" +
         training;
}
Scenario llama(bool overlap, const std::string& precision = "bf16", const std::string& model = "llama3-8b") {
  return parse_scenario(llama_text(model, "precision = \"" + precision +
                                              "\"\ntp_comm_overlap = " + (overlap ? "true" : "false") + "\n"),
                        "test.toml", catalog());
}

// No host time at all: the GPU's stream is the iteration.
SimProfile no_host() {
  SimProfile p;
  p.host_reference_cpu_score = 0;
  p.launch_s = 0;
  p.backward_launch_s = 0;
  p.grouped_gemm_launch_s = 0;
  return p;
}

// Durations of rank 0's ops labelled `label`, in issue order (every op here has one duration for all ranks).
std::vector<TimeNs> durations(const BuiltWorkload& b, const std::string& label) {
  const Program& prog = b.workload.programs.at(static_cast<std::size_t>(b.workload.rank_program.at(0)));
  std::vector<TimeNs> out;
  for (const OpSpec& op : prog.ops()) {
    if (prog.labels().at(static_cast<std::size_t>(op.label)) != label) continue;
    EXPECT_LT(op.var_slot, 0) << label;
    out.push_back(op.duration);
  }
  return out;
}

double s_of(TimeNs ns) {
  return static_cast<double>(ns) * 1e-9;
}

// One overlapped pair: the collective's label, its GEMM's, the method and the GEMM's share.
struct Pair {
  const char* comm;
  const char* gemm;
  TpOverlapMethod method;
  double share;
};
// tp_comm_overlap.hpp's table (TE initialize_ub defaults).
const std::vector<Pair>& pairs() {
  static const std::vector<Pair> p = {
      {"tp.ag.attn", "attn.qkv", TpOverlapMethod::ring_exchange, 1},
      {"tp.rs.attn", "attn.out_proj", TpOverlapMethod::pipeline, 1},
      {"tp.ag.mlp", "mlp.dense", TpOverlapMethod::ring_exchange, 2.0 / 3.0},
      {"tp.rs.mlp", "mlp.dense", TpOverlapMethod::pipeline, 1.0 / 3.0},
      {"tp.ag.attn_bwd", "attn.out_proj_bwd", TpOverlapMethod::ring_exchange, 0.5},
      {"tp.rs.attn_bwd", "attn.qkv_bwd", TpOverlapMethod::bulk, 0.5},
      {"tp.ag.mlp_bwd", "mlp.dense_bwd", TpOverlapMethod::ring_exchange, 1.0 / 6.0},
      {"tp.rs.mlp_bwd", "mlp.dense_bwd", TpOverlapMethod::bulk, 1.0 / 3.0},
  };
  return p;
}

TEST(TpCommOverlap, OffByDefaultAndEveryOpUnchanged) {
  const Scenario off = llama(false);
  EXPECT_FALSE(off.training.tp_comm_overlap);
  const BuiltWorkload a =
      build_workload(parse_scenario(llama_text("llama3-8b", ""), "t.toml", catalog()), no_host());
  const BuiltWorkload b = build_workload(off, no_host());
  for (const Pair& pr : pairs()) {
    EXPECT_EQ(durations(a, pr.comm), durations(b, pr.comm)) << pr.comm;
    EXPECT_EQ(durations(a, pr.gemm), durations(b, pr.gemm)) << pr.gemm;
  }
}

// Each of the eight collectives of a TP4 layer lasts its exposed time against its GEMM share, the shares
// overlapped by pipeline / bulk kernels are slowed by 148 / (148 - 16), and the iteration shortens by what
// the collectives hide less what the GEMMs lose. Counts the pipelined pairs whose communication is shorter
// (one chunk exposed) and longer (the excess and the last GEMM chunk exposed) than their GEMM.
struct Regimes {
  int shorter = 0;
  int longer = 0;
};
Regimes check_layer(const std::string& model, const std::string& precision) {
  const SimProfile prof = no_host();
  const BuiltWorkload off = build_workload(llama(false, precision, model), prof);
  const BuiltWorkload on = build_workload(llama(true, precision, model), prof);
  const int sms = off.compute.sms;
  EXPECT_EQ(sms, 148);  // B200 (catalog)
  const double margin = static_cast<double>(sms) / (sms - prof.tp_overlap_sms);
  double saved_s = 0;  // per op pair, summed over the 2 layers' forward and backward
  Regimes r;
  for (const Pair& pr : pairs()) {
    const std::vector<TimeNs> c_off = durations(off, pr.comm), c_on = durations(on, pr.comm);
    const std::vector<TimeNs> g_off = durations(off, pr.gemm);
    EXPECT_EQ(c_off.size(), 2u) << pr.comm;  // one per layer
    EXPECT_EQ(c_on.size(), 2u) << pr.comm;
    EXPECT_EQ(g_off.size(), 2u) << pr.gemm;
    if (c_off.size() != 2 || c_on.size() != 2 || g_off.size() != 2) return r;
    for (std::size_t i = 0; i < 2; ++i) {
      const double c = s_of(c_off[i]);
      const double share = s_of(g_off[i]) * pr.share;
      const double g = pr.method == TpOverlapMethod::ring_exchange ? share : share * margin;
      // The test reads the GEMM op's time rounded up to ns (and scaled by the margin): a few ns off.
      EXPECT_NEAR(s_of(c_on[i]), exposed_s(pr.method, c, g, 4), 4e-9) << pr.comm;
      EXPECT_LT(c_on[i], c_off[i]) << pr.comm;
      saved_s += c - s_of(c_on[i]) - (g - share);
      if (pr.method == TpOverlapMethod::bulk) continue;
      if (c < g) {
        EXPECT_NEAR(s_of(c_on[i]), c / 4, 1e-9) << pr.comm;  // one of the 4 chunks
        ++r.shorter;
      } else {
        EXPECT_NEAR(s_of(c_on[i]), c - g + g / 4, 4e-9) << pr.comm;  // the excess + the last GEMM chunk
        ++r.longer;
      }
    }
  }
  // The GEMM ops: the attention's QKV (ring exchange) unchanged, the output projection slowed whole, the
  // MLP's fc2 third slowed.
  EXPECT_EQ(durations(on, "attn.qkv"), durations(off, "attn.qkv"));
  const double proj = s_of(durations(off, "attn.out_proj")[0]);
  EXPECT_NEAR(s_of(durations(on, "attn.out_proj")[0]), proj * margin, 2e-9);
  const double mlp = s_of(durations(off, "mlp.dense")[0]);
  EXPECT_NEAR(s_of(durations(on, "mlp.dense")[0]), mlp * 2 / 3 + mlp / 3 * margin, 2e-9);

  PredictOptions o;
  o.profile = prof;
  o.calibration = false;
  const double t_off = predict(llama(false, precision, model), o).iteration_s;
  const double t_on = predict(llama(true, precision, model), o).iteration_s;
  EXPECT_GT(saved_s, 0);
  // 32 overlapped ops and their GEMMs, each a few ns off the test's reading of the rounded times.
  EXPECT_NEAR(t_off - t_on, saved_s, 256e-9) << model << " " << precision;
  return r;
}

// Llama 3 70B (hidden 8192, TP4 QKV width 2560): every pipelined collective on NVLink is shorter than its
// GEMM share, so each exposes one chunk.
TEST(TpCommOverlap, Tp4LayerCollectivesExposeOneChunkAndTheIterationShortens) {
  const Regimes r = check_layer("llama3-70b", "bf16");
  // 6 pipelined pairs (4 forward, 2 backward; the 2 bulk ones are not counted) x 2 layers.
  EXPECT_EQ(r.shorter, 12);
  EXPECT_EQ(r.longer, 0);
}

// Llama 3 8B in FP8 (GEMMs twice as fast, the collectives as long): some collectives outlast their GEMM
// share and expose the excess; the linears keep their cast-transpose inside the overlapped GEMM time.
TEST(TpCommOverlap, Fp8CollectivesLongerThanTheirGemmExposeTheExcess) {
  const Regimes r = check_layer("llama3-8b", "fp8-current");
  EXPECT_GT(r.longer, 0);
  EXPECT_EQ(r.shorter + r.longer, 12);
}

}  // namespace
}  // namespace moetwin
