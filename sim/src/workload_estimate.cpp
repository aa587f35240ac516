// Workload size before the build (workload_estimate.hpp). The per-layer op counts are upper bounds of what
// StageBuilder emits (layer_ops.cpp, pipeline_program.cpp), checked against built workloads by
// sim/tests/workload_estimate_test.cpp (the estimate stays within [1, 2] x the built op count there).
#include "moetwin/sim/workload_estimate.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/engine/program.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"

namespace moetwin {
namespace {

// Ops one microbatch's pass of one decoder layer emits on a rank, forward + backward: attention block (TP
// all-gather, projections, core attention, output projection, reduce-scatter, norms), a dense MLP (AG,
// SwiGLU GEMMs, RS) or a MoE MLP (router, counts all-gather, permute, dispatch, expert GEMMs, shared expert,
// combine, unpermute); backward mirrors the forward. Measured on the built workloads of the shipped
// scenarios (sim/tests/workload_estimate_test.cpp): ~24 per MoE layer pass without recompute (Qwen3-30B,
// TP2), ~47 with full recompute (DeepSeek-V3 and Kimi-K2, MLA, TP8); these are upper bounds of them.
constexpr double kDenseLayerOps = 30;
constexpr double kMoeLayerOps = 36;
// A full recompute re-runs the whole layer forward before its backward (about half the pass again); a
// selective one re-runs core attention (two ops, rounded up).
constexpr double kFullRecomputeFactor = 1.5;
constexpr double kSelectiveRecomputeOps = 4;
// Per microbatch and chunk: embedding or loss ops, the P2P sends/receives and their syncs.
constexpr double kChunkOps = 24;
// Per stage: DP reduce-scatter / all-gather per chunk, optimizer step, stream joins.
constexpr double kStageOps = 64;
// Duration slots per MoE layer pass (dispatch, combine, permute, unpermute, the expert GEMMs, and the
// recompute's second forward, which reuses the first's slots): an upper bound of the VarReq entries.
// Measured on predict's workloads (2026-12-07, docs/2026-12-07-workload-estimate.md): DeepSeek-V3 on 4,096
// GPUs with full recompute, zipf routing, 64 microbatches: 2,832 entries per rank class of a stage with
// ~7.25 MoE layers, 6.1 per MoE layer pass.
constexpr double kMoeLayerVars = 7;
// Per microbatch and chunk: the P2P sends and receives whose times differ by rank; per stage: the DP
// collectives and stream joins.
constexpr double kChunkVars = 2;
constexpr double kStageVars = 16;
// Classes of equal ranks a stage's duration rows are stored for (add_var_durations): with routing drawn
// per (layer, microbatch, EP group) and priced per plan (skewed routing, the dispatcher cost), every rank
// of the stage can be its own class; otherwise only the collective entries whose times differ by a rank's
// place in its node split ranks (1 class per stage measured on 800,000 GPUs, balanced), at most one per
// GPU of a node.

// Bytes per op: the program's OpSpec, the engine's compiled copy and its per-stream state, with vector
// growth (x2).
constexpr double kOpBytes = 3.0 * sizeof(OpSpec) * 2;
// Bytes per duration entry: the workload's row and the engine's slot-major copy, 32 bits each
// (DurationTable: narrow while every op is under 2.1 s; a wider table doubles this, for a single op of
// more than 2.1 s, where the ops themselves are few).
constexpr double kDurationBytes = 4.0 * 2;
// Bytes per MoE cost-table entry (a pointer) and per priced cell (its index record).
constexpr double kMoeCellBytes = 8.0 + 40.0;
// Bytes per rank: the engine's rank, stream and statistics state, the rank-group tables, var_offset and
// rank_program. Measured: 642 MB peak RSS for the default scenario on 100,000 nodes (800,000 ranks,
// balanced, 8 microbatches), of which about 315 MB are the MoE table of the largest stage and the ops:
// ~400 B a rank, rounded up to 640 B for streams that grow with the layout.
constexpr double kRankBytes = 640;

// Decoder layers of chunk `c` that are MoE layers (the first model.dense_layers are dense).
int moe_layers_of(const ModelSpec& m, int first, int count) {
  if (m.experts == 0) return 0;
  const int dense = std::clamp(m.dense_layers - first, 0, count);
  return count - dense;
}

}  // namespace

WorkloadEstimate estimate_workload(const Scenario& s) {
  WorkloadEstimate e;
  const ParallelLayout& par = s.parallel;
  e.microbatches = std::max(1, s.training.microbatches(par));
  e.ranks = static_cast<std::int64_t>(par.world());
  const int pp = std::max(1, par.pp);
  e.stage_ranks = std::max<std::int64_t>(1, e.ranks / pp);
  const double M = static_cast<double>(e.microbatches);
  const double S = static_cast<double>(e.stage_ranks);
  PipelineLayout layout;
  try {
    layout = make_pipeline_layout(s.model, par, {s.source, 0});
  } catch (const InputError&) {
    // The builder will refuse it with its own message; estimate with an even split.
    layout = {};
  }
  const int mtp_moe = s.model.experts > 0 ? s.model.mtp_layers : 0;
  const bool per_plan = s.model.experts > 0 && s.routing.kind != RoutingKind::balanced;
  const double classes = per_plan ? S : std::min(S, static_cast<double>(std::max(1, s.instance.gpus)));
  double largest_moe_cells = 0;
  for (int stage = 0; stage < pp; ++stage) {
    double dense = 0, moe = 0, chunks = 0;
    if (!layout.chunks.empty()) {
      for (const PipelineChunk& c : layout.chunks) {
        if (c.stage != stage) continue;
        const int m = moe_layers_of(s.model, c.first_layer, c.decoder_layers) + (c.loss ? mtp_moe : 0);
        moe += m;
        dense += c.decoder_layers + (c.loss ? s.model.mtp_layers : 0) - m;
        chunks += 1;
      }
    } else {
      const double per = std::ceil(static_cast<double>(s.model.layers) / pp);
      moe = s.model.experts > 0 ? per : 0;
      dense = per - moe;
      chunks = std::max(1, par.vpp);
    }
    const double recompute = s.training.recompute == Recompute::full ? kFullRecomputeFactor : 1.0;
    const double selective = s.training.recompute == Recompute::selective ? kSelectiveRecomputeOps : 0.0;
    const double per_mb = (dense * (kDenseLayerOps * recompute + selective) +
                           moe * (kMoeLayerOps * recompute + selective) + chunks * kChunkOps);
    const double ops = M * per_mb + kStageOps;
    const double vars = M * (moe * kMoeLayerVars + chunks * kChunkVars) + kStageVars;
    e.ops += ops;
    e.durations += vars * classes;
    e.events += ops * S;
    largest_moe_cells = std::max(largest_moe_cells, moe * M * S);
  }
  e.moe_cells = largest_moe_cells;
  e.bytes = e.ops * kOpBytes + e.durations * kDurationBytes + e.moe_cells * kMoeCellBytes +
            static_cast<double>(e.ranks) * kRankBytes;
  return e;
}

double workload_limit_bytes() {
  const char* env = std::getenv("MOETWIN_MAX_WORKLOAD_GIB");
  if (env == nullptr || *env == '\0') return kDefaultWorkloadLimitGiB * 1073741824.0;
  char* end = nullptr;
  errno = 0;
  const double gib = std::strtod(env, &end);
  if (*end != '\0' || errno != 0 || !std::isfinite(gib) || !(gib > 0) || gib > 1e6)
    throw InputError({"environment", 0}, "MOETWIN_MAX_WORKLOAD_GIB", env, "a number of GiB in (0, 1e6]");
  return gib * 1073741824.0;
}

std::string describe(const WorkloadEstimate& e) {
  return concat({"ops ", format_significant(e.ops, 3), ", durations ", format_significant(e.durations, 3),
                 ", MoE cells ", format_significant(e.moe_cells, 3), ", events ",
                 format_significant(e.events, 3), ", ", format_significant(e.bytes / 1073741824.0, 3),
                 " GiB"});
}

void check_workload_size(const Scenario& s, const WorkloadEstimate& e, double limit_bytes) {
  if (e.bytes <= limit_bytes) return;
  throw InputError(
      {s.source, 0}, "workload", concat({format_significant(e.bytes / 1073741824.0, 3), " GiB"}),
      concat({"at most ", format_significant(limit_bytes / 1073741824.0, 3), " GiB (estimate: ", describe(e),
              "; ", std::to_string(e.microbatches), " microbatches on ", std::to_string(e.ranks),
              " GPUs). Use fewer microbatches (a smaller global_batch or a larger micro_batch x dp), fewer "
              "nodes, or raise the limit with MOETWIN_MAX_WORKLOAD_GIB=N if the machine has the memory; "
              "--trace-ranks narrows only the trace, not the replay"}));
}

}  // namespace moetwin
