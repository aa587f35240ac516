#include "moetwin/planning/compare_report.hpp"

#include "moetwin/accounting/hbm_headroom.hpp"
#include "moetwin/common/concat.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/planning/scenario_choices.hpp"

namespace moetwin {

namespace {

std::string verdict(const ComparePair& p) {
  return p.beyond ? "beyond the uncertainty" : "within the uncertainty";
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : separator) + i;
  return out;
}

std::string signed_pct(double fraction) {
  return concat({fraction >= 0 ? "+" : "", format_fixed(fraction * 100, 1), "%"});
}

// "117.9 GiB 90%" ('!' beyond the HBM headroom, "!!" beyond HBM), as plan's memory column.
std::string memory_text(const CompareEntry& e) {
  return concat({format_fixed(e.memory_bytes / kGiB, 1), " GiB ",
                 format_fixed(e.hbm_bytes > 0 ? e.memory_bytes / e.hbm_bytes * 100 : 0, 0), "%",
                 e.fits ? (e.within_headroom ? "" : "!") : "!!"});
}

}  // namespace

ResultTable comparison_table(const Comparison& c) {
  ResultTable t;
  t.columns = {"label",
               "scenario",
               "model",
               "instance",
               "nodes",
               "gpus",
               "tp",
               "pp",
               "vpp",
               "ep",
               "dp",
               "mb",
               "gbs",
               "recompute",
               "precision",
               "dispatcher",
               "routing",
               "stack",
               "predicted_iter_s",
               "predicted_lo_s",
               "predicted_hi_s",
               "novelty_level",
               "novelty",
               "a2a_terms",
               "predicted_tokens_s",
               "predicted_tflops_gpu",
               "node_hours_per_1e9_tokens",
               "reference",
               "differs",
               "difference_s",
               "ratio",
               "ratio_lo",
               "ratio_hi",
               "own_ratio_lo",
               "own_ratio_hi",
               "ratio_uncertainty_pct",
               "verdict",
               "band_source",
               "settle_with",
               "settle_node_hours",
               "memory_gib",
               "hbm_gib",
               "fits_hbm",
               "within_hbm_headroom",
               "memory_warning",
               "memory_note"};
  for (std::size_t k = 0; k < c.entries.size(); ++k) {
    const CompareEntry& e = c.entries[k];
    const Scenario& s = e.scenario;
    std::vector<Cell> row = {e.label,
                             s.name,
                             s.model.name,
                             s.instance.name,
                             Cell::integer(s.nodes),
                             Cell::integer(s.gpus()),
                             Cell::integer(s.parallel.tp),
                             Cell::integer(s.parallel.pp),
                             Cell::integer(s.parallel.vpp),
                             Cell::integer(s.parallel.ep),
                             Cell::integer(s.parallel.dp),
                             Cell::integer(s.training.micro_batch),
                             Cell::integer(s.training.global_batch),
                             to_string(s.training.recompute),
                             to_string(s.training.precision),
                             s.dispatcher.name,
                             routing_choice_text(s.routing),
                             s.stack.spec.name,
                             Cell::fixed(e.iteration_s, 6),
                             Cell::fixed(e.spread.band.lo_s, 6),
                             Cell::fixed(e.spread.band.hi_s, 6),
                             e.novelty_level,
                             e.novelty,
                             e.a2a_terms,
                             Cell::fixed(e.tokens_per_s, 1),
                             Cell::fixed(e.tflops_per_gpu, 2),
                             Cell::fixed(e.node_hours_per_gtoken, 4),
                             c.entries[0].label};
    if (k == 0) {
      row.insert(row.end(), {Cell(""), Cell::fixed(0, 6), Cell::fixed(1, 4), Cell::fixed(1, 4),
                             Cell::fixed(1, 4), Cell::fixed(1, 4), Cell::fixed(1, 4), Cell(""),
                             Cell("reference"), Cell(""), Cell(""), Cell("")});
      row.insert(row.end(),
                 {Cell::fixed(e.memory_bytes / kGiB, 2), Cell::fixed(e.hbm_bytes / kGiB, 2),
                  Cell::boolean(e.fits), Cell::boolean(e.within_headroom), e.memory_warning, Cell("")});
    } else {
      const ComparePair& p = c.pairs[k - 1];
      row.insert(
          row.end(),
          {joined(p.differs, ";"), Cell::fixed(p.difference_s, 6), Cell::fixed(p.ratio, 4),
           Cell::fixed(p.ratio_lo, 4), Cell::fixed(p.ratio_hi, 4), Cell::fixed(p.own_lo, 4),
           Cell::fixed(p.own_hi, 4), p.uncertainty >= 0 ? Cell::fixed(p.uncertainty * 100, 2) : Cell(""),
           verdict(p), p.band_source, p.settle_with,
           p.settle_with.empty() || p.settle_node_hours <= 0 ? Cell("")
                                                             : Cell::fixed(p.settle_node_hours, 2)});
      row.insert(row.end(),
                 {Cell::fixed(e.memory_bytes / kGiB, 2), Cell::fixed(e.hbm_bytes / kGiB, 2),
                  Cell::boolean(e.fits), Cell::boolean(e.within_headroom), e.memory_warning, p.memory_note});
    }
    t.add_row(std::move(row));
  }
  return t;
}

