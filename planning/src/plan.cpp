#include "moetwin/planning/plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/pareto.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

constexpr double kSecondsPerDay = 86400.0;

template <typename Map>
std::string known_names(const Map& map) {
  std::string out;
  for (const auto& [name, value] : map) out += (out.empty() ? "" : ", ") + name;
  return out;
}

double recompute_factor(Recompute r) {
  switch (r) {
    case Recompute::none:
      return 1.0;
    case Recompute::selective:
      return 1.05;
    case Recompute::full:
      return 4.0 / 3.0;
  }
  return 1.0;
}

int recompute_rank(Recompute r) {
  return static_cast<int>(r);
}

// One predicted (scenario, dispatcher), counting its replays in `predictions`; InputError from the
// dispatcher seam or the replay propagates.
DispatcherOutcome predict_outcome(const Scenario& s, const FittedProfile& profile, int& predictions) {
  ++predictions;
  const Prediction p = predict(s, predict_options_for(s, profile));
  DispatcherOutcome o;
  o.dispatcher = s.dispatcher.name;
  o.iteration_s = p.iteration_s;
  o.tokens_per_s = p.tokens_per_s;
  o.tflops_per_gpu = p.model_tflops_per_gpu;
  const TermSpread spread = a2a_term_spread(s, profile, p.iteration_s);
  predictions += spread.replays;
  o.a2a_terms = a2a_terms_label(profile, o.dispatcher);
  o.fastest_s = spread.fastest_s;
  o.slowest_s = spread.slowest_s;
  o.band = spread.band;
  o.compute_s = p.compute.max_s;
  o.exposed_tp_s = p.exposed[0].max_s;
  o.exposed_ep_s = p.exposed[1].max_s;
  o.exposed_pp_s = p.exposed[2].max_s;
  o.exposed_dp_s = p.exposed[3].max_s;
  o.bubble_s = p.bubble.max_s;
  o.host_wait_s = p.host_wait.max_s;
  return o;
}

bool faster(const DispatcherOutcome& a, const DispatcherOutcome& b) {
  if (a.iteration_s != b.iteration_s) return a.iteration_s < b.iteration_s;
  return a.dispatcher < b.dispatcher;
}

}  // namespace

double screening_proxy(const Candidate& c, int global_batch) {
  const int microbatches = std::max(1, global_batch / (c.micro_batch * c.parallel.dp));
  const double bubble =
      static_cast<double>(c.parallel.pp - 1) / (static_cast<double>(c.parallel.vpp) * microbatches);
  return recompute_factor(c.recompute) * (1.0 + bubble);
}

void check_plan_request(const Catalog& catalog, const PlanRequest& r) {
  const InputLocation flag{"", 0};
  if (catalog.models().count(r.model) == 0) {
    throw InputError(flag, "--model", "\"" + r.model + "\"",
                     "a catalog model: one of " + known_names(catalog.models()));
  }
  if (catalog.instances().count(r.instance) == 0) {
    throw InputError(flag, "--instance", "\"" + r.instance + "\"",
                     "a catalog instance: one of " + known_names(catalog.instances()));
  }
  if (!(r.tokens > 0) || !std::isfinite(r.tokens)) {
    throw InputError(flag, "--tokens", format_exact(r.tokens), "a number of tokens > 0 (e.g. 1e12)");
  }
  if (!(r.deadline_days >= 0) || !std::isfinite(r.deadline_days)) {
    throw InputError(flag, "--deadline", format_exact(r.deadline_days), "days >= 0 (0 = no deadline)");
  }
  if (r.max_nodes < 1 || r.max_nodes > 4096) {
    throw InputError(flag, "--max-nodes", std::to_string(r.max_nodes), "an integer in [1, 4096]");
  }
  if (r.price_usd_per_hour < 0 && r.price_usd_per_hour != -1) {
    throw InputError(flag, "--price", format_exact(r.price_usd_per_hour), "USD per node-hour >= 0");
  }
  if (!std::isfinite(r.price_usd_per_hour)) {
    throw InputError(flag, "--price", format_exact(r.price_usd_per_hour), "USD per node-hour >= 0");
  }
  if (r.global_batch < 1) throw InputError(flag, "--gbs", std::to_string(r.global_batch), "an integer >= 1");
  if (r.seq_length < 1) throw InputError(flag, "--seq", std::to_string(r.seq_length), "an integer >= 1");
  if (r.predictions_per_node_count < 1) {
    throw InputError(flag, "--screen", std::to_string(r.predictions_per_node_count), "an integer >= 1");
  }
  if (r.dispatcher_finalists < 0) {
    throw InputError(flag, "--finalists", std::to_string(r.dispatcher_finalists), "an integer >= 0");
  }
  (void)catalog.dispatcher(r.reference_dispatcher);
}

