#include "moetwin/planning/compare.hpp"

#include <algorithm>
#include <cmath>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/planning/scenario_choices.hpp"
#include "moetwin/planning/training_cost.hpp"
#include "moetwin/reports/prediction_columns.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/rescale.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/prediction.hpp"

namespace moetwin {

namespace {

void need_two(std::size_t count, const std::string& flag) {
  if (count < 2) {
    throw InputError({"", 0}, flag, std::to_string(count) + " value" + (count == 1 ? "" : "s"),
                     "two or more, comma-separated, the first being the reference");
  }
}

// validate_scenario's InputError for a shorthand's scenario, naming the flag and value that made it.
CompareInput checked(Scenario s, const std::string& label, const std::string& flag) {
  try {
    validate_scenario(s, {s.source, 0});
  } catch (const InputError& e) {
    throw InputError({"", 0}, flag, label, concat({"a valid scenario from ", s.source, ": ", e.what()}));
  }
  s.name = concat({s.name, " ", label});
  return {label, std::move(s)};
}

}  // namespace

std::vector<CompareInput> compare_dispatchers(const Scenario& base, const Catalog& catalog,
                                              const std::vector<std::string>& dispatchers) {
  need_two(dispatchers.size(), "--dispatchers");
  std::vector<CompareInput> out;
  for (const std::string& d : dispatchers) {
    if (catalog.dispatchers().count(d) == 0) {
      std::string known;
      for (const auto& [name, spec] : catalog.dispatchers()) known += (known.empty() ? "" : ", ") + name;
      throw InputError({"", 0}, "--dispatchers", d, "a catalog dispatcher: one of " + known);
    }
    Scenario s = base;
    s.dispatcher = catalog.dispatcher(d);
    out.push_back(checked(std::move(s), d, "--dispatchers"));
  }
  return out;
}

std::vector<CompareInput> compare_precisions(const Scenario& base,
                                             const std::vector<std::string>& precisions) {
  need_two(precisions.size(), "--precision");
  std::vector<CompareInput> out;
  for (const std::string& p : precisions) {
    ScenarioChoices choices;
    choices.precision = parse_precision_choice(p, "--precision");
    out.push_back(checked(apply_scenario_choices(base, choices), p, "--precision"));
  }
  return out;
}

std::vector<CompareInput> compare_node_counts(const Scenario& base, const std::vector<int>& nodes) {
  need_two(nodes.size(), "--nodes");
  std::vector<CompareInput> out;
  for (int n : nodes) {
    Scenario s = rescale(base, n, base.parallel.pp, base.training.micro_batch);
    const std::string label = std::to_string(n) + " nodes";
    if (s.parallel.dp == 0) {
      throw InputError({"", 0}, "--nodes", std::to_string(n),
                       concat({"a node count whose ", std::to_string(s.gpus()),
                               " GPUs divide by tp x cp x pp = ", std::to_string(base.parallel.tp), " x ",
                               std::to_string(base.parallel.cp), " x ", std::to_string(base.parallel.pp)}));
    }
    out.push_back(checked(std::move(s), label, "--nodes"));
  }
  return out;
}

std::vector<std::string> differences(const Scenario& a, const Scenario& b) {
  std::vector<std::string> out;
  const auto add = [&out](bool differ, const char* name) {
    if (differ) out.emplace_back(name);
  };
  const ParallelLayout& p = a.parallel;
  const ParallelLayout& q = b.parallel;
  const TrainingConfig& s = a.training;
  const TrainingConfig& t = b.training;
  add(a.model.name != b.model.name || a.model.layers != b.model.layers, "model");
  add(a.instance.name != b.instance.name, "instance");
  add(a.nodes != b.nodes, "nodes");
  add(p.tp != q.tp || p.pp != q.pp || p.vpp != q.vpp || p.ep != q.ep || p.etp != q.etp || p.cp != q.cp ||
          p.dp != q.dp,
      "layout");
  add(s.micro_batch != t.micro_batch, "micro_batch");
  add(s.global_batch != t.global_batch, "global_batch");
  add(s.seq_length != t.seq_length, "seq_length");
  add(s.recompute != t.recompute, "recompute");
  add(s.precision != t.precision || s.fp8_dispatch != t.fp8_dispatch, "precision");
  add(s.overlap_moe_a2a != t.overlap_moe_a2a || s.overlap_grad_reduce != t.overlap_grad_reduce ||
          s.overlap_param_gather != t.overlap_param_gather,
      "overlap");
  add(a.dispatcher.name != b.dispatcher.name || s.moe_pad_to_capacity != t.moe_pad_to_capacity, "dispatcher");
  add(a.routing.kind != b.routing.kind || a.routing.zipf_exponent != b.routing.zipf_exponent ||
          a.routing.histogram_path != b.routing.histogram_path || a.routing.seed != b.routing.seed,
      "routing");
  add(a.stack.spec.name != b.stack.spec.name || a.stack.p2p_net_chunk_bytes != b.stack.p2p_net_chunk_bytes,
      "stack");
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

// The pair's band, verdict and its source text.
void band_pair(const CompareEntry& first, const CompareEntry& other, const FittedProfile& profile,
               ComparePair& pair) {
  pair.difference_s = other.iteration_s - first.iteration_s;
  pair.ratio = other.iteration_s / first.iteration_s;
  pair.own_lo = other.spread.band.lo_s / first.spread.band.hi_s;
  pair.own_hi = other.spread.band.hi_s / first.spread.band.lo_s;
  const Novelty nov_first = novelty_of(first.scenario, profile);
  const Novelty nov_other = novelty_of(other.scenario, profile);
  const double u_first = margin_uncertainty(profile, nov_first);
  const double u_other = margin_uncertainty(profile, nov_other);
  pair.uncertainty = std::max(u_first, u_other);
  if (pair.uncertainty < 0) {
    pair.ratio_lo = pair.own_lo;
    pair.ratio_hi = pair.own_hi;
    pair.band_source =
        "the ratio of the two predictions' own bands: the profile has no paired out-of-sample errors "
        "([cross_validated_margin]; fit with validate --fit --cv), so nothing of the shared error cancels";
  } else {
    // The unmeasured dispatcher's terms: the ratio's ends at its fastest and slowest terms.
    const double u = pair.uncertainty;
    pair.ratio_lo = other.spread.fastest_s / first.spread.slowest_s / (1 + u);
    pair.ratio_hi = other.spread.slowest_s / first.spread.fastest_s * (1 + u);
    const Novelty& wider = u_other > u_first ? nov_other : nov_first;
    const double base = margin_uncertainty(profile);
    std::string s = concat(
        {"paired out-of-sample errors of the fit ([cross_validated_margin]: the predicted time ratio of two "
         "dispatchers on one measured layout, ",
         profile.cv_scheme.empty() ? std::string("cross-validated") : profile.cv_scheme, ", ",
         std::to_string(profile.cross_validated_margin.pairs), " pairs): p90 |error| ",
         format_fixed(base * 100, 1), "%"});
    if (u > base) {
      s += concat({", widened to ", format_fixed(u * 100, 1), "% at novelty ", wider.level(), " (",
                   wider.summary(), ") as recommend's margins are"});
    }
    const bool dispatcher_only = pair.differs.size() == 1 && pair.differs[0] == "dispatcher";
    if (!dispatcher_only && !pair.differs.empty()) {
      s += concat({"; this pair differs in ", joined(pair.differs, ", "),
                   ", not in its dispatcher alone: the dispatcher pairs' error is taken for it (an "
                   "assumption: no measured pair differs that way)"});
    }
    if (!first.spread.own_terms || !other.spread.own_terms) {
      s += "; spans the A2A terms of an unmeasured dispatcher's measured relatives";
    }
    pair.band_source = s;
  }
  pair.beyond = pair.ratio_lo > 1 || pair.ratio_hi < 1;
}

// Both entries measured at their own scale: the settling run when the node counts differ (a smaller run
// of one says nothing about the other's scaling).
void settle_at_own_scales(const CompareEntry& a, const CompareEntry& b, ComparePair& pair) {
  const SettlingOptions o;
  const int iterations = o.warmup_iterations + o.measured_iterations;
  pair.settle_node_hours = (a.scenario.nodes * (iterations * a.iteration_s + o.job_startup_s) +
                            b.scenario.nodes * (iterations * b.iteration_s + o.job_startup_s)) /
                           3600;
  pair.settle_with =
      concat({"measure both at their own node counts (", std::to_string(a.scenario.nodes), " and ",
              std::to_string(b.scenario.nodes), "), ", std::to_string(iterations),
              " iterations each: ", format_fixed(pair.settle_node_hours, 1), " node-hours (job start-up ",
              format_fixed(o.job_startup_s / 60, 0), " min each, an assumption)"});
}

}  // namespace

Comparison compare(const std::vector<CompareInput>& inputs, const FittedProfile& profile, int threads,
                   const CompareMemory& memory) {
  if (inputs.size() < 2) {
    throw InputError({"", 0}, "compare", std::to_string(inputs.size()) + " scenarios",
                     "two or more scenario files, or one with --dispatchers, --precision or --nodes");
  }
  Comparison c;
  c.profile = profile_label(profile);
  c.memory = memory;
  c.entries.resize(inputs.size());
  // Memory first: a layout that does not fit would not run however its time compares, so no verdict on it
  // (and no prediction spent) unless --ignore-memory.
  std::string refused;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    CompareEntry& e = c.entries[k];
    const Scenario& s = inputs[k].scenario;
    const MemoryEstimate m =
        estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {inputs[k].label, 0}));
    e.memory_bytes = m.worst().total();
    e.hbm_bytes = m.hbm_bytes;
    e.fits = m.fits;
    e.within_headroom = within_hbm_headroom(m, memory.hbm_headroom);
    e.memory_warning = m.fits ? hbm_headroom_warning(s, m, memory.hbm_headroom) : hbm_fit_warning(s, m);
    if (!m.fits) refused += concat({refused.empty() ? "" : "; ", inputs[k].label, ": ", e.memory_warning});
  }
  if (!refused.empty() && !memory.ignore_memory) {
    throw InputError({"", 0}, "compare", refused,
                     "scenarios that fit in HBM: compare gives no verdict on a layout that does not fit "
                     "(--ignore-memory compares it anyway)");
  }
  parallel_for(inputs.size(), thread_count(threads), [&](std::size_t k) {
    CompareEntry& e = c.entries[k];
    e.label = inputs[k].label;
    e.scenario = inputs[k].scenario;
    Prediction p;
    PredictOptions options;
    try {
      options = predict_options_for(e.scenario, profile);
      p = predict(e.scenario, options);
    } catch (const InputError& error) {
      // Which entry failed: the dispatcher seam's limits are per scenario.
      throw InputError({e.label, 0}, error.what());
    }
    e.iteration_s = p.iteration_s;
    e.tokens_per_s = p.tokens_per_s;
    e.tflops_per_gpu = p.model_tflops_per_gpu;
    const double tokens_per_iteration =
        static_cast<double>(e.scenario.training.global_batch) * e.scenario.training.seq_length;
    e.node_hours_per_gtoken = node_hours_per_gtoken(p.iteration_s, e.scenario.nodes, tokens_per_iteration);
    // The band's replays run with this prediction's options and reuse its MoE seam (this thread's own).
    e.spread = a2a_term_spread(e.scenario, profile, p.iteration_s, options);
    const Novelty novelty = novelty_of(e.scenario, profile);
    e.novelty_level = novelty.level();
    e.novelty = novelty.summary();
    e.a2a_terms = a2a_terms_label(profile, e.scenario.dispatcher.name);
  });
  for (std::size_t k = 1; k < c.entries.size(); ++k) {
    ComparePair pair;
    pair.entry = k;
    const CompareEntry& first = c.entries[0];
    const CompareEntry& other = c.entries[k];
    pair.differs = differences(first.scenario, other.scenario);
    band_pair(first, other, profile, pair);
    for (const CompareEntry* e : {&first, &other}) {
      if (e->within_headroom) continue;
      pair.memory_note +=
          concat({pair.memory_note.empty() ? "" : "; ", e->label, " ",
                  e->fits ? "is beyond the HBM headroom" : "does NOT fit in HBM (--ignore-memory)", ": ",
                  memory_use_text(e->memory_bytes, e->hbm_bytes)});
    }
    if (!pair.beyond) {
      if (first.scenario.nodes != other.scenario.nodes) {
        settle_at_own_scales(first, other, pair);
      } else {
        // The run recommend names for a tie; for a pair that differs in more than its dispatcher, the two
        // configurations are what is measured.
        SettlingExperiment e = settling_experiment(first.scenario, other.scenario, profile);
        if (!(pair.differs.size() == 1 && pair.differs[0] == "dispatcher"))
          e.dispatchers = {first.label, other.label};
        pair.settle_with = describe(e, first.scenario);
        pair.settle_node_hours = e.found ? e.node_hours : 0;
      }
    }
    c.pairs.push_back(std::move(pair));
  }
  return c;
}

}  // namespace moetwin