std::string render_comparison_text(const Comparison& c) {
  ResultTable brief;
  brief.columns = {"",       "label",    "predicted_iter_s", "band_s",          "novelty_level",
                   "memory", "vs_first", "ratio_band_80pct", "own_bands_ratio", "verdict"};
  for (std::size_t k = 0; k < c.entries.size(); ++k) {
    const CompareEntry& e = c.entries[k];
    std::vector<Cell> row = {Cell(k == 0 ? "ref" : std::to_string(k)),
                             e.label,
                             Cell::fixed(e.iteration_s, 3),
                             format_fixed(e.spread.band.lo_s, 2) + ".." + format_fixed(e.spread.band.hi_s, 2),
                             e.novelty_level,
                             memory_text(e)};
    if (k == 0) {
      row.insert(row.end(), {Cell("-"), Cell("-"), Cell("-"), Cell("reference")});
    } else {
      const ComparePair& p = c.pairs[k - 1];
      row.insert(row.end(), {concat({signed_pct(p.ratio - 1), " (", p.difference_s >= 0 ? "+" : "",
                                     format_fixed(p.difference_s, 3), " s)"}),
                             format_fixed(p.ratio_lo, 3) + ".." + format_fixed(p.ratio_hi, 3),
                             format_fixed(p.own_lo, 3) + ".." + format_fixed(p.own_hi, 3), verdict(p)});
    }
    brief.add_row(std::move(row));
  }
  int beyond = 0;
  for (const CompareEntry& e : c.entries) beyond += e.within_headroom ? 0 : 1;
  const std::string memory =
      concat({"most loaded stage per GPU; '!' beyond the ", format_fixed(c.memory.hbm_headroom * 100, 0),
              "% HBM headroom (--hbm-headroom), '!!' does not fit",
              c.memory.ignore_memory ? " (--ignore-memory)" : "",
              beyond > 0 ? concat({": ", std::to_string(beyond), " of ", std::to_string(c.entries.size()),
                                   " scenarios (warnings below)"})
                         : std::string(": every scenario within it")});
  std::string out =
      render_key_values({{"profile", c.profile}, {"reference", c.entries[0].label}, {"memory", memory}}) +
      "\n" + render_text(brief) + "\n";
  out +=
      "ratio_band_80pct: where the measured time ratio to the first is expected (80%), from the paired error "
      "of two predictions; own_bands_ratio: the same from the two predictions' own bands, as if their errors "
      "were independent\n";
  for (const ComparePair& p : c.pairs) {
    const CompareEntry& e = c.entries[p.entry];
    out += concat({"\n", e.label, " vs ", c.entries[0].label, ": ", format_fixed(p.ratio, 3), "x (80% band ",
                   format_fixed(p.ratio_lo, 3), "..", format_fixed(p.ratio_hi, 3), "), ", verdict(p), "\n"});
    out += concat(
        {"  differs in: ", p.differs.empty() ? std::string("nothing") : joined(p.differs, ", "), "\n"});
    out += concat({"  band source: ", p.band_source, "\n"});
    if (!p.settle_with.empty()) out += concat({"  settling run: ", p.settle_with, "\n"});
    if (!p.memory_note.empty()) out += concat({"  memory: ", p.memory_note, "\n"});
  }
  bool header = false;
  for (const CompareEntry& e : c.entries) {
    if (e.memory_warning.empty()) continue;
    if (!header) out += "\nmemory warnings:\n";
    header = true;
    out += concat({"  ", e.label, ": ", e.memory_warning, "\n"});
  }
  return out;
}

std::string render_comparison_json(const Comparison& c, const OutputContext& context) {
  const ResultTable table = comparison_table(c);
  return render_json(context, {{"rows", &table}});
}

}  // namespace moetwin
