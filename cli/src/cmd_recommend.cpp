// `moetwin recommend SCENARIO --nodes 4,8,16,32,64 [--mb 1,4,8]`: for every scale and micro-batch, every
// dispatcher valid there is predicted with its uncertainty band (the fitted profile's cross-validated
// residuals); the winner, its margin over the runner-up and whether the margin exceeds the uncertainty
// (the cross-validated error of predicted margins, margin_exceeds_uncertainty); then the crossovers (where
// the winner changes) in node count and micro-batch. A dispatcher the fit had no runs of is also predicted
// with each measured relative's A2A terms (generic_a2a_sources): its band and its margins cover them all.
// Wiring only.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "commands.hpp"
#include "moetwin/accounting/memory_model.hpp"
#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/input_error.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/settling_experiment.hpp"
#include "moetwin/reports/result_table.hpp"
#include "moetwin/scenario/pipeline_layout.hpp"
#include "moetwin/scenario/scenario_parser.hpp"
#include "moetwin/validate/row_predictions.hpp"
#include "prediction_columns.hpp"

namespace moetwin::cli {

namespace {

struct RecommendOptions {
  std::string scenario;
  std::vector<int> nodes;
  std::vector<int> mbs;
  std::vector<std::string> dispatchers;
  // {"auto"} (default): per node count the valid pipeline size nearest the scenario's (pp_auto); one
  // number: every node count; else one per node count.
  std::vector<std::string> pp = {"auto"};
  int gbs = 0;
  std::string profile;
  int threads = 2;
  std::string format = "text";
  std::string out;
};

struct Point {
  int nodes = 0;
  int pp = 0;
  int mb = 0;
  std::string dispatcher;
  std::string status = "ok";  // ok | invalid: ... | does not fit: ...
  std::size_t row = 0;        // index into the predicted rows when status is ok
  bool own_terms = true;      // the profile has the dispatcher's own fitted A2A terms
  double fastest_s = 0;       // over the generic terms' sources (== the prediction with own terms)
  double slowest_s = 0;
  bool beyond = false;  // behind its point's winner beyond the uncertainty (margin_exceeds_uncertainty)
};

// Powers of two `pp auto` tries (the sizes `plan` searches), nearest the scenario's first (log distance,
// the smaller on ties: less bubble), at most half the layers (no stage of a single layer).
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

std::string point_label(const Point& p) {
  return "nodes " + std::to_string(p.nodes) + " (pp " + std::to_string(p.pp) + "), mb " +
         std::to_string(p.mb);
}

}  // namespace

void add_recommend_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cmd = app.add_subcommand(
      "recommend", "Best dispatcher per scale and micro-batch, with uncertainty bands and crossovers");
  auto o = std::make_shared<RecommendOptions>();
  cmd->add_option("SCENARIO", o->scenario, "Scenario file (.toml): model, instance, layout, batch")
      ->required();
  cmd->add_option("--nodes", o->nodes, "Node counts, e.g. 8,16,32,64")
      ->delimiter(',')
      ->required()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--mb", o->mbs, "Micro-batch sizes (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--dispatchers", o->dispatchers,
                  "Dispatchers to compare (default: every catalog dispatcher)")
      ->delimiter(',');
  cmd->add_option("--pp", o->pp,
                  "Pipeline stages: auto (default: per node count the valid power of two nearest the "
                  "scenario's pp, said in the output), one value for every node count, or one per --nodes "
                  "entry (e.g. --nodes 8,16,32 --pp 2,4,8)")
      ->delimiter(',');
  cmd->add_option("--gbs", o->gbs, "Global batch (default: the scenario's)")->check(CLI::Range(1, 1 << 24));
  add_profile_option(cmd, o->profile);
  cmd->add_option("--threads", o->threads, "Predictions in parallel (results identical for any count)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--format", o->format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--out", o->out, "Output file, written atomically (default stdout)");
  cmd->callback([o, &global] {
    const std::string catalog_dir = global.catalog_dir.empty() ? Catalog::default_dir() : global.catalog_dir;
    const Catalog catalog = Catalog::load(catalog_dir);
    const Scenario base = load_scenario_file(o->scenario, catalog);
    const FittedProfile profile = resolve_fitted_profile(o->profile);
    std::vector<int> mbs = o->mbs.empty() ? std::vector<int>{base.training.micro_batch} : o->mbs;
    if (o->pp.size() > 1 && o->pp.size() != o->nodes.size()) {
      throw InputError({"", 0}, "--pp", std::to_string(o->pp.size()) + " values",
                       "one value, or one per --nodes entry (" + std::to_string(o->nodes.size()) + ")");
    }
    const bool pp_auto = o->pp.size() == 1 && o->pp[0] == "auto";
    std::vector<int> pp_values;
    if (!pp_auto) {
      for (const std::string& v : o->pp) {
        char* end = nullptr;
        const long pp = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || pp < 1 || pp > 512) {
          throw InputError({"", 0}, "--pp", v, "auto, or pipeline sizes in [1, 512]");
        }
        pp_values.push_back(static_cast<int>(pp));
      }
    }
    std::vector<std::string> dispatchers = o->dispatchers;
    if (dispatchers.empty()) {
      for (const auto& [name, spec] : catalog.dispatchers()) dispatchers.push_back(name);
    }
    for (const std::string& d : dispatchers) {
      if (catalog.dispatchers().count(d) == 0)
        throw InputError({"", 0}, "--dispatchers", d, "a catalog dispatcher");
    }

    // The scenario of one (nodes, pp, mb, dispatcher) point and its status: "ok", "invalid: <reason>" or
    // "does not fit: <hbm_fit_warning>".
    auto make_point = [&](int n, int pp, int mb, const std::string& d, Scenario& s) {
      s = base;
      s.nodes = n;
      s.training.micro_batch = mb;
      s.parallel.pp = pp;
      if (o->gbs > 0) s.training.global_batch = o->gbs;
      s.dispatcher = catalog.dispatchers().at(d);
      s.name = base.name + ".n" + std::to_string(n) + ".mb" + std::to_string(mb) + "." + d;
      const int per_replica = s.parallel.tp * s.parallel.cp * s.parallel.pp;
      try {
        if (s.gpus() % per_replica != 0) {
          throw InputError({base.source, 0}, "nodes", std::to_string(n),
                           std::to_string(s.gpus()) +
                               " GPUs divisible by tp x cp x pp = " + std::to_string(s.parallel.tp) + " x " +
                               std::to_string(s.parallel.cp) + " x " + std::to_string(pp));
        }
        s.parallel.dp = s.gpus() / per_replica;
        validate_scenario(s, {base.source, 0});
        const MemoryEstimate mem =
            estimate_memory(s, make_pipeline_layout(s.model, s.parallel, {base.source, 0}));
        if (!mem.fits) return hbm_fit_warning(s, mem);
      } catch (const InputError& e) {
        return std::string("invalid: ") + e.what();
      }
      return std::string("ok");
    };
    // Pipeline size per node count, and for `auto` why it was chosen.
    std::vector<int> pp_of(o->nodes.size(), base.parallel.pp);
    std::vector<std::string> pp_notes;
    for (std::size_t ni = 0; ni < o->nodes.size(); ++ni) {
      const int n = o->nodes[ni];
      if (!pp_auto) {
        pp_of[ni] = pp_values.empty()       ? base.parallel.pp
                    : pp_values.size() == 1 ? pp_values[0]
                                            : pp_values[ni];
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
            const std::string status = make_point(n, pp, mb, d, s);
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

    // Every (mb, nodes, dispatcher) point; the valid ones become rows to predict.
    std::vector<Point> points;
    std::vector<LiveRun> rows;
    for (int mb : mbs) {
      for (std::size_t ni = 0; ni < o->nodes.size(); ++ni) {
        const int n = o->nodes[ni];
        for (const std::string& d : dispatchers) {
          Point pt{n, pp_of[ni], mb, d, "ok", 0};
          Scenario s;
          pt.status = make_point(n, pp_of[ni], mb, d, s);
          if (pt.status == "ok") {
            pt.row = rows.size();
            LiveRun r;
            r.scenario = std::move(s);
            rows.push_back(std::move(r));
          }
          points.push_back(pt);
        }
      }
    }
    const std::vector<RowPrediction> preds = predict_rows(rows, all_rows(rows.size()), profile, o->threads);
    for (Point& pt : points) {
      if (pt.status == "ok" && !preds[pt.row].ok) pt.status = "invalid: " + preds[pt.row].error;
      if (pt.status != "ok") continue;
      pt.fastest_s = pt.slowest_s = preds[pt.row].iteration_s;
      pt.own_terms = !profile.fitted || has_own_a2a_terms(profile, pt.dispatcher);
    }
    // Dispatchers without runs: the same rows with each source of their generic A2A terms.
    std::vector<std::size_t> generic_points;  // indices into points
    std::vector<std::size_t> generic_rows;    // their rows
    for (std::size_t k = 0; k < points.size(); ++k) {
      if (points[k].status == "ok" && !points[k].own_terms) {
        generic_points.push_back(k);
        generic_rows.push_back(points[k].row);
      }
    }
    std::vector<std::string> generic_notes;  // which dispatchers, from which sources
    if (!generic_rows.empty()) {
      std::string sources;
      for (const auto& [name, variant] : generic_a2a_sources(profile)) {
        sources += (sources.empty() ? "" : " and ") + name + "'s";
        const std::vector<RowPrediction> alt = predict_rows(rows, generic_rows, variant, o->threads);
        for (std::size_t k = 0; k < generic_points.size(); ++k) {
          Point& pt = points[generic_points[k]];
          const RowPrediction& r = alt[k];
          if (!r.ok) {
            pt.status = "invalid: " + r.error;
            continue;
          }
          pt.fastest_s = std::min(pt.fastest_s, r.iteration_s);
          pt.slowest_s = std::max(pt.slowest_s, r.iteration_s);
        }
      }
      std::vector<std::string> names;
      for (std::size_t k : generic_points) {
        if (std::find(names.begin(), names.end(), points[k].dispatcher) == names.end())
          names.push_back(points[k].dispatcher);
      }
      for (const std::string& d : names) {
        generic_notes.push_back(d +
                                ": no live runs of it in the fit; its A2A terms are the per-term median of " +
                                sources + ", and its band spans its predictions with each of their terms");
      }
    }

    ResultTable table;
    table.columns = {"model",
                     "instance",
                     "nodes",
                     "pp",
                     "mb",
                     "dispatcher",
                     "status",
                     "predicted_iter_s",
                     "predicted_lo_s",
                     "predicted_hi_s",
                     "novelty_level",
                     "novelty",
                     "a2a_terms",
                     "winner",
                     "margin_pct",
                     "margin_uncertainty_pct",
                     "margin_exceeds_uncertainty",
                     "behind_winner_pct",
                     "behind_beyond_uncertainty",
                     "settle_with",
                     "settle_node_hours",
                     "settle_margin_after_pct"};
    for (const std::string& c : predict_columns()) {
      if (c != "predicted_iter_s") table.columns.push_back(c);
    }
    const double uncertainty = margin_uncertainty(profile);  // in family; -1: none in the profile (band rule)
    std::vector<std::string> ties;                           // each tie with the run that settles it
    std::vector<std::string> lines;                          // winners and crossovers for the text summary
    std::map<std::pair<int, int>, std::string> winner_at;    // (mb, nodes) -> winner
    for (std::size_t g = 0; g < points.size(); g += dispatchers.size()) {
      // Group of one (mb, nodes): rank the valid dispatchers.
      std::vector<std::size_t> ok;
      for (std::size_t k = g; k < g + dispatchers.size(); ++k) {
        if (points[k].status == "ok") ok.push_back(k);
      }
      std::stable_sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) {
        return preds[points[a].row].iteration_s < preds[points[b].row].iteration_s;
      });
      std::string winner;
      double margin = 0;
      bool exceeds = false;
      // The group's novelty (its dispatchers share everything else) and the margin uncertainty there.
      const Novelty group_novelty =
          ok.empty() ? Novelty{} : novelty_of(rows[points[ok[0]].row].scenario, profile);
      const double group_uncertainty = margin_uncertainty(profile, group_novelty);
      SettlingExperiment settle;
      if (!ok.empty()) {
        const double t0 = preds[points[ok[0]].row].iteration_s;
        winner = points[ok[0]].dispatcher;
        winner_at[{points[g].mb, points[g].nodes}] = winner;
        // Every other dispatcher: tied with the winner (within the uncertainty) or behind beyond it. Real
        // only if it holds for whichever terms an unmeasured dispatcher has: the winner at its slowest, the
        // other at its fastest.
        std::string tied, behind;
        for (std::size_t r = 1; r < ok.size(); ++r) {
          Point& pt = points[ok[r]];
          pt.beyond =
              margin_exceeds_uncertainty(profile, points[ok[0]].slowest_s, pt.fastest_s, group_novelty);
          const std::string entry =
              pt.dispatcher + " +" + format_fixed((preds[pt.row].iteration_s / t0 - 1) * 100, 1) + "%";
          std::string& list = pt.beyond ? behind : tied;
          list += (list.empty() ? "" : ", ") + entry;
        }
        if (ok.size() > 1) {
          margin = preds[points[ok[1]].row].iteration_s / t0 - 1;
          exceeds = points[ok[1]].beyond;
          if (!exceeds) {
            // A tie: the run that settles the winner against the runner-up, measuring every tied one.
            std::vector<std::string> others;
            for (std::size_t r = 2; r < ok.size(); ++r) {
              if (!points[ok[r]].beyond) others.push_back(points[ok[r]].dispatcher);
            }
            settle = settling_experiment(rows[points[ok[0]].row].scenario, rows[points[ok[1]].row].scenario,
                                         profile, others);
            ties.push_back(point_label(points[g]) + ": " + winner + " vs " + points[ok[1]].dispatcher + " +" +
                           format_fixed(margin * 100, 1) +
                           "%: " + describe(settle, rows[points[ok[0]].row].scenario));
          }
        }
        lines.push_back(point_label(points[g]) + ": " + winner + " " + format_fixed(t0, 3) + " s" +
                        (ok.size() > 1 ? "; within the uncertainty: " + (tied.empty() ? "none" : tied) +
                                             "; behind beyond it: " + (behind.empty() ? "none" : behind)
                                       : ", the only valid dispatcher"));
      } else {
        lines.push_back(point_label(points[g]) + ": no valid dispatcher");
      }
      for (std::size_t k = g; k < g + dispatchers.size(); ++k) {
        const Point& pt = points[k];
        std::vector<Cell> row = {base.model.name,
                                 base.instance.name,
                                 Cell::integer(pt.nodes),
                                 Cell::integer(pt.pp),
                                 Cell::integer(pt.mb),
                                 pt.dispatcher,
                                 pt.status};
        if (pt.status == "ok") {
          const Prediction& p = preds[pt.row].detail;
          row.push_back(Cell::fixed(p.iteration_s, 6));
          const Novelty novelty = novelty_of(rows[pt.row].scenario, profile);
          row.push_back(Cell::fixed(band_for(profile, pt.fastest_s, novelty).lo_s, 6));
          row.push_back(Cell::fixed(band_for(profile, pt.slowest_s, novelty).hi_s, 6));
          row.emplace_back(novelty.level());
          row.emplace_back(novelty.summary());
          row.push_back(a2a_terms_label(profile, pt.dispatcher));
          row.push_back(winner);
          row.push_back(Cell::fixed(margin * 100, 2));
          row.push_back(group_uncertainty >= 0 ? Cell::fixed(group_uncertainty * 100, 2) : Cell(""));
          row.push_back(Cell::boolean(exceeds));
          row.push_back(Cell::fixed((p.iteration_s / preds[points[ok[0]].row].iteration_s - 1) * 100, 2));
          row.push_back(Cell::boolean(pt.beyond));
          const bool settles_this =
              settle.found && std::find(settle.dispatchers.begin(), settle.dispatchers.end(),
                                        pt.dispatcher) != settle.dispatchers.end();
          row.emplace_back(settles_this ? describe(settle, rows[pt.row].scenario) : std::string());
          row.push_back(settles_this ? Cell::fixed(settle.node_hours, 2) : Cell(""));
          row.push_back(settles_this ? Cell::fixed(settle.margin_after * 100, 2) : Cell(""));
          const std::vector<Cell> cells = predict_cells(p);
          for (std::size_t c = 1; c < cells.size(); ++c) row.push_back(cells[c]);
        } else {
          while (row.size() < table.columns.size()) row.emplace_back("");
        }
        table.add_row(std::move(row));
      }
    }
    // Crossovers: consecutive node counts (per mb) and consecutive micro-batches (per node count) whose
    // winners differ.
    std::vector<std::string> crossovers;
    for (int mb : mbs) {
      for (std::size_t i = 1; i < o->nodes.size(); ++i) {
        const auto a = winner_at.find({mb, o->nodes[i - 1]});
        const auto b = winner_at.find({mb, o->nodes[i]});
        if (a != winner_at.end() && b != winner_at.end() && a->second != b->second) {
          crossovers.push_back("mb " + std::to_string(mb) + ": " + a->second + " at " +
                               std::to_string(o->nodes[i - 1]) + " nodes -> " + b->second + " at " +
                               std::to_string(o->nodes[i]) + " nodes");
        }
      }
    }
    for (int n : o->nodes) {
      for (std::size_t i = 1; i < mbs.size(); ++i) {
        const auto a = winner_at.find({mbs[i - 1], n});
        const auto b = winner_at.find({mbs[i], n});
        if (a != winner_at.end() && b != winner_at.end() && a->second != b->second) {
          crossovers.push_back(std::to_string(n) + " nodes: " + a->second + " at mb " +
                               std::to_string(mbs[i - 1]) + " -> " + b->second + " at mb " +
                               std::to_string(mbs[i]));
        }
      }
    }

    std::string content;
    if (o->format == "csv") {
      content = render_csv(table);
    } else if (o->format == "json") {
      ResultTable cross;
      cross.columns = {"crossover"};
      for (const std::string& c : crossovers) cross.add_row({c});
      ResultTable pp_table;
      pp_table.columns = {"pp_auto"};
      for (const std::string& n : pp_notes) pp_table.add_row({n});
      ResultTable tie_table;
      tie_table.columns = {"tie"};
      for (const std::string& t : ties) tie_table.add_row({t});
      content = render_json(
          OutputContext{"recommend", catalog_dir, {o->scenario}},
          {{"rows", &table}, {"crossovers", &cross}, {"pp_auto", &pp_table}, {"ties", &tie_table}});
    } else {
      ResultTable brief;
      brief.columns = {"nodes",
                       "pp",
                       "mb",
                       "dispatcher",
                       "status",
                       "predicted_iter_s",
                       "predicted_lo_s",
                       "predicted_hi_s",
                       "novelty_level",
                       "a2a_terms",
                       "behind_winner_pct",
                       "behind_beyond_uncertainty"};
      // A status other than "ok" is a footnote number in the table, its full text below it (a reason
      // is never cut).
      std::vector<std::string> reasons;
      for (const auto& r : table.rows) {
        std::vector<Cell> b;
        for (const std::string& c : brief.columns) {
          Cell cell = r[table.column(c)];
          if (c == "status" && cell.text != "ok") {
            auto it = std::find(reasons.begin(), reasons.end(), cell.text);
            if (it == reasons.end()) it = reasons.insert(reasons.end(), cell.text);
            const std::string kind = cell.text.rfind("invalid", 0) == 0 ? "invalid" : "does not fit";
            cell.text = kind + " [" + std::to_string(it - reasons.begin() + 1) + "]";
          }
          b.push_back(cell);
        }
        brief.add_row(std::move(b));
      }
      std::string footnotes;
      for (std::size_t k = 0; k < reasons.size(); ++k) {
        footnotes += "  [" + std::to_string(k + 1) + "] " + reasons[k] + "\n";
      }
      content = render_key_values({{"scenario", o->scenario},
                                   {"model / instance", base.model.name + " on " + base.instance.name},
                                   {"profile", profile_label(profile)}}) +
                "\n" + render_text(brief) + (footnotes.empty() ? std::string() : "\n" + footnotes) +
                (pp_notes.empty() ? std::string() : "\npp auto (--pp N to choose):\n") +
                [&pp_notes] {
                  std::string t;
                  for (const std::string& n : pp_notes) t += "  " + n + "\n";
                  return t;
                }() +
                "\nuncertainty:\n  " +
                (uncertainty >= 0
                     ? "a margin counts when it exceeds " + format_fixed(uncertainty * 100, 1) +
                           "%, the p90 error of the profile's cross-validated margins (" +
                           std::to_string(profile.cross_validated_margin.pairs) +
                           " pairs of dispatchers measured on one layout), widened where a point is new to "
                           "the fit (margin_uncertainty_pct: in proportion to its wider band)"
                     : std::string("a margin counts when the two bands do not overlap (the profile has no "
                                   "cross-validated margin errors)")) +
                "\n";
      for (const std::string& n : generic_notes) content += "  " + n + "\n";
      content += "winners:\n";
      for (const std::string& l : lines) content += "  " + l + "\n";
      content +=
          "ties, and the cheapest run that settles each (value of information: the margin's band after "
          "refitting the two dispatchers' A2A terms on the run's measured margin; iteration noise " +
          format_fixed(kIterationCv * 100, 1) +
          "%, job-to-job variation unmeasured, so the narrowed band is a lower bound; job start-up " +
          format_fixed(SettlingOptions{}.job_startup_s / 60, 0) + " min each, an assumption):\n";
      if (ties.empty()) content += "  none\n";
      for (const std::string& t : ties) content += "  " + t + "\n";
      content += "crossovers:\n";
      if (crossovers.empty()) content += "  none\n";
      for (const std::string& c : crossovers) content += "  " + c + "\n";
    }
    emit_output(content, o->out);
    // Nothing to recommend anywhere: exit 2 with every distinct reason (the output above has the table).
    bool any_ok = false;
    std::vector<std::string> why;
    for (const Point& pt : points) {
      if (pt.status == "ok") any_ok = true;
      if (pt.status != "ok" && std::find(why.begin(), why.end(), pt.status) == why.end())
        why.push_back(pt.status);
    }
    if (!any_ok) {
      std::string message = "no dispatcher is valid at any point (nodes x pp x mb):";
      for (const std::string& w : why) message += "\n  " + w;
      for (const std::string& n : pp_notes) message += "\n  pp auto: " + n;
      throw InputError({o->scenario, 0}, message);
    }
  });
}

}  // namespace moetwin::cli
