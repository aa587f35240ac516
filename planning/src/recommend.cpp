#include "moetwin/planning/recommend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/catalog/dispatcher_gate.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/parallel_for.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/rescale.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/sim/stack_inheritance.hpp"

namespace moetwin {

namespace {

// The scenario of one (nodes, pp, mb, dispatcher) point in `s` and its status: "ok", "invalid: <reason>"
// or "does not fit: <hbm_fit_warning>".
std::string make_point(const Scenario& base, const Catalog& catalog, const RecommendRequest& request, int n,
                       int pp, int mb, const std::string& d, Scenario& s) {
  s = rescale(base, n, pp, mb);
  if (request.global_batch > 0) s.training.global_batch = request.global_batch;
  s.dispatcher = catalog.dispatchers().at(d);
  s.name = base.name + ".n" + std::to_string(n) + ".mb" + std::to_string(mb) + "." + d;
  try {
    if (s.parallel.dp == 0) {
      throw InputError({base.source, 0}, "nodes", std::to_string(n),
                       std::to_string(s.gpus()) +
                           " GPUs divisible by tp x cp x pp = " + std::to_string(s.parallel.tp) + " x " +
                           std::to_string(s.parallel.cp) + " x " + std::to_string(pp));
    }
    validate_scenario(s, {base.source, 0});
    const MemoryEstimate mem =
        estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {base.source, 0}));
    if (!mem.fits) return hbm_fit_warning(s, mem);
  } catch (const InputError& e) {
    return std::string("invalid: ") + e.what();
  }
  return std::string("ok");
}

// Pipeline size per node count, and with pp auto why each was chosen (Recommendation::pp_notes).
std::vector<int> pipeline_sizes(const Scenario& base, const Catalog& catalog, const RecommendRequest& request,
                                const std::vector<int>& mbs, const std::vector<std::string>& dispatchers,
                                std::vector<std::string>& pp_notes) {
  std::vector<int> pp_of(request.nodes.size(), base.parallel.pp);
  for (std::size_t ni = 0; ni < request.nodes.size(); ++ni) {
    const int n = request.nodes[ni];
    if (!request.pp_auto) {
      pp_of[ni] = request.pp.empty()       ? base.parallel.pp
                  : request.pp.size() == 1 ? request.pp[0]
                                           : request.pp[ni];
      continue;
    }
    // The nearest pp where every micro-batch has a dispatcher that is valid and fits; else the nearest
    // where one micro-batch has; else the scenario's (its points say why not).
    int every = 0, some = 0;
    std::string first_reason;  // why the scenario's own pp does not do
    std::string tried;         // "pp 1: <reason>; pp 2: ..." when none does
    // Micro-batches at `pp` with a dispatcher that is valid and fits; `reason` gets the first failure.
    auto fitting_mbs = [&](int pp, std::string& reason) {
      int count = 0;
      for (int mb : mbs) {
        for (const std::string& d : dispatchers) {
          Scenario s;
          const std::string status = make_point(base, catalog, request, n, pp, mb, d, s);
          if (status == "ok") {
            ++count;
            break;
          }
          if (reason.empty()) reason = status;
        }
      }
      return count;
    };
    for (int pp : auto_pp_order(base.parallel.pp, base.model.layers)) {
      std::string reason;
      const int count = fitting_mbs(pp, reason);
      if (pp == base.parallel.pp) first_reason = reason;
      if (count == static_cast<int>(mbs.size()) && every == 0) every = pp;
      if (count > 0 && some == 0) some = pp;
      if (count == 0) tried += "\n    pp " + std::to_string(pp) + ": " + reason;
    }
    const int chosen = every > 0 ? every : some;
    if (chosen == 0) {
      // Other pipeline sizes (not powers of two) that would do, for the user to pass with --pp.
      std::string others;
      for (int pp = 3; pp <= std::max(1, base.model.layers / 2); ++pp) {
        if ((pp & (pp - 1)) == 0 ||
            (n * base.instance.gpus) % (base.parallel.tp * base.parallel.cp * pp) != 0)
          continue;
        std::string ignored;
        if (fitting_mbs(pp, ignored) > 0) others += (others.empty() ? "" : ", ") + std::to_string(pp);
      }
      pp_notes.push_back(
          std::to_string(n) + " nodes: no power-of-two pp gives a valid layout that fits" +
          (others.empty() ? std::string(" (nor any other pp)") : " (pp " + others + " would: pass --pp)") +
          "; the scenario's pp " + std::to_string(base.parallel.pp) + " shown" + tried);
      continue;
    }
    pp_of[ni] = chosen;
    pp_notes.push_back(std::to_string(n) + " nodes: pp " + std::to_string(chosen) +
                       (chosen == base.parallel.pp
                            ? std::string(" (the scenario's)")
                            : " (the scenario's pp " + std::to_string(base.parallel.pp) +
                                  " does not do: " + first_reason + ")"));
  }
  return pp_of;
}