Plan make_plan(const Catalog& catalog, const PlanRequest& request, const FittedProfile& profile,
               const std::function<void(const std::string&)>& progress) {
  check_plan_request(catalog, request);
  const ModelSpec& model = catalog.model(request.model);
  const InstanceSpec& instance = catalog.instance(request.instance);
  const GpuSpec& gpu = catalog.gpu(instance.gpu);
  const DispatcherSpec& reference = catalog.dispatcher(request.reference_dispatcher);

  Plan plan;
  plan.request = request;
  if (request.price_usd_per_hour >= 0) {
    plan.price_usd_per_hour = request.price_usd_per_hour;
    plan.price_source = "--price";
  } else {
    plan.price_usd_per_hour = instance.price_usd_per_hour;
    plan.price_source = instance.price_source;
  }
  plan.profile = profile.path.empty() ? std::string("built-in defaults (unfitted)") : profile.path;
  const double tokens_per_iteration = static_cast<double>(request.global_batch) * request.seq_length;

  for (int nodes : node_counts(request.max_nodes)) {
    std::vector<Candidate> all = enumerate_candidates(model, instance, request, nodes);
    plan.enumerated += static_cast<int>(all.size());
    struct Fitting {
      Candidate c;
      CandidateCheck check;
    };
    std::vector<Fitting> fitting;
    for (Candidate& c : all) {
      const CandidateCheck check = fit_candidate(c, model, instance, gpu, reference, request);
      if (check.verdict == CandidateCheck::Verdict::ok) {
        fitting.push_back({c, check});
      } else {
        plan.rejected.push_back({c.label(), reference.name, check.reason});
      }
    }
    std::stable_sort(fitting.begin(), fitting.end(), [&](const Fitting& a, const Fitting& b) {
      const double pa = screening_proxy(a.c, request.global_batch);
      const double pb = screening_proxy(b.c, request.global_batch);
      if (pa != pb) return pa < pb;
      if (a.c.parallel.ep != b.c.parallel.ep) return a.c.parallel.ep < b.c.parallel.ep;
      if (a.c.parallel.tp != b.c.parallel.tp) return a.c.parallel.tp > b.c.parallel.tp;
      if (a.c.overlap_moe_a2a != b.c.overlap_moe_a2a) return a.c.overlap_moe_a2a;
      if (recompute_rank(a.c.recompute) != recompute_rank(b.c.recompute))
        return recompute_rank(a.c.recompute) < recompute_rank(b.c.recompute);
      return a.c.label() < b.c.label();
    });
    // Diversity: take the proxy order round-robin over the pipeline sizes, so the budget covers every pp
    // (the proxy alone would spend it all on pp 1, whose bubble it rates zero but which pays in memory
    // and in data-parallel traffic the proxy does not see).
    {
      std::map<int, std::vector<Fitting>> by_pp;
      for (Fitting& f : fitting) by_pp[f.c.parallel.pp].push_back(std::move(f));
      fitting.clear();
      for (std::size_t round = 0;; ++round) {
        bool any = false;
        for (auto& [pp, group] : by_pp) {
          if (round < group.size()) {
            fitting.push_back(std::move(group[round]));
            any = true;
          }
        }
        if (!any) break;
      }
    }
    // Pass 1: screening with the reference dispatcher.
    std::vector<PlanOption> screened;
    for (std::size_t i = 0; i < fitting.size(); ++i) {
      const Fitting& f = fitting[i];
      if (static_cast<int>(i) >= request.predictions_per_node_count) {
        plan.rejected.push_back({f.c.label(), reference.name,
                                 "not predicted: screening rank " + std::to_string(i + 1) + " of " +
                                     std::to_string(fitting.size()) +
                                     " fitting layouts, beyond the budget of " +
                                     std::to_string(request.predictions_per_node_count) + " per node count"});
        continue;
      }
      const Scenario s = scenario_for(f.c, model, instance, gpu, reference, request);
      try {
        PlanOption o;
        o.candidate = f.c;
        o.memory_bytes = f.check.worst_bytes;
        o.hbm_bytes = f.check.hbm_bytes;
        o.outcomes.push_back(predict_outcome(s, profile, plan.predictions));
        o.outcomes.back().memory_bytes = f.check.worst_bytes;
        screened.push_back(std::move(o));
      } catch (const InputError& e) {
        plan.rejected.push_back({f.c.label(), reference.name, std::string("invalid: ") + e.what()});
      }
    }
    // Pass 2: every other dispatcher for the fastest layouts.
    std::stable_sort(screened.begin(), screened.end(), [](const PlanOption& a, const PlanOption& b) {
      return a.best().iteration_s < b.best().iteration_s;
    });
    for (std::size_t i = 0; i < screened.size() && static_cast<int>(i) < request.dispatcher_finalists; ++i) {
      PlanOption& o = screened[i];
      for (const auto& [name, d] : catalog.dispatchers()) {
        if (name == reference.name) continue;
        const Scenario s = scenario_for(o.candidate, model, instance, gpu, d, request);
        const CandidateCheck check = check_scenario(s);
        if (check.verdict != CandidateCheck::Verdict::ok) {
          plan.rejected.push_back({o.candidate.label(), name, check.reason});
          continue;
        }
        try {
          o.outcomes.push_back(predict_outcome(s, profile, plan.predictions));
          o.outcomes.back().memory_bytes = check.worst_bytes;
        } catch (const InputError& e) {
          plan.rejected.push_back({o.candidate.label(), name, std::string("invalid: ") + e.what()});
        }
      }
      std::stable_sort(o.outcomes.begin(), o.outcomes.end(), faster);
    }
    if (progress) {
      progress("plan: " + std::to_string(nodes) + " nodes: " + std::to_string(all.size()) + " layouts, " +
               std::to_string(fitting.size()) + " fit, " + std::to_string(screened.size()) + " predicted");
    }
    for (PlanOption& o : screened) plan.options.push_back(std::move(o));
  }

  // Time to train, cost, deadline, dispatcher margins.
  const double deadline_s = request.deadline_days * kSecondsPerDay;
  for (PlanOption& o : plan.options) {
    const DispatcherOutcome& b = o.best();
    const double iterations = request.tokens / tokens_per_iteration;
    o.days = iterations * b.iteration_s / kSecondsPerDay;
    o.days_lo = iterations * b.band.lo_s / kSecondsPerDay;
    o.days_hi = iterations * b.band.hi_s / kSecondsPerDay;
    o.node_hours = o.candidate.nodes * o.days * 24.0;
    o.cost_usd = plan.price_usd_per_hour > 0 ? o.node_hours * plan.price_usd_per_hour : -1;
    o.meets_deadline = deadline_s <= 0 || o.days * kSecondsPerDay <= deadline_s;
    o.meets_deadline_pessimistic = deadline_s <= 0 || o.days_hi * kSecondsPerDay <= deadline_s;
    if (o.outcomes.size() >= 2) {
      o.margin_pct = (o.outcomes[1].iteration_s / b.iteration_s - 1.0) * 100.0;
      o.margin_exceeds_uncertainty =
          margin_exceeds_uncertainty(profile, b.slowest_s, o.outcomes[1].fastest_s);
    }
  }
  std::stable_sort(plan.options.begin(), plan.options.end(), [](const PlanOption& a, const PlanOption& b) {
    if (a.days != b.days) return a.days < b.days;
    if (a.node_hours != b.node_hours) return a.node_hours < b.node_hours;
    return a.candidate.label() < b.candidate.label();
  });
  // Pareto on (days, node-hours): the price is one constant per plan, so the front is the same in USD.
  std::vector<TimeCost> points;
  for (const PlanOption& o : plan.options) points.push_back({o.days, o.node_hours});
  for (std::size_t i : pareto_front(points)) plan.options[i].pareto = true;
  // Recommended: the cheapest option meeting the deadline (faster on ties); else the fastest.
  for (std::size_t i = 0; i < plan.options.size(); ++i) {
    const PlanOption& o = plan.options[i];
    if (!o.meets_deadline) continue;
    if (plan.recommended < 0 ||
        o.node_hours < plan.options[static_cast<std::size_t>(plan.recommended)].node_hours) {
      plan.recommended = static_cast<int>(i);
    }
  }
  plan.recommended_meets_deadline = plan.recommended >= 0;
  if (plan.recommended < 0 && !plan.options.empty()) plan.recommended = 0;
  return plan;
}

}  // namespace moetwin
