#include "moetwin/planning/plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/models/routing_plan.hpp"
#include "moetwin/planning/pareto.hpp"
#include "moetwin/planning/settling_experiment.hpp"
#include "moetwin/planning/training_cost.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {
namespace {

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

// One predicted (scenario, dispatcher), central only (the band and A2A-term spread come later, for the
// outcomes shown), with the plan's shared set-up; InputError from the dispatcher seam or the replay
// propagates.
// `options` receives the options the prediction used, its MoE cost seam and caches included (its band
// replays run with them: a2a_term_spread).
DispatcherOutcome predict_outcome(const Scenario& s, const FittedProfile& profile,
                                  const std::shared_ptr<const PredictionSetupCache>& setup,
                                  const std::shared_ptr<WorkloadTemplateCache>& programs,
                                  PredictOptions& options) {
  options = predict_options_for(s, profile);
  options.setup_cache = setup;
  options.programs = programs;
  const Prediction p = predict(s, options);
  DispatcherOutcome o;
  o.dispatcher = s.dispatcher.name;
  o.iteration_s = p.iteration_s;
  o.fastest_s = o.slowest_s = p.iteration_s;
  o.band = {p.iteration_s, p.iteration_s};
  o.tokens_per_s = p.tokens_per_s;
  o.tflops_per_gpu = p.model_tflops_per_gpu;
  o.a2a_terms = a2a_terms_label(profile, o.dispatcher);
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
  if (!(r.tokens >= kMinPlanTokens && r.tokens <= kMaxPlanTokens)) {
    throw InputError(flag, "--tokens", format_exact(r.tokens),
                     "a number of tokens in [1e6, 1e15] (e.g. 1e12; DeepSeek-V3 pre-trained on 1.48e13)");
  }
  if (!(r.deadline_days >= 0) || !std::isfinite(r.deadline_days)) {
    throw InputError(flag, "--deadline", format_exact(r.deadline_days),
                     "days > 0 (leave --deadline out for no deadline)");
  }
  if (r.max_nodes < 1 || r.max_nodes > 4096) {
    throw InputError(flag, "--max-nodes", std::to_string(r.max_nodes), "an integer in [1, 4096]");
  }
  if (r.min_nodes < 1 || r.min_nodes > r.max_nodes) {
    throw InputError(flag, "--min-nodes", std::to_string(r.min_nodes),
                     "an integer in [1, --max-nodes = " + std::to_string(r.max_nodes) + "]");
  }
  if (r.price_usd_per_hour < 0 && r.price_usd_per_hour != -1) {
    throw InputError(flag, "--price", format_exact(r.price_usd_per_hour), "USD per node-hour >= 0");
  }
  if (!std::isfinite(r.price_usd_per_hour)) {
    throw InputError(flag, "--price", format_exact(r.price_usd_per_hour), "USD per node-hour >= 0");
  }
  if (!(r.hbm_headroom >= 0 && r.hbm_headroom <= kMaxHbmHeadroom)) {
    throw InputError(flag, "--hbm-headroom", format_exact(r.hbm_headroom),
                     "a share of HBM in [0, " + format_exact(kMaxHbmHeadroom) + "] (default " +
                         format_exact(kDefaultHbmHeadroom) + ")");
  }
  if (r.global_batch < 1) throw InputError(flag, "--gbs", std::to_string(r.global_batch), "an integer >= 1");
  if (r.seq_length < 1) throw InputError(flag, "--seq", std::to_string(r.seq_length), "an integer >= 1");
  if (r.seed_layouts < 1) {
    throw InputError(flag, "--screen", std::to_string(r.seed_layouts), "an integer >= 1");
  }
  if (r.max_layouts_per_node_count < r.seed_layouts) {
    throw InputError(flag, "--max-layouts", std::to_string(r.max_layouts_per_node_count),
                     "an integer >= --screen (" + std::to_string(r.seed_layouts) + ")");
  }
  if (!(r.explore_window >= 0 && r.explore_window <= 1)) {
    throw InputError(flag, "--window", format_exact(r.explore_window), "a fraction in [0, 1]");
  }
  if (r.threads < 0) throw InputError(flag, "--threads", std::to_string(r.threads), "an integer >= 0");
  // Choices every option would fail on are refused once, here, rather than as a rejection per layout.
  const InstanceSpec& instance = catalog.instance(r.instance);
  const GpuSpec& gpu = catalog.gpu(instance.gpu);
  if (const auto why = dispatcher_refusal(catalog.dispatcher(r.fit_dispatcher), instance, gpu))
    throw InputError(flag, "fit_dispatcher", r.fit_dispatcher,
                     concat({"a dispatcher that runs here: ", *why}));
  if (r.choices.precision && is_fp8(*r.choices.precision) && !(gpu.fp8_flops > 0)) {
    throw InputError(flag, "--precision", to_string(*r.choices.precision),
                     "bf16 on " + gpu.name + " (no FP8 tensor cores in the catalog)");
  }
  if (r.choices.precision && *r.choices.precision == Precision::mxfp8 && !gpu.mxfp8) {
    throw InputError(flag, "--precision", "mxfp8",
                     "a recipe " + gpu.name +
                         " can run (MXFP8 block scaling needs Blackwell tensor cores): bf16, fp8-hybrid, "
                         "fp8-current or fp8-blockwise");
  }
  if (r.choices.precision && is_nvfp4(*r.choices.precision) && !(gpu.fp4_flops > 0)) {
    throw InputError(
        flag, "--precision", "nvfp4",
        "a recipe " + gpu.name +
            " can run (NVFP4 needs FP4 tensor cores: Blackwell B200, B300, GB200, GB300): bf16 or "
            "an FP8 recipe");
  }
  if (r.choices.routing && r.choices.routing->kind == RoutingKind::histogram)
    (void)read_expert_histogram(r.choices.routing->histogram_path, catalog.model(r.model).experts);
}

namespace {

// A candidate's group: (tp, pp, ep, dp, mb). Its members differ in vpp, overlap and recompute, and are
// predicted together with every dispatcher.
using GroupKey = std::tuple<int, int, int, int, int>;

GroupKey group_key(const Candidate& c) {
  return {c.parallel.tp, c.parallel.pp, c.parallel.ep, c.parallel.dp, c.micro_batch};
}

std::string group_text(const GroupKey& k) {
  return concat({"tp", std::to_string(std::get<0>(k)), " pp", std::to_string(std::get<1>(k)), " ep",
                 std::to_string(std::get<2>(k)), " dp", std::to_string(std::get<3>(k)), " mb",
                 std::to_string(std::get<4>(k))});
}

// The groups one step away on `world` GPUs: mb, ep, tp or pp halved or doubled (dp follows tp and pp),
// tp traded for pp at the same dp, tp or pp stepped with mb (the same microbatch count), and a pp step
// with ep halved or doubled (the stage's ranks change).
// Keys that are not fitting groups are skipped by the caller.
std::vector<GroupKey> neighbours(const GroupKey& k, int world) {
  const auto [tp, pp, ep, dp, mb] = k;
  std::vector<GroupKey> out;
  auto add = [&](int t, int p, int e, int m) {
    if (t < 1 || p < 1 || e < 1 || m < 1 || world % (t * p) != 0) return;
    out.emplace_back(t, p, e, world / (t * p), m);
  };
  (void)dp;
  add(tp, pp, ep, mb / 2);
  add(tp, pp, ep, mb * 2);
  add(tp, pp, ep / 2, mb);
  add(tp, pp, ep * 2, mb);
  add(tp / 2, pp, ep, mb);
  add(tp * 2, pp, ep, mb);
  add(tp * 2, pp / 2, ep, mb);
  add(tp / 2, pp * 2, ep, mb);
  // dp halves with tp or pp doubled: doubling mb keeps the microbatch count (and the bubble).
  add(tp * 2, pp, ep, mb * 2);
  add(tp / 2, pp, ep, mb / 2);
  add(tp, pp * 2, ep, mb * 2);
  add(tp, pp / 2, ep, mb / 2);
  for (int p : {pp / 2, pp * 2}) {
    add(tp, p, ep, mb);
    add(tp, p, ep / 2, mb);
    add(tp, p, ep * 2, mb);
  }
  return out;
}

struct Variant {
  Candidate c;
  CandidateCheck check;  // with the fit dispatcher
};

struct Group {
  GroupKey key;
  std::vector<Variant> variants;
  double proxy = 0;  // the lowest screening_proxy of its variants
  int rank = 0;      // 1-based position in the screening order
  bool queued = false;
  bool predicted = false;
  double fastest_s = std::numeric_limits<double>::infinity();
};

// One (variant, dispatcher) to predict.
struct Job {
  std::size_t group = 0;
  std::size_t variant = 0;
  Scenario scenario;
  double memory_bytes = 0;
  bool ok = false;
  DispatcherOutcome outcome;
  std::string error;
  int band_replays = 0;  // a2a_term_spread's replays for the outcome's band (shown outcomes only)
};

// Whether two dispatchers' workloads emit the same programs (the dispatcher's part of the emission key,
// workload_template_cache.hpp): fused permute and NCCL transport.
bool same_emission(const DispatcherSpec& a, const DispatcherSpec& b) {
  return a.fused_permute == b.fused_permute &&
         (a.transport == DispatcherTransport::nccl) == (b.transport == DispatcherTransport::nccl);
}

// The work items [first_of_variant[i], first_of_variant[i + 1]) ordered by their estimated cost, largest
// first (ties in item order): jobs x microbatches per pipeline.
std::vector<std::size_t> longest_first(const std::vector<Job>& jobs,
                                       const std::vector<std::size_t>& first_of_variant) {
  const std::size_t n = first_of_variant.size() - 1;
  std::vector<std::int64_t> cost(n);
  std::vector<std::size_t> items(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Scenario& s = jobs[first_of_variant[i]].scenario;
    const auto count = static_cast<std::int64_t>(first_of_variant[i + 1] - first_of_variant[i]);
    cost[i] = count * s.training.microbatches(s.parallel);
    items[i] = i;
  }
  std::stable_sort(items.begin(), items.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  return items;
}

// The order in which a layout variant's jobs [begin, end) run: the catalog's, except that the dispatchers
// emitting what the first dispatcher without its own A2A terms emits run last, so that the template
// cache (capacity 1) still holds that emission when its band replays come (each job's outcome is its own
// whatever the order).
std::vector<std::size_t> run_order(const std::vector<Job>& jobs, std::size_t begin, std::size_t end,
                                   const FittedProfile& profile) {
  std::vector<std::size_t> order;
  const DispatcherSpec* banded = nullptr;
  for (std::size_t k = begin; k < end && profile.fitted; ++k) {
    if (!has_own_a2a_terms(profile, jobs[k].scenario.dispatcher.name)) {
      banded = &jobs[k].scenario.dispatcher;
      break;
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t k = begin; k < end; ++k) {
      const bool last = banded != nullptr && same_emission(jobs[k].scenario.dispatcher, *banded);
      if (last == (pass == 1)) order.push_back(k);
    }
  }
  return order;
}

}  // namespace

namespace {

// Marks each option within the HBM headroom and sets each node count's fastest from the options within it
// (or from all of them when none is within it): one set for the objectives, the table and the scaling.
// Returns whether any option is within the headroom.
bool mark_headroom_and_fastest(Plan& plan, const PlanRequest& request) {
  // One set of options for the objectives, each node count's fastest and the scaling: those within the HBM
  // headroom, or all of them when none is within it.
  for (PlanOption& o : plan.options)
    o.within_headroom = o.best().memory_bytes <= hbm_usable_bytes(o.hbm_bytes, request.hbm_headroom);
  const bool any_within = std::any_of(plan.options.begin(), plan.options.end(),
                                      [](const PlanOption& o) { return o.within_headroom; });
  for (NodeCountSearch& n : plan.searched) {
    for (const PlanOption& o : plan.options) {
      if (o.candidate.nodes != n.nodes) continue;
      if (any_within && !o.within_headroom) {
        n.fastest_beyond_s = n.fastest_beyond_s > 0 ? std::min(n.fastest_beyond_s, o.best().iteration_s)
                                                    : o.best().iteration_s;
        continue;
      }
      n.fastest_s = n.fastest_s > 0 ? std::min(n.fastest_s, o.best().iteration_s) : o.best().iteration_s;
    }
    if (n.fastest_beyond_s >= n.fastest_s && n.fastest_s > 0) n.fastest_beyond_s = 0;
  }
  return any_within;
}

// Scaling, ranking and the Pareto front of a searched plan's options.
void scale_rank_and_front(Plan& plan, double tokens_per_iteration, bool any_within) {
  // Scaling across node counts: each option and each node count's fastest against the fastest option at
  // the smallest node count that has one (the global batch is the same for all: strong scaling).
  {
    const NodeCountSearch* reference = nullptr;
    for (const NodeCountSearch& n : plan.searched) {
      if (n.fastest_s > 0) {
        reference = &n;
        break;
      }
    }
    if (reference != nullptr) {
      plan.reference_nodes = reference->nodes;
      plan.reference_s = reference->fastest_s;
      for (PlanOption& o : plan.options) {
        const Scaling s =
            scaling_against(plan.reference_s, plan.reference_nodes, o.best().iteration_s, o.candidate.nodes);
        o.speedup = s.speedup;
        o.scaling_efficiency = s.efficiency;
      }
      for (NodeCountSearch& n : plan.searched) {
        if (!(n.fastest_s > 0)) continue;
        const Scaling s = scaling_against(plan.reference_s, plan.reference_nodes, n.fastest_s, n.nodes);
        n.speedup = s.speedup;
        n.scaling_efficiency = s.efficiency;
        n.node_hours_per_gtoken = node_hours_per_gtoken(n.fastest_s, n.nodes, tokens_per_iteration);
      }
    }
  }
  std::stable_sort(plan.options.begin(), plan.options.end(), [](const PlanOption& a, const PlanOption& b) {
    if (a.within_headroom != b.within_headroom) return a.within_headroom;
    if (a.days != b.days) return a.days < b.days;
    if (a.node_hours != b.node_hours) return a.node_hours < b.node_hours;
    return a.candidate.label() < b.candidate.label();
  });
  // Pareto on (days, node-hours): the price is one constant per plan, so the front is the same in USD.
  // Options beyond the HBM headroom join the front only when no option is within it.
  std::vector<TimeCost> points;
  std::vector<std::size_t> on_front;  // option index of each point
  for (std::size_t i = 0; i < plan.options.size(); ++i) {
    if (any_within && !plan.options[i].within_headroom) continue;
    points.push_back({plan.options[i].days, plan.options[i].node_hours});
    on_front.push_back(i);
  }
  for (std::size_t k : pareto_front(points)) plan.options[on_front[k]].pareto = true;
}

// The objectives of a ranked plan (options non-empty): fastest, cheapest and, with a deadline, the cheapest
// that meets it, which is then the recommendation.
void pick_objectives(Plan& plan, const PlanRequest& request, bool any_within) {
  // Objectives: fastest (options are ranked by time), cheapest (fewest node-hours, faster on ties) and,
  // with a deadline, the cheapest that meets it.
  plan.fastest = 0;
  plan.cheapest = 0;
  int cheapest_in_time = -1;
  // Options beyond the headroom (ranked last) are objectives only when no option is within it.
  for (std::size_t i = 0; i < plan.options.size(); ++i) {
    const PlanOption& o = plan.options[i];
    if (any_within && !o.within_headroom) break;
    if (o.node_hours < plan.options[static_cast<std::size_t>(plan.cheapest)].node_hours) {
      plan.cheapest = static_cast<int>(i);
    }
    if (o.meets_deadline &&
        (cheapest_in_time < 0 ||
         o.node_hours < plan.options[static_cast<std::size_t>(cheapest_in_time)].node_hours)) {
      cheapest_in_time = static_cast<int>(i);
    }
  }
  if (request.deadline_days > 0) {
    plan.recommended_meets_deadline = cheapest_in_time >= 0;
    plan.recommended = cheapest_in_time >= 0 ? cheapest_in_time : plan.fastest;
  } else {
    plan.recommended_meets_deadline = true;
    plan.recommended = plan.fastest;
  }
}

}  // namespace

Plan make_plan(const Catalog& catalog, const PlanRequest& asked, const FittedProfile& profile,
               const std::function<void(const std::string&)>& progress) {
  check_plan_request(catalog, asked);
  PlanRequest request = asked;
  if (request.stack.spec.name.empty()) {
    request.stack = make_stack_choice(catalog.default_stack(), {}, catalog.instance(request.instance), true);
  }
  const ModelSpec& model = catalog.model(request.model);
  const InstanceSpec& instance = catalog.instance(request.instance);
  const GpuSpec& gpu = catalog.gpu(instance.gpu);
  const DispatcherSpec& fit_dispatcher = catalog.dispatcher(request.fit_dispatcher);
  const int threads = thread_count(request.threads);
  // Calibration lookups and collective models shared by every prediction of the plan (one catalog).
  const auto setup = std::make_shared<const PredictionSetupCache>();

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
  const std::string window_pct = format_fixed(request.explore_window * 100, 0) + "%";
  // Dispatchers the training stack will not run on this GPU at all (Megatron-Bridge's gate) are rejected once
  // for every layout ("*"), not per layout; a transport's fabric depends on the layout's EP span (an EP group
  // inside the dispatcher's NVLink reach never uses it), so that is checked per layout.
  std::vector<const DispatcherSpec*> dispatchers;
  for (const auto& [name, d] : catalog.dispatchers()) {
    if (const auto why = flex_backend_refusal(d, gpu)) {
      plan.rejected.push_back({"*", name, *why});
      continue;
    }
    dispatchers.push_back(&d);
  }

  int band_replays = 0;
  for (int nodes : node_counts(request.min_nodes, request.max_nodes)) {
    NodeCountSearch search;
    search.nodes = nodes;
    const int predictions_before = plan.predictions;
    std::vector<Candidate> all = enumerate_candidates(model, instance, request, nodes);
    plan.enumerated += static_cast<int>(all.size());
    search.layouts = static_cast<int>(all.size());

    // Memory and validity pre-check with the fit dispatcher; the lightest failure explains an empty
    // node count.
    std::vector<Group> groups;
    std::map<GroupKey, std::size_t> group_of;
    double lightest = std::numeric_limits<double>::infinity();
    for (Candidate& c : all) {
      const CandidateCheck check = fit_candidate(c, model, instance, gpu, fit_dispatcher, request);
      if (check.verdict != CandidateCheck::Verdict::ok) {
        plan.rejected.push_back({c.label(), fit_dispatcher.name, check.reason});
        if (check.verdict == CandidateCheck::Verdict::does_not_fit && check.worst_bytes < lightest) {
          lightest = check.worst_bytes;
          search.none_reason = "the lightest layout, " + c.label() + ", " + check.reason;
        } else if (search.none_reason.empty()) {
          search.none_reason = c.label() + ": " + check.reason;
        }
        continue;
      }
      ++search.fitting;
      const GroupKey key = group_key(c);
      auto [it, added] = group_of.emplace(key, groups.size());
      if (added) {
        Group g;
        g.key = key;
        g.proxy = std::numeric_limits<double>::infinity();
        groups.push_back(g);
      }
      Group& g = groups[it->second];
      g.variants.push_back({c, check});
      g.proxy = std::min(g.proxy, screening_proxy(c, request.global_batch));
    }
    if (search.fitting > 0) search.none_reason.clear();
    search.groups = static_cast<int>(groups.size());

    // Screening order: proxy, then fewer EP ranks, larger tp, the key; seeds round-robin over pp (the
    // proxy alone would spend them on pp 1, whose bubble it rates zero but which pays in memory and in
    // data-parallel traffic the proxy does not see).
    std::vector<std::size_t> order(groups.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const Group& x = groups[a];
      const Group& y = groups[b];
      if (x.proxy != y.proxy) return x.proxy < y.proxy;
      if (std::get<2>(x.key) != std::get<2>(y.key)) return std::get<2>(x.key) < std::get<2>(y.key);
      if (std::get<0>(x.key) != std::get<0>(y.key)) return std::get<0>(x.key) > std::get<0>(y.key);
      return x.key < y.key;
    });
    for (std::size_t i = 0; i < order.size(); ++i) groups[order[i]].rank = static_cast<int>(i + 1);
    std::vector<std::size_t> frontier;
    {
      std::map<int, std::vector<std::size_t>> by_pp;
      for (std::size_t i : order) by_pp[std::get<1>(groups[i].key)].push_back(i);
      for (std::size_t round = 0; static_cast<int>(frontier.size()) < request.seed_layouts; ++round) {
        bool any = false;
        for (auto& [pp, members] : by_pp) {
          if (round < members.size() && static_cast<int>(frontier.size()) < request.seed_layouts) {
            frontier.push_back(members[round]);
            any = true;
          }
        }
        if (!any) break;
      }
      for (std::size_t i : frontier) groups[i].queued = true;
    }

    std::vector<PlanOption> found;
    const int world = nodes * instance.gpus;
    // The window's reference: the fastest option within the HBM headroom (the set plan recommends from),
    // or the fastest of all while none is within it. A faster option beyond the headroom must not set the
    // window: with FP8's weight copies the fastest layouts sit beyond it (DeepSeek-V3 on 16 p5en, 19.1 s
    // beyond against 9.2 s within), and a window around them never reached the ones within.
    double fastest = std::numeric_limits<double>::infinity();
    double fastest_within = std::numeric_limits<double>::infinity();
    while (!frontier.empty()) {
      // Every variant of every frontier group with every dispatcher that passes the checks.
      std::vector<Job> jobs;
      for (std::size_t gi : frontier) {
        Group& g = groups[gi];
        g.predicted = true;
        ++search.groups_predicted;
        for (std::size_t vi = 0; vi < g.variants.size(); ++vi) {
          const Variant& v = g.variants[vi];
          for (const DispatcherSpec* dispatcher : dispatchers) {
            const DispatcherSpec& d = *dispatcher;
            const std::string& name = d.name;
            Job job;
            job.group = gi;
            job.variant = vi;
            job.scenario = scenario_for(v.c, model, instance, gpu, d, request);
            const CandidateCheck check = name == fit_dispatcher.name ? v.check : check_scenario(job.scenario);
            if (check.verdict != CandidateCheck::Verdict::ok) {
              plan.rejected.push_back({v.c.label(), name, check.reason});
              continue;
            }
            job.memory_bytes = check.worst_bytes;
            jobs.push_back(std::move(job));
          }
        }
      }
      // One work item per layout variant: its dispatchers, predicted one after another, share the
      // emitted programs (workload_template_cache.hpp); each job's outcome is its own either way.
      std::vector<std::size_t> first_of_variant;
      for (std::size_t k = 0; k < jobs.size(); ++k) {
        if (k == 0 || jobs[k].group != jobs[k - 1].group || jobs[k].variant != jobs[k - 1].variant)
          first_of_variant.push_back(k);
      }
      first_of_variant.push_back(jobs.size());
      // The variant's option shows its fastest and runner-up dispatcher with their bands, so their band
      // replays (a2a_term_spread) run in the same item, after its predictions: they share the item's
      // emitted programs and the central prediction's MoE cost seam (session 43; they ran as items of
      // their own, which emitted the programs and built the seam again).
      // Longest first (LPT): the threads take items in this order, so a long item (a deep pipeline with
      // many microbatches replays up to 6x a shallow one's events) starts early instead of ending a round
      // alone on one thread. The cost is estimated as jobs x microbatches per pipeline (the events a
      // replay pops grow with both). The order changes which thread runs an item, never its outcome.
      const std::vector<std::size_t> items = longest_first(jobs, first_of_variant);
      parallel_for(items.size(), threads, [&](std::size_t k_item) {
        const std::size_t item = items[k_item];
        const std::size_t begin = first_of_variant[item];
        const std::size_t end = first_of_variant[item + 1];
        const auto programs = std::make_shared<WorkloadTemplateCache>();
        std::vector<PredictOptions> used(end - begin);
        for (const std::size_t k : run_order(jobs, begin, end, profile)) {
          Job& job = jobs[k];
          try {
            job.outcome = predict_outcome(job.scenario, profile, setup, programs, used[k - begin]);
            job.outcome.memory_bytes = job.memory_bytes;
            job.ok = true;
          } catch (const InputError& e) {
            job.error = std::string("invalid: ") + e.what();
          }
        }
        // The shown outcomes: the option's first two after the stable sort below (same order).
        std::vector<std::size_t> ok;
        for (std::size_t k = begin; k < end; ++k) {
          if (jobs[k].ok) ok.push_back(k);
        }
        std::stable_sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) {
          return faster(jobs[a].outcome, jobs[b].outcome);
        });
        for (std::size_t i = 0; i < ok.size() && i < 2; ++i) {
          Job& job = jobs[ok[i]];
          DispatcherOutcome& d = job.outcome;
          const TermSpread spread =
              a2a_term_spread(job.scenario, profile, d.iteration_s, used[ok[i] - begin]);
          d.fastest_s = spread.fastest_s;
          d.slowest_s = spread.slowest_s;
          d.band = spread.band;
          d.spread_known = true;
          job.band_replays = spread.replays;
        }
      });
      plan.predictions += static_cast<int>(jobs.size());
      for (const Job& job : jobs) band_replays += job.band_replays;
      // Jobs come grouped by (group, variant): one option per variant with at least one outcome.
      for (std::size_t k = 0; k < jobs.size();) {
        const Job& first = jobs[k];
        const Variant& v = groups[first.group].variants[first.variant];
        PlanOption o;
        o.candidate = v.c;
        o.memory_bytes = v.check.worst_bytes;
        o.hbm_bytes = v.check.hbm_bytes;
        for (; k < jobs.size() && jobs[k].group == first.group && jobs[k].variant == first.variant; ++k) {
          if (jobs[k].ok) {
            o.outcomes.push_back(jobs[k].outcome);
          } else {
            plan.rejected.push_back({v.c.label(), jobs[k].scenario.dispatcher.name, jobs[k].error});
          }
        }
        if (o.outcomes.empty()) continue;
        std::stable_sort(o.outcomes.begin(), o.outcomes.end(), faster);
        Group& g = groups[first.group];
        g.fastest_s = std::min(g.fastest_s, o.best().iteration_s);
        fastest = std::min(fastest, o.best().iteration_s);
        if (o.best().memory_bytes <= hbm_usable_bytes(o.hbm_bytes, request.hbm_headroom))
          fastest_within = std::min(fastest_within, o.best().iteration_s);
        found.push_back(std::move(o));
      }
      // Neighbours of every group within the window of the reference, in screening order: a group
      // faster than it (beyond the headroom) counts too, since its neighbours with more stages, tp or
      // recompute are where the fast layouts within the headroom are.
      const double reference = std::isfinite(fastest_within) ? fastest_within : fastest;
      std::vector<std::size_t> next;
      for (std::size_t gi : order) {
        const Group& g = groups[gi];
        if (!g.predicted || !(g.fastest_s <= reference * (1 + request.explore_window))) continue;
        for (const GroupKey& n : neighbours(g.key, world)) {
          const auto it = group_of.find(n);
          if (it == group_of.end() || groups[it->second].queued) continue;
          groups[it->second].queued = true;
          next.push_back(it->second);
        }
      }
      std::stable_sort(next.begin(), next.end(),
                       [&](std::size_t a, std::size_t b) { return groups[a].rank < groups[b].rank; });
      const std::size_t room =
          static_cast<std::size_t>(std::max(0, request.max_layouts_per_node_count - search.groups_predicted));
      if (next.size() > room) {
        search.capped = true;
        for (std::size_t i = room; i < next.size(); ++i) groups[next[i]].queued = false;
        next.resize(room);
      }
      frontier = std::move(next);
    }
    // What was never predicted, and why.
    for (std::size_t gi : order) {
      const Group& g = groups[gi];
      if (g.predicted) continue;
      const std::string why =
          search.capped
              ? concat({"not predicted: the search stopped at --max-layouts ",
                        std::to_string(request.max_layouts_per_node_count), " groups (", group_text(g.key),
                        " is rank ", std::to_string(g.rank), " of ", std::to_string(groups.size()),
                        " by the screening proxy)"})
              : concat({"not predicted: no predicted neighbour of ", group_text(g.key), " within ",
                        window_pct, " of the fastest at ", std::to_string(nodes), " nodes (screening rank ",
                        std::to_string(g.rank), " of ", std::to_string(groups.size()), ")"});
      for (const Variant& v : g.variants) plan.rejected.push_back({v.c.label(), "*", why});
    }
    search.predictions = plan.predictions - predictions_before;
    if (progress) {
      progress(concat(
          {"plan: ", std::to_string(nodes), " nodes: ", std::to_string(search.layouts), " layouts, ",
           std::to_string(search.fitting), " fit (", std::to_string(search.groups), " groups), ",
           std::to_string(search.groups_predicted), " groups predicted (", std::to_string(search.predictions),
           " predictions)",
           found.empty() ? std::string()
                         : concat({", fastest ",
                                   format_fixed(std::isfinite(fastest_within) ? fastest_within : fastest, 3),
                                   std::isfinite(fastest_within) ? " s within the HBM headroom"
                                                                 : " s (none within the HBM headroom)"}),
           search.capped ? ", stopped at --max-layouts" : ""}));
    }
    plan.searched.push_back(search);
    for (PlanOption& o : found) plan.options.push_back(std::move(o));
  }

  // The bands' replays, made with each variant's predictions (above), counted after the search's.
  plan.predictions += band_replays;

  // Time to train, cost, deadline, dispatcher margins.
  const double deadline_s = request.deadline_days * kSecondsPerDay;
  for (PlanOption& o : plan.options) {
    const DispatcherOutcome& b = o.best();
    const TrainingCost cost = training_cost(b.iteration_s, b.band.lo_s, b.band.hi_s, o.candidate.nodes,
                                            request.tokens, tokens_per_iteration, plan.price_usd_per_hour);
    o.days = cost.days;
    o.days_lo = cost.days_lo;
    o.days_hi = cost.days_hi;
    o.node_hours = cost.node_hours;
    o.cost_usd = cost.cost_usd;
    o.node_hours_per_gtoken = node_hours_per_gtoken(b.iteration_s, o.candidate.nodes, tokens_per_iteration);
    o.meets_deadline = deadline_s <= 0 || o.days * kSecondsPerDay <= deadline_s;
    o.meets_deadline_pessimistic = deadline_s <= 0 || o.days_hi * kSecondsPerDay <= deadline_s;
    const Novelty novelty = novelty_of(
        scenario_for(o.candidate, model, instance, gpu, catalog.dispatcher(b.dispatcher), request), profile);
    o.novelty_level = novelty.level();
    o.novelty = novelty.summary();
    if (o.outcomes.size() >= 2) {
      o.margin_pct = (o.outcomes[1].iteration_s / b.iteration_s - 1.0) * 100.0;
      o.margin_exceeds_uncertainty =
          margin_exceeds_uncertainty(profile, b.slowest_s, o.outcomes[1].fastest_s, novelty);
    }
  }
  const bool any_within = mark_headroom_and_fastest(plan, request);
  scale_rank_and_front(plan, tokens_per_iteration, any_within);
  if (plan.options.empty()) return plan;
  pick_objectives(plan, request, any_within);
  // The options a user is pointed at, when their dispatcher margin is a tie: the run that settles it.
  for (const int chosen : {plan.fastest, plan.cheapest, plan.recommended}) {
    PlanOption& o = plan.options[static_cast<std::size_t>(chosen)];
    if (o.outcomes.size() < 2 || o.margin_exceeds_uncertainty || !o.settle_with.empty()) continue;
    const Scenario a = scenario_for(o.candidate, model, instance, gpu,
                                    catalog.dispatcher(o.outcomes[0].dispatcher), request);
    const Scenario b = scenario_for(o.candidate, model, instance, gpu,
                                    catalog.dispatcher(o.outcomes[1].dispatcher), request);
    const SettlingExperiment e = settling_experiment(a, b, profile);
    o.settle_with = describe(e, a);
    o.settle_node_hours = e.node_hours;
  }
  return plan;
}

}  // namespace moetwin