// Dispatchers without runs: their rows predicted again with each source of their generic A2A terms, the
// points' fastest and slowest over them; returns one note per such dispatcher.
std::vector<std::string> spread_generic_terms(Recommendation& r, const FittedProfile& profile, int threads) {
  std::vector<std::size_t> generic_points;  // indices into points
  std::vector<std::size_t> generic_rows;    // their rows
  for (std::size_t k = 0; k < r.points.size(); ++k) {
    if (r.points[k].status == "ok" && !r.points[k].own_terms) {
      generic_points.push_back(k);
      generic_rows.push_back(r.points[k].row);
    }
  }
  std::vector<std::string> notes;
  if (generic_rows.empty()) return notes;
  std::string sources;
  for (const auto& [name, variant] : generic_a2a_sources(profile)) {
    sources += (sources.empty() ? "" : " and ") + name + "'s";
    const std::vector<RowPrediction> alt = predict_rows(r.rows, generic_rows, variant, threads);
    for (std::size_t k = 0; k < generic_points.size(); ++k) {
      RecommendPoint& pt = r.points[generic_points[k]];
      const RowPrediction& p = alt[k];
      if (!p.ok) {
        pt.status = "invalid: " + p.error;
        continue;
      }
      pt.fastest_s = std::min(pt.fastest_s, p.iteration_s);
      pt.slowest_s = std::max(pt.slowest_s, p.iteration_s);
    }
  }
  std::vector<std::string> names;
  for (std::size_t k : generic_points) {
    if (std::find(names.begin(), names.end(), r.points[k].dispatcher) == names.end())
      names.push_back(r.points[k].dispatcher);
  }
  for (const std::string& d : names) {
    notes.push_back(d + ": no live runs of it in the fit; its A2A terms are the per-term median of " +
                    sources + ", and its band spans its predictions with each of their terms");
  }
  return notes;
}

// A stack without rows: every valid point predicted again on the fitted stack it inherits from, the
// points' fastest and slowest over that answer too, as the band every other command prints spans it
// (a2a_term_spread: the changed components' modelled differences were never measured in training);
// returns one note, none for a fitted stack. Same options as the central predictions (predict_rows).
std::vector<std::string> spread_inherited_stack(Recommendation& r, const FittedProfile& profile,
                                                int threads) {
  std::vector<std::size_t> ok;  // indices into points
  for (std::size_t k = 0; k < r.points.size(); ++k) {
    if (r.points[k].status == "ok") ok.push_back(k);
  }
  std::vector<std::optional<InheritedStackPrediction>> on_inherited(ok.size());
  std::vector<std::string> errors(ok.size());
  parallel_for(ok.size(), std::max(1, threads), [&](std::size_t i) {
    try {
      on_inherited[i] = predict_on_inherited_stack(r.rows[r.points[ok[i]].row].scenario, profile);
    } catch (const InputError& e) {
      errors[i] = e.what();
    }
  });
  std::string from;
  for (std::size_t i = 0; i < ok.size(); ++i) {
    RecommendPoint& pt = r.points[ok[i]];
    if (!errors[i].empty()) {
      pt.status = "invalid: " + errors[i];
      continue;
    }
    if (!on_inherited[i]) continue;
    from = on_inherited[i]->from;
    pt.fastest_s = std::min(pt.fastest_s, on_inherited[i]->predicted_s);
    pt.slowest_s = std::max(pt.slowest_s, on_inherited[i]->predicted_s);
  }
  if (from.empty()) return {};
  return {concat({"stack ", r.rows[r.points[ok.front()].row].scenario.stack.spec.name,
                  ": no live runs in the fit; it inherits the terms of ", from,
                  ", and each band spans the point's prediction on ", from,
                  " (the changed components' modelled differences were never measured in training)"})};
}

