#include "moe_pricing.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "moetwin/common/parallel_for.hpp"

namespace moetwin::moe_pricing {
namespace {

// The cost of a cell no MoE cost answers (none is left so: every cell of the stage is priced).
const MoeRankCost kNoCost{};

}  // namespace

StageMoeCosts price_stage(const MoeCostModel& moe, const RankGroups& groups,
                          const std::vector<int>& moe_layers, int stage, int microbatches, int threads) {
  const auto L = moe_layers.size();
  const auto M = static_cast<std::size_t>(microbatches);
  const int S = groups.stage_size;
  const RankGroups& g = groups;
  StageMoeCosts out;
  // What the cells of a layer share (skewed routing's per-layer statistics), layers spread over the
  // threads before the cells are.
  moe.prepare_layers(moe_layers, threads);
  // Pointers into class_costs and answers (stable storage): ranks and cells that share an answer share
  // its entries, 8 bytes a cell instead of a copy.
  out.microbatches = M;
  out.stage_size = static_cast<std::size_t>(S);
  out.table.assign(L * M * static_cast<std::size_t>(S), &kNoCost);
  std::vector<const MoeRankCost*>& table = out.table;
  // Costs by (EP group, cost class): one call per class and group (MoeCostModel::cost_class), made in
  // cell order; the cells without a class (skewed routing: every cell is its own random plan) are
  // priced afterwards on `threads` threads, each into its own slot, so the table does not depend on the
  // thread count.
  struct Cell {
    std::size_t li, mb, gi;
    const std::vector<MoeRankCost>* costs;  // null: unclassed, priced into `answers` below
    std::size_t answer;
  };
  std::vector<Cell> cells;
  std::vector<MoeRankCost> scratch;
  auto& class_costs = out.class_costs;
  std::size_t unclassed = 0;
  for (std::size_t li = 0; li < L; ++li) {
    for (std::size_t mb = 0; mb < M; ++mb) {
      for (std::size_t gi = 0; gi < g.ep.size(); ++gi) {
        const auto& members = g.ep[gi];
        if (members.front() / S != stage) continue;
        const int layer = moe_layers[li];
        const std::int64_t key = moe.cost_class(layer, static_cast<int>(mb), static_cast<int>(gi));
        if (key < 0) {
          cells.push_back(Cell{li, mb, gi, nullptr, unclassed++});
          continue;
        }
        auto hit = class_costs.find({gi, key});
        if (hit == class_costs.end()) {
          moe.layer_costs(layer, static_cast<int>(mb), static_cast<int>(gi), members, scratch);
          if (scratch.size() != members.size()) throw std::logic_error("MoeCostModel: wrong number of ranks");
          hit = class_costs.emplace(std::make_pair(gi, key), scratch).first;
        }
        cells.push_back(Cell{li, mb, gi, &hit->second, 0});
      }
    }
  }
  out.answers.resize(unclassed);
  std::vector<std::vector<MoeRankCost>>& answers = out.answers;
  {
    std::vector<const Cell*> todo;
    todo.reserve(unclassed);
    for (const Cell& cell : cells) {
      if (cell.costs == nullptr) todo.push_back(&cell);
    }
    parallel_for(todo.size(), threads, [&](std::size_t k) {
      const Cell& cell = *todo[k];
      const auto& members = g.ep[cell.gi];
      std::vector<MoeRankCost>& priced = answers[cell.answer];
      moe.layer_costs(moe_layers[cell.li], static_cast<int>(cell.mb), static_cast<int>(cell.gi), members,
                      priced);
      if (priced.size() != members.size()) throw std::logic_error("MoeCostModel: wrong number of ranks");
    });
  }
  std::uint16_t& moe_sms = out.sms;
  for (const Cell& cell : cells) {
    const auto& members = g.ep[cell.gi];
    const std::vector<MoeRankCost>& costs = cell.costs != nullptr ? *cell.costs : answers[cell.answer];
    for (std::size_t k = 0; k < members.size(); ++k) {
      const MoeRankCost& mc = costs[k];
      table[(cell.li * M + cell.mb) * static_cast<std::size_t>(S) +
            static_cast<std::size_t>(members[k] % S)] = &mc;
      moe_sms = std::max(moe_sms, mc.sms);
    }
  }
  return out;
}

std::vector<std::int32_t> duration_classes(const std::vector<CommEntry>& comm,
                                           const std::vector<const MoeRankCost*>& table, int S) {
  const auto n = static_cast<std::size_t>(S);
  std::vector<std::int32_t> cls(n, 0);
  std::size_t classes = n == 0 ? 0 : 1;
  // Partition refinement, one value column at a time (a collective entry's per-rank times, a (MoE layer,
  // microbatch) cell's costs), read in rank order: a column equal on every rank splits nothing and costs
  // one pass; a split renumbers classes by lowest local rank. Stops once every rank is its own class.
  using Row = std::array<std::int64_t, 6>;  // class so far, then the column's values
  std::map<Row, std::int32_t> ids;
  std::vector<std::int32_t> next(n);
  const auto refine = [&](const auto& values) {  // values(local) -> the column's values of that rank
    if (classes == n) return;
    bool uniform = true;
    for (std::size_t local = 1; local < n && uniform; ++local) uniform = values(local) == values(0);
    if (uniform) return;
    ids.clear();
    for (std::size_t local = 0; local < n; ++local) {
      const auto v = values(local);
      Row row{cls[local], 0, 0, 0, 0, 0};
      std::copy(v.begin(), v.end(), row.begin() + 1);
      next[local] = ids.emplace(row, static_cast<std::int32_t>(ids.size())).first->second;
    }
    cls.swap(next);
    classes = ids.size();
  };
  for (const CommEntry& e : comm) {
    if (!e.uniform)
      refine([&](std::size_t local) { return std::array<std::int64_t, 1>{e.per_local[local]}; });
  }
  const std::size_t cells = n == 0 ? 0 : table.size() / n;  // (MoE layer, microbatch) pairs
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const MoeRankCost* const* col = table.data() + cell * n;
    refine([&](std::size_t local) {
      const MoeRankCost& mc = *col[local];
      return std::array<std::int64_t, 5>{mc.tokens, mc.dispatch_ns, mc.combine_ns, mc.permute_ns,
                                         mc.unpermute_ns};
    });
  }
  return cls;
}

