// The renderings of a Plan: the options table (CSV columns that `moetwin report` reads back), the
// rejected-candidates table (--explain), the text summary and the JSON document.
#pragma once

#include <string>

#include "moetwin/planning/plan.hpp"
#include "moetwin/reports/result_table.hpp"

namespace moetwin {

// One row per option, ranked. Columns: rank, nodes, gpus, tp, pp, vpp, ep, etp, dp, mb, recompute,
// overlap, gbs, seq, dispatcher, runner_up, margin_pct, margin_exceeds_uncertainty, dispatchers_compared,
// predicted_iter_s, lo_s, hi_s, predicted_tokens_s, predicted_tflops_gpu, days, days_lo, days_hi,
// node_hours, cost_usd (empty when no price), meets_deadline, meets_deadline_pessimistic, pareto,
// recommended, fastest, cheapest, memory_gib, hbm_gib, compute_s_max, exposed_{tp,ep,pp,dp}_s_max,
// bubble_s_max, host_wait_s_max, settle_with, settle_node_hours, precision, routing,
// node_hours_per_1e9_tokens, speedup, scaling_efficiency.
ResultTable plan_options_table(const Plan& plan);
// Options listed in the text output (all of them are in --format csv / json); also what
// `plan --write-scenarios` writes by default.
constexpr std::size_t kTextOptions = 20;
// The plan's precision ("bf16" unless --precision) and routing ("balanced", "zipf:1.2", ...).
std::string plan_precision(const Plan& plan);
std::string plan_routing(const Plan& plan);
// candidate, dispatcher, reason.
ResultTable plan_rejected_table(const Plan& plan);
// Summary, recommendation, Pareto front, every option; with `explain` the rejected candidates.
std::string render_plan_text(const Plan& plan, bool explain);
// {"context", "plan" (request, price, profile, counts, recommended, fastest, cheapest), "searched" (per
// node count), "options", ["rejected"]}.
std::string render_plan_json(const Plan& plan, const OutputContext& context, bool explain);

}  // namespace moetwin