// Ranks the dispatchers of the group whose points start at `first`; appends its winner line and its tie.
RecommendGroup rank_group(Recommendation& r, std::size_t first, const FittedProfile& profile) {
  RecommendGroup group;
  group.first = first;
  const std::size_t end = first + r.dispatchers.size();
  std::vector<std::size_t>& ok = group.ranked;
  for (std::size_t k = first; k < end; ++k) {
    if (r.points[k].status == "ok") ok.push_back(k);
  }
  const auto time_of = [&r](std::size_t k) { return r.predictions[r.points[k].row].iteration_s; };
  std::stable_sort(ok.begin(), ok.end(),
                   [&](std::size_t a, std::size_t b) { return time_of(a) < time_of(b); });
  const std::string label = r.points[first].label();
  const Novelty novelty = ok.empty() ? Novelty{} : novelty_of(r.rows[r.points[ok[0]].row].scenario, profile);
  group.uncertainty = margin_uncertainty(profile, novelty);
  if (ok.empty()) {
    r.winners.push_back(label + ": no valid dispatcher");
    return group;
  }
  const double t0 = time_of(ok[0]);
  const Scenario& winner_scenario = r.rows[r.points[ok[0]].row].scenario;
  group.winner = r.points[ok[0]].dispatcher;
  // Every other dispatcher: tied with the winner (within the uncertainty) or behind beyond it. Real only if
  // it holds for whichever terms an unmeasured dispatcher has: the winner at its slowest, the other at its
  // fastest.
  std::string tied, behind;
  for (std::size_t k = 1; k < ok.size(); ++k) {
    RecommendPoint& pt = r.points[ok[k]];
    pt.beyond = margin_exceeds_uncertainty(profile, r.points[ok[0]].slowest_s, pt.fastest_s, novelty);
    const std::string entry = pt.dispatcher + " +" + format_fixed((time_of(ok[k]) / t0 - 1) * 100, 1) + "%";
    std::string& list = pt.beyond ? behind : tied;
    list += (list.empty() ? "" : ", ") + entry;
  }
  if (ok.size() > 1) {
    group.margin = time_of(ok[1]) / t0 - 1;
    group.exceeds = r.points[ok[1]].beyond;
    if (!group.exceeds) {
      // A tie: the run that settles the winner against the runner-up, measuring every tied one.
      std::vector<std::string> others;
      for (std::size_t k = 2; k < ok.size(); ++k) {
        if (!r.points[ok[k]].beyond) others.push_back(r.points[ok[k]].dispatcher);
      }
      group.settle =
          settling_experiment(winner_scenario, r.rows[r.points[ok[1]].row].scenario, profile, others);
      r.ties.push_back(label + ": " + group.winner + " vs " + r.points[ok[1]].dispatcher + " +" +
                       format_fixed(group.margin * 100, 1) + "%: " + describe(group.settle, winner_scenario));
    }
  }
  r.winners.push_back(label + ": " + group.winner + " " + format_fixed(t0, 3) + " s" +
                      (ok.size() > 1 ? "; within the uncertainty: " + (tied.empty() ? "none" : tied) +
                                           "; behind beyond it: " + (behind.empty() ? "none" : behind)
                                     : ", the only valid dispatcher"));
  return group;
}

}  // namespace

std::string RecommendPoint::label() const {
  return "nodes " + std::to_string(nodes) + " (pp " + std::to_string(pp) + "), mb " + std::to_string(mb);
}

std::vector<int> auto_pp_order(int scenario_pp, int layers) {
  std::vector<int> out;
  for (int pp = 1; pp <= 64 && pp <= std::max(1, layers / 2); pp *= 2) out.push_back(pp);
  const auto distance = [scenario_pp](int pp) {
    return std::abs(std::log2(static_cast<double>(pp) / static_cast<double>(scenario_pp)));
  };
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    if (distance(a) != distance(b)) return distance(a) < distance(b);
    return a < b;
  });
  return out;
}

std::vector<std::string> crossovers(const std::map<std::pair<int, int>, std::string>& winner_at,
                                    const std::vector<int>& nodes, const std::vector<int>& micro_batches) {
  std::vector<std::string> out;
  for (int mb : micro_batches) {
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      const auto a = winner_at.find({mb, nodes[i - 1]});
      const auto b = winner_at.find({mb, nodes[i]});
      if (a != winner_at.end() && b != winner_at.end() && a->second != b->second) {
        out.push_back("mb " + std::to_string(mb) + ": " + a->second + " at " + std::to_string(nodes[i - 1]) +
                      " nodes -> " + b->second + " at " + std::to_string(nodes[i]) + " nodes");
      }
    }
  }
  for (int n : nodes) {
    for (std::size_t i = 1; i < micro_batches.size(); ++i) {
      const auto a = winner_at.find({micro_batches[i - 1], n});
      const auto b = winner_at.find({micro_batches[i], n});
      if (a != winner_at.end() && b != winner_at.end() && a->second != b->second) {
        out.push_back(std::to_string(n) + " nodes: " + a->second + " at mb " +
                      std::to_string(micro_batches[i - 1]) + " -> " + b->second + " at mb " +
                      std::to_string(micro_batches[i]));
      }
    }
  }
  return out;
}

