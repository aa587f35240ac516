#include "moetwin/planning/candidates.hpp"

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario_parser.hpp"

namespace moetwin {

std::string Candidate::label() const {
  const ParallelLayout& p = parallel;
  return concat({"n", std::to_string(nodes), " tp", std::to_string(p.tp), " pp", std::to_string(p.pp), " vpp",
                 std::to_string(p.vpp), " ep", std::to_string(p.ep), " dp", std::to_string(p.dp), " mb",
                 std::to_string(micro_batch), " recompute=", to_string(recompute),
                 " overlap=", overlap_moe_a2a ? "on" : "off"});
}

std::vector<int> node_counts(int min_nodes, int max_nodes) {
  std::vector<int> out;
  if (min_nodes < 1 || max_nodes < min_nodes) return out;
  out.push_back(min_nodes);
  for (int n = 1; n <= max_nodes; n *= 2) {
    if (n > min_nodes) out.push_back(n);
  }
  if (out.back() != max_nodes) out.push_back(max_nodes);
  return out;
}

std::vector<Candidate> enumerate_candidates(const ModelSpec& model, const InstanceSpec& instance,
                                            const PlanRequest& request, int nodes) {
  std::vector<Candidate> out;
  const int world = nodes * instance.gpus;
  for (int tp : {1, 2, 4, 8}) {
    if (tp > instance.gpus || world % tp != 0) continue;
    for (int pp : {1, 2, 4, 8, 16}) {
      if (world % (tp * pp) != 0 || pp > model.layers / 2) continue;
      const int dp = world / (tp * pp);
      const int stage_ranks = tp * dp;
      std::vector<int> eps;
      if (model.experts == 0) {
        eps.push_back(1);
      } else {
        for (int ep = 2; ep <= stage_ranks; ep *= 2) {
          if (model.experts % ep == 0 && stage_ranks % ep == 0) eps.push_back(ep);
        }
      }
      for (int vpp : {1, 2}) {
        if (vpp > 1 && pp == 1) continue;
        for (int ep : eps) {
          for (int mb : {1, 2, 4}) {
            for (bool overlap : {false, true}) {
              // Megatron-Core runs the EP all-to-all overlap with an interleaved pipeline (vpp >= 2), or
              // with no pipeline at all (pp = 1, the combined 1F1B of forward_backward_no_pipelining).
              if (overlap && (ep < 2 || (vpp < 2 && pp > 1))) continue;
              Candidate c;
              c.nodes = nodes;
              c.parallel.tp = tp;
              c.parallel.pp = pp;
              c.parallel.vpp = vpp;
              c.parallel.ep = ep;
              c.parallel.etp = 1;
              c.parallel.cp = 1;
              c.parallel.dp = dp;
              c.micro_batch = mb;
              c.overlap_moe_a2a = overlap;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  (void)request;
  return out;
}

Scenario scenario_for(const Candidate& candidate, const ModelSpec& model, const InstanceSpec& instance,
                      const GpuSpec& gpu, const DispatcherSpec& dispatcher, const PlanRequest& request) {
  Scenario s;
  s.name = "plan " + candidate.label() + " " + dispatcher.name;
  s.source = "moetwin plan";
  s.model = model;
  s.instance = instance;
  s.gpu = gpu;
  s.nodes = candidate.nodes;
  s.parallel = candidate.parallel;
  s.training.micro_batch = candidate.micro_batch;
  s.training.global_batch = request.global_batch;
  s.training.seq_length = request.seq_length;
  s.training.recompute = candidate.recompute;
  s.training.overlap_moe_a2a = candidate.overlap_moe_a2a;
  s.dispatcher = dispatcher;
  s.stack = request.stack;
  s.training.moe_pad_to_capacity = request.stack.spec.alltoall_pad_to_capacity;
  s.routing.kind = RoutingKind::balanced;
  s.routing.seed = 1;
  // Precision and routing as asked; recompute is the candidate's (fit_candidate applies a fixed choice).
  if (request.choices.precision) s.training.precision = *request.choices.precision;
  if (request.choices.routing) s.routing = *request.choices.routing;
  return s;
}

CandidateCheck check_scenario(const Scenario& scenario) {
  CandidateCheck check;
  check.hbm_bytes = scenario.gpu.hbm_bytes;
  PipelineLayout layout;
  try {
    validate_scenario(scenario, {"plan", 0});
    layout = make_pipeline_layout(scenario.model, scenario.parallel, {"plan", 0});
  } catch (const InputError& e) {
    check.verdict = CandidateCheck::Verdict::invalid;
    check.reason = std::string("invalid: ") + e.what();
    return check;
  }
  const MemoryEstimate memory = estimate_memory(scenario, layout);
  check.worst_bytes = memory.worst().total();
  if (!memory.fits) {
    check.verdict = CandidateCheck::Verdict::does_not_fit;
    check.reason = "does not fit: " + format_fixed(check.worst_bytes / kGiB, 1) + " GiB > " +
                   format_fixed(check.hbm_bytes / kGiB, 1) + " GiB on stage " +
                   std::to_string(memory.worst_stage) + " (recompute " +
                   to_string(scenario.training.recompute) + ", " + scenario.dispatcher.name + ")";
  }
  return check;
}

CandidateCheck fit_candidate(Candidate& candidate, const ModelSpec& model, const InstanceSpec& instance,
                             const GpuSpec& gpu, const DispatcherSpec& dispatcher,
                             const PlanRequest& request) {
  CandidateCheck last;
  CandidateCheck first_fit;  // the lightest recompute that fits, if none fits within the headroom
  Recompute first_fit_recompute = Recompute::none;
  bool fits = false;
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (request.choices.recompute && r != *request.choices.recompute) continue;
    // overlap excludes full recompute: validate_scenario says so when it is the fixed choice.
    if (r == Recompute::full && candidate.overlap_moe_a2a && !request.choices.recompute) break;
    candidate.recompute = r;
    last = check_scenario(scenario_for(candidate, model, instance, gpu, dispatcher, request));
    // Recompute does not change validity: an invalid layout stays invalid.
    if (last.verdict == CandidateCheck::Verdict::invalid) return last;
    if (last.verdict == CandidateCheck::Verdict::does_not_fit) continue;
    if (last.worst_bytes <= hbm_usable_bytes(last.hbm_bytes, request.hbm_headroom)) return last;
    if (!fits) {
      fits = true;
      first_fit = last;
      first_fit_recompute = r;
    }
  }
  if (fits) {
    candidate.recompute = first_fit_recompute;
    return first_fit;
  }
  return last;
}

}  // namespace moetwin