ExpertGemms expert_gemms(const Scenario& s, const ComputeProfile& compute, double local_experts) {
  ExpertGemms e;
  e.compute = &compute;
  e.hidden = s.model.hidden;
  e.ffn = s.model.expert_ffn_hidden;
  e.etp = s.parallel.etp;
  e.local_experts = local_experts;
  e.fp8 = is_fp8(s.training.precision);
  e.nvfp4 = is_nvfp4(s.training.precision);
  if (e.fp8) e.recipe = quant_recipe(s.training.precision);
  return e;
}

TimeNs moe_duration(const VarReq& r, const MoeRankCost& mc, const ExpertGemms& e) {
  const ComputeProfile& compute = *e.compute;
  const double hid = e.hidden, fe = e.ffn, etp = e.etp;
  const double weights = e.local_experts * 3 * hid * fe / etp * 2;
  const bool fp8 = e.fp8;
  const double tok = static_cast<double>(mc.tokens);
  // Calibrated GPUs: one expert's GEMM shape (tokens per local expert x expert FFN x hidden); the
  // backward's dgrad and wgrad (k = tokens: the small-k curve) are timed as halves of the op.
  const double per_expert = tok / e.local_experts;
  const double fwd_bytes = weights + tok * (2 * hid + 3 * fe / etp) * 2;
  // FP8 recipes: TE GroupedLinear runs fc1/fc2 (and their dgrad/wgrad) in FP8 and quantizes each GEMM
  // input first (fc1: tok x hidden, fc2: tok x ffn; backward the output gradients; quantize_seconds).
  const double fp8_bytes = 0.5 * fwd_bytes + tok * hid;  // FP8 operands, bf16 outputs
  const double cast_s =
      fp8 && !e.nvfp4 && tok > 0 ? quantize_seconds(compute, e.recipe, tok * (hid + fe / etp)) : 0.0;
  const bool half = r.kind == VarKind::expert_dgrad || r.kind == VarKind::expert_wgrad;
  if (e.nvfp4 && (r.kind == VarKind::expert_fwd || r.kind == VarKind::expert_bwd || half)) {
    // NVFP4 grouped GEMMs (TE GroupedLinear under the NVFP4 recipe) and the quantization of their inputs;
    // the backward's dgrad and wgrad together twice the forward's FLOPs and bytes.
    const double fp4_bytes =
        fwd_bytes / 2 * kNvfp4OperandBytesPerElement + (2 - kNvfp4OperandBytesPerElement) * tok * hid;
    const double quant_s = quantize_seconds(compute, QuantRecipe::nvfp4, tok * (hid + fe / etp));
    const double passes = r.kind == VarKind::expert_fwd || half ? 1 : 2;
    return to_ns(passes *
                     fp4_kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fp4_bytes) +
                 (r.kind == VarKind::expert_wgrad ? 0.0 : quant_s));
  }
  switch (r.kind) {
    case VarKind::expert_fwd:
      if (fp8) {
        return to_ns(fp8_kernel_seconds(compute, e.recipe, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                        fp8_bytes, {per_expert, fe / etp, hid}) +
                     cast_s);
      }
      return to_ns(kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fwd_bytes,
                                  {per_expert, fe / etp, hid}));
    case VarKind::expert_bwd:
      if (fp8) {
        return to_ns(fp8_kernel_seconds(compute, e.recipe, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                        fp8_bytes, {per_expert, hid, fe / etp}) +
                     fp8_kernel_seconds(compute, e.recipe, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                        fp8_bytes, {hid, fe / etp, per_expert}) +
                     cast_s);
      }
      if (compute.calibration) {
        return to_ns(kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fwd_bytes,
                                    {per_expert, hid, fe / etp}) +
                     kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fwd_bytes,
                                    {hid, fe / etp, per_expert}));
      }
      return to_ns(kernel_seconds(compute, OpClass::grouped_gemm, 12 * tok * hid * fe / etp, 2 * fwd_bytes));
    case VarKind::expert_dgrad:
    case VarKind::expert_wgrad: {
      // expert_bwd's two GEMM sets apart (delay_wgrad_compute): dgrad {tokens, hidden, ffn} with the
      // backward's cast-transposes, wgrad {hidden, ffn, tokens}; uncalibrated, half the backward each.
      const bool dgrad = r.kind == VarKind::expert_dgrad;
      const GemmDims dims = dgrad ? GemmDims{per_expert, hid, fe / etp} : GemmDims{hid, fe / etp, per_expert};
      if (fp8) {
        return to_ns(fp8_kernel_seconds(compute, e.recipe, OpClass::grouped_gemm, 6 * tok * hid * fe / etp,
                                        fp8_bytes, dims) +
                     (dgrad ? cast_s : 0.0));
      }
      if (compute.calibration) {
        return to_ns(
            kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fwd_bytes, dims));
      }
      return to_ns(kernel_seconds(compute, OpClass::grouped_gemm, 6 * tok * hid * fe / etp, fwd_bytes));
    }
    case VarKind::dispatch:
      return mc.dispatch_ns + (r.fold ? mc.permute_ns : 0);
    case VarKind::combine:
      return mc.combine_ns + (r.fold ? mc.unpermute_ns : 0);
    case VarKind::permute:
      return mc.permute_ns;
    case VarKind::unpermute:
      return mc.unpermute_ns;
    case VarKind::comm:
      break;
  }
  return 0;
}

}  // namespace moetwin::moe_pricing