Recommendation recommend(const Scenario& base, const Catalog& catalog, const FittedProfile& profile,
                         const RecommendRequest& request) {
  Recommendation r;
  r.base = base;
  r.tokens = request.tokens;
  r.price_usd_per_hour =
      request.price_usd_per_hour >= 0 ? request.price_usd_per_hour : base.instance.price_usd_per_hour;
  r.price_source = request.price_usd_per_hour >= 0 ? std::string("--price") : base.instance.price_source;
  r.hbm_headroom = request.hbm_headroom;
  r.nodes = request.nodes;
  r.micro_batches =
      request.micro_batches.empty() ? std::vector<int>{base.training.micro_batch} : request.micro_batches;
  r.dispatchers = request.dispatchers;
  if (r.dispatchers.empty()) {
    // Every catalog dispatcher that can run here; the others are named with the reason (a named one is
    // predicted and refused per point instead).
    for (const auto& [name, spec] : catalog.dispatchers()) {
      auto why = dispatcher_refusal(spec, base.instance, base.gpu, base.parallel.etp * base.parallel.ep,
                                    base.gpus());
      if (!why) why = rank_cap_refusal(spec, base.parallel.ep);
      if (why) {
        r.excluded_dispatchers.push_back(concat({name, ": ", *why}));
        continue;
      }
      r.dispatchers.push_back(name);
    }
  }
  for (const std::string& d : r.dispatchers) {
    if (catalog.dispatchers().count(d) == 0)
      throw InputError({"", 0}, "--dispatchers", d, "a catalog dispatcher");
  }
  const std::vector<int> pp_of =
      pipeline_sizes(base, catalog, request, r.micro_batches, r.dispatchers, r.pp_notes);

  // Every (mb, nodes, dispatcher) point; the valid ones become rows to predict.
  for (int mb : r.micro_batches) {
    for (std::size_t ni = 0; ni < r.nodes.size(); ++ni) {
      const int n = r.nodes[ni];
      for (const std::string& d : r.dispatchers) {
        RecommendPoint pt;
        pt.nodes = n;
        pt.pp = pp_of[ni];
        pt.mb = mb;
        pt.dispatcher = d;
        Scenario s;
        pt.status = make_point(base, catalog, request, n, pp_of[ni], mb, d, s);
        if (pt.status == "ok") {
          pt.row = r.rows.size();
          LiveRun row;
          row.scenario = std::move(s);
          r.rows.push_back(std::move(row));
        }
        r.points.push_back(pt);
      }
    }
  }
  r.predictions = predict_rows(r.rows, all_rows(r.rows.size()), profile, request.threads);
  for (RecommendPoint& pt : r.points) {
    if (pt.status == "ok" && !r.predictions[pt.row].ok) pt.status = "invalid: " + r.predictions[pt.row].error;
    if (pt.status != "ok") continue;
    pt.fastest_s = pt.slowest_s = r.predictions[pt.row].iteration_s;
    pt.own_terms = !profile.fitted || has_own_a2a_terms(profile, pt.dispatcher);
  }
  r.generic_notes = spread_generic_terms(r, profile, request.threads);
  for (std::string& note : spread_inherited_stack(r, profile, request.threads))
    r.generic_notes.push_back(std::move(note));
  // Dispatchers whose mechanisms are one here price alike: say so rather than show a silent tie.
  for (std::size_t i = 0; i < r.dispatchers.size(); ++i) {
    for (std::size_t j = i + 1; j < r.dispatchers.size(); ++j) {
      if (const auto why = same_mechanism_note(catalog.dispatcher(r.dispatchers[i]),
                                               catalog.dispatcher(r.dispatchers[j]), base.instance))
        r.generic_notes.push_back(*why);
    }
  }

  r.uncertainty = margin_uncertainty(profile);
  std::map<std::pair<int, int>, std::string> winner_at;  // (mb, nodes) -> winner
  for (std::size_t g = 0; g < r.points.size(); g += r.dispatchers.size()) {
    r.groups.push_back(rank_group(r, g, profile));
    if (!r.groups.back().winner.empty())
      winner_at[{r.points[g].mb, r.points[g].nodes}] = r.groups.back().winner;
  }
  r.crossovers = crossovers(winner_at, r.nodes, r.micro_batches);
  return r;
}

std::string nothing_valid_message(const Recommendation& r) {
  bool any_ok = false;
  std::vector<std::string> why;
  for (const RecommendPoint& pt : r.points) {
    if (pt.status == "ok") any_ok = true;
    if (pt.status != "ok" && std::find(why.begin(), why.end(), pt.status) == why.end())
      why.push_back(pt.status);
  }
  if (any_ok) return "";
  std::string message = "no dispatcher is valid at any point (nodes x pp x mb):";
  for (const std::string& w : why) message += "\n  " + w;
  for (const std::string& n : r.pp_notes) message += "\n  pp auto: " + n;
  return message;
}

}  // namespace moetwin
