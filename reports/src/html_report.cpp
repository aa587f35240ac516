#include "moetwin/reports/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "moetwin/common/concat.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/numbers.hpp"
#include "moetwin/common/version.hpp"
#include "moetwin/reports/compare_summary.hpp"
#include "moetwin/reports/readable_numbers.hpp"
#include "moetwin/reports/report_figures.hpp"

namespace moetwin {
namespace {

constexpr std::size_t kMaxTableRows = 500;

bool is_true(const std::string& s) {
  return s == "true" || s == "1" || s == "yes";
}

// A column name escaped for HTML, with a break opportunity after each underscore, so a narrow column wraps
// "predicted_iter_s" as "predicted_ / iter_s" rather than inside a word.
std::string header_with_breaks(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += html_escape(std::string(1, c));
    if (c == '_') out += "<wbr>";
  }
  return out;
}

// The Pareto figure's caption: what is drawn, then each numbered front point by name with its days and
// cost, and which one is the recommendation.
std::string pareto_caption(const ParetoFigure& f) {
  std::string c = "Plan: time to train vs " + f.cost_label +
                  "; the line is the Pareto front, its points numbered from the fastest, the square the "
                  "recommendation" +
                  (f.deadline_days > 0 ? ", the dashed line the deadline." : "; no deadline was given.");
  for (std::size_t i = 0; i < f.front_days.size(); ++i) {
    const bool recommended =
        f.has_recommended && f.front_days[i] == f.recommended_days && f.front_cost[i] == f.recommended_cost;
    const bool usd = f.cost_label == "cost (USD)";
    c += " " + std::to_string(i + 1) + ": " + f.front_labels[i] + " (" +
         readable_cell(format_fixed(f.front_days[i], 6)) + " days, " + (usd ? "USD " : "") +
         format_fixed(f.front_cost[i], 0) + (usd ? "" : " node-hours") + ")" +
         (recommended ? ", recommended" : "") + ".";
  }
  return c;
}

std::string pct(double fraction) {
  return format_fixed(fraction * 100, 1) + "%";
}

// The deadline of a plan input in days: its JSON summary's or CSV header's, else a deadline_days column;
// 0 when none was given (or not recorded).
double deadline_of(const ReportInput& in) {
  double d = in.deadline_days.empty() ? 0 : std::strtod(in.deadline_days.c_str(), nullptr);
  if (in.deadline_days.empty() && !in.rows.empty()) d = in.number(0, {"deadline_days"});
  return std::isfinite(d) && d > 0 ? d : 0;
}

// "band 6.1 to 9.2 s; covered" or "...; configuration (scale=64 nodes)": a row's band and novelty.
std::string band_and_novelty(const ReportInput& in, std::size_t r) {
  std::string s;
  const std::string& lo = in.cell(r, {"predicted_lo_s", "lo_s", "iteration_lo_s"});
  const std::string& hi = in.cell(r, {"predicted_hi_s", "hi_s", "iteration_hi_s"});
  if (!lo.empty() && !hi.empty()) s = "80% band " + lo + " to " + hi + " s per iteration";
  const std::string& level = in.cell(r, {"novelty_level"});
  if (!level.empty()) {
    const std::string& dims = in.cell(r, {"novelty"});
    s += (s.empty() ? "" : "; novelty ") + level + (dims.empty() ? "" : " (new to the fit: " + dims + ")");
  }
  return s;
}

// Columns shown in the report's table per kind (those present, in this order); all when none is.
std::vector<std::string> table_columns(const ReportInput& in) {
  std::vector<std::string> wanted;
  switch (in.kind) {
    case ReportKind::compare:
      wanted = compare_table_columns();
      break;
    case ReportKind::plan:
      wanted = {"rank",
                "nodes",
                "tp",
                "pp",
                "vpp",
                "ep",
                "dp",
                "mb",
                "recompute",
                "overlap",
                "dispatcher",
                "predicted_iter_s",
                "predicted_lo_s",
                "predicted_hi_s",
                "lo_s",
                "hi_s",
                "days",
                "days_lo",
                "days_hi",
                "node_hours",
                "cost_usd",
                "meets_deadline",
                "pareto",
                "recommended",
                "runner_up",
                "margin_pct",
                "margin_exceeds_uncertainty",
                "novelty_level",
                "novelty",
                "memory_gib",
                "within_hbm_headroom",
                "settle_with",
                "settle_node_hours"};
      // A plan without a deadline has no deadline column: every option "meets" it.
      if (deadline_of(in) <= 0) wanted.erase(std::find(wanted.begin(), wanted.end(), "meets_deadline"));
      break;
    case ReportKind::recommend:
      wanted = {"model",
                "instance",
                "nodes",
                "pp",
                "mb",
                "dispatcher",
                "predicted_iter_s",
                "predicted_lo_s",
                "predicted_hi_s",
                "lo_s",
                "hi_s",
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
                "settle_margin_after_pct",
                "memory_gib",
                "within_hbm_headroom"};
      break;
    case ReportKind::validate:
      wanted = {"campaign",
                "model",
                "instance",
                "nodes",
                "mb",
                "vpp",
                "dispatcher",
                "iter_s",
                "predicted_iter_s",
                "error_pct",
                "predicted_lo_s",
                "predicted_hi_s",
                "novelty_level",
                "novelty",
                "tflops_gpu",
                "predicted_tflops_gpu"};
      break;
    case ReportKind::sweep:
      wanted = {"point",
                "status",
                "model",
                "instance",
                "nodes",
                "tp",
                "pp",
                "vpp",
                "ep",
                "micro_batch",
                "dispatcher",
                "iteration_s",
                "predicted_lo_s",
                "predicted_hi_s",
                "iteration_lo_s",
                "iteration_hi_s",
                "novelty_level",
                "novelty",
                "memory_gib",
                "fits",
                "error"};
      break;
    case ReportKind::predict:
      wanted = {"scenario",
                "predicted_iter_s",
                "predicted_lo_s",
                "predicted_hi_s",
                "iteration_lo_s",
                "iteration_hi_s",
                "novelty_level",
                "novelty",
                "novelty_distance",
                "predicted_tokens_s",
                "predicted_tflops_gpu",
                "memory_gib",
                "hbm_gib",
                "within_hbm_headroom",
                "fits",
                "compute_source",
                "collective_source"};
      break;
  }
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    if (in.has(w)) out.push_back(w);
  }
  return out.empty() ? in.columns : out;
}

std::string layout_of(const ReportInput& in, std::size_t r) {
  std::string s;
  for (const char* k : {"tp", "pp", "vpp", "ep", "dp"}) {
    const std::string& v = in.cell(r, {k});
    if (!v.empty()) s += std::string(s.empty() ? "" : " ") + k + v;
  }
  const std::string& mb = in.cell(r, {"mb", "micro_batch"});
  if (!mb.empty()) s += " mb" + mb;
  const std::string& rc = in.cell(r, {"recompute"});
  if (!rc.empty()) s += " recompute " + rc;
  return s;
}

std::string seeds_of(const std::vector<ReportInput>& inputs) {
  std::set<std::string> seeds;
  for (const ReportInput& in : inputs) {
    for (std::size_t r = 0; r < in.rows.size(); ++r) {
      const std::string& s = in.cell(r, {"routing_seed", "seed"});
      if (!s.empty()) seeds.insert(s);
    }
  }
  if (seeds.empty()) return "not recorded in the inputs (moetwin scenarios default to routing seed 1)";
  std::string out;
  for (const std::string& s : seeds) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string profile_of(const std::vector<ReportInput>& inputs, const ReportOptions& options) {
  if (!options.profile.empty()) return options.profile;
  std::set<std::string> profiles;
  for (const ReportInput& in : inputs) {
    if (!in.profile.empty()) profiles.insert(in.profile);
  }
  if (profiles.empty()) {
    return "not recorded in the inputs (CSV outputs written before 2026-12-04 carry no context: write them "
           "again, or name the profile with --profile-label)";
  }
  std::string out;
  for (const std::string& p : profiles) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::vector<std::pair<std::string, std::string>> context_rows(const std::vector<ReportInput>& inputs,
                                                              const ReportOptions& options) {
  return {{"moetwin", std::string(kVersion) + " (" + kGitRevision + ")"},
          {"profile", profile_of(inputs, options)},
          {"routing seed", seeds_of(inputs)}};
}

std::string input_origin(const ReportInput& in) {
  if (in.moetwin_version.empty()) return "not recorded (CSV; --format json records version and profile)";
  return "moetwin " + in.moetwin_version + (in.git_revision.empty() ? "" : " (" + in.git_revision + ")");
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string base64_encode(const std::string& bytes) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const unsigned v =
        (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string date_line(const std::string& generated_utc) {
  return "<p class=\"generated\">Generated " + html_escape(generated_utc) + "</p>";
}

std::vector<std::string> summary_lines(const ReportInput& in) {
  std::vector<std::string> out;
  const std::size_t n = in.rows.size();
  switch (in.kind) {
    case ReportKind::compare:
      out = compare_summary_lines(in);
      break;
    case ReportKind::plan: {
      std::size_t pareto = 0;
      for (std::size_t r = 0; r < n; ++r) pareto += is_true(in.cell(r, {"pareto"})) ? 1 : 0;
      out.push_back(std::to_string(n) + " options predicted, " + std::to_string(pareto) +
                    " on the Pareto front.");
      bool found = false;
      for (std::size_t r = 0; r < n; ++r) {
        if (!is_true(in.cell(r, {"recommended"}))) continue;
        found = true;
        const std::string& cost = in.cell(r, {"cost_usd"});
        std::string line = "Recommended: " + in.cell(r, {"nodes"}) + " nodes, " + layout_of(in, r) + ", " +
                           in.cell(r, {"dispatcher"}) + ": " + in.cell(r, {"days"}) + " days (" +
                           in.cell(r, {"days_lo"}) + " to " + in.cell(r, {"days_hi"}) + "), " +
                           in.cell(r, {"node_hours"}) + " node-hours" +
                           (cost.empty() ? "" : ", USD " + cost) + ".";
        out.push_back(line);
        if (const std::string b = band_and_novelty(in, r); !b.empty())
          out.push_back("Uncertainty: " + b + ".");
        if (in.has("memory_gib") && in.has("hbm_gib")) {
          out.push_back("Memory: " + in.cell(r, {"memory_gib"}) + " of " + in.cell(r, {"hbm_gib"}) +
                        " GiB per GPU" +
                        (in.has("within_hbm_headroom")
                             ? (is_true(in.cell(r, {"within_hbm_headroom"})) ? ", within the HBM headroom."
                                                                             : ", BEYOND the HBM headroom.")
                             : "."));
        }
        if (in.has("meets_deadline") && deadline_of(in) > 0) {
          out.push_back(is_true(in.cell(r, {"meets_deadline"}))
                            ? "It meets the deadline (central estimate)" +
                                  std::string(is_true(in.cell(r, {"meets_deadline_pessimistic"}))
                                                  ? ", also at the slow end of the band."
                                                  : "; the slow end of the band does not.")
                            : "No option meets the deadline: this is the fastest.");
        }
        const std::string& runner = in.cell(r, {"runner_up"});
        if (!runner.empty()) {
          out.push_back("Dispatcher " + in.cell(r, {"dispatcher"}) + " beats " + runner + " by " +
                        in.cell(r, {"margin_pct"}) + "%" +
                        (is_true(in.cell(r, {"margin_exceeds_uncertainty"})) ? ", beyond the uncertainty."
                                                                             : ", within the uncertainty."));
        }
        if (const std::string& settle = in.cell(r, {"settle_with"}); !settle.empty())
          out.push_back("Settling run: " + settle + ".");
      }
      if (!found) out.push_back("No recommended option: nothing fits (run plan --explain).");
      break;
    }
    case ReportKind::recommend: {
      for (std::size_t r = 0; r < n && out.size() < 24; ++r) {
        const std::string& w = in.cell(r, {"winner"});
        const bool winner_row = (w == "true" || w == "1") || (w == in.cell(r, {"dispatcher"}));
        if (!winner_row) continue;
        std::string line = in.cell(r, {"model"}) + " on " + in.cell(r, {"nodes"}) + " x " +
                           in.cell(r, {"instance"}) + (in.has("mb") ? ", mb " + in.cell(r, {"mb"}) : "") +
                           ": " + in.cell(r, {"dispatcher"}) + " (" + in.cell(r, {"predicted_iter_s"}) +
                           " s)";
        if (in.has("behind_winner_pct") && in.has("behind_beyond_uncertainty")) {
          // recommend since 2026-12-01: every other dispatcher of the point is a tie or behind beyond the
          // uncertainty; the point's rows share nodes and mb.
          std::string tied, behind;
          for (std::size_t k = 0; k < n; ++k) {
            if (k == r || in.cell(k, {"nodes"}) != in.cell(r, {"nodes"}) ||
                (in.has("mb") && in.cell(k, {"mb"}) != in.cell(r, {"mb"})) ||
                in.cell(k, {"behind_winner_pct"}).empty())
              continue;
            std::string& list = is_true(in.cell(k, {"behind_beyond_uncertainty"})) ? behind : tied;
            list += (list.empty() ? "" : ", ") + in.cell(k, {"dispatcher"}) + " +" +
                    in.cell(k, {"behind_winner_pct"}) + "%";
          }
          line += "; tied within the uncertainty" +
                  (in.cell(r, {"margin_uncertainty_pct"}).empty()
                       ? std::string()
                       : " (margin uncertainty " + in.cell(r, {"margin_uncertainty_pct"}) + "%)") +
                  ": " + (tied.empty() ? std::string("none") : tied) +
                  "; behind beyond it: " + (behind.empty() ? std::string("none") : behind) + ".";
        } else {
          line += ", ahead by " + in.cell(r, {"margin_pct"}) + "%" +
                  (is_true(in.cell(r, {"margin_exceeds_uncertainty"})) ? ", beyond the uncertainty."
                                                                       : ", within the uncertainty.");
        }
        if (const std::string b = band_and_novelty(in, r); !b.empty()) line += " " + b + ".";
        out.push_back(line);
        // The settling run of the point's tie (on the rows of the dispatchers it measures).
        for (std::size_t k = 0; k < n; ++k) {
          if (in.cell(k, {"nodes"}) != in.cell(r, {"nodes"}) ||
              (in.has("mb") && in.cell(k, {"mb"}) != in.cell(r, {"mb"})))
            continue;
          if (const std::string& settle = in.cell(k, {"settle_with"}); !settle.empty()) {
            out.push_back("  Settling run: " + settle + ".");
            break;
          }
        }
      }
      if (out.empty()) out.push_back(std::to_string(n) + " rows, no winner marked.");
      break;
    }
    case ReportKind::validate: {
      std::vector<double> abs_err;
      double worst = 0;
      std::size_t worst_row = 0;
      for (std::size_t r = 0; r < n; ++r) {
        const double e = in.number(r, {"error_pct"});
        if (!std::isfinite(e)) continue;
        abs_err.push_back(std::fabs(e));
        if (std::fabs(e) > std::fabs(worst)) {
          worst = e;
          worst_row = r;
        }
      }
      if (abs_err.empty()) {
        out.push_back(std::to_string(n) + " rows, no error_pct values.");
        break;
      }
      std::vector<double> sorted = abs_err;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted.size() % 2
                                ? sorted[sorted.size() / 2]
                                : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
      const auto within = [&](double lim) {
        return std::count_if(abs_err.begin(), abs_err.end(), [lim](double e) { return e <= lim + 1e-9; });
      };
      const std::string total = std::to_string(abs_err.size());
      out.push_back(total + " runs: median |error| " + format_fixed(median, 1) +
                    "%; within 10%: " + std::to_string(within(10)) + " of " + total +
                    ", within 20%: " + std::to_string(within(20)) + " of " + total + ".");
      out.push_back("Worst: " + in.cell(worst_row, {"campaign"}) + " " + in.cell(worst_row, {"dispatcher"}) +
                    " (" + format_fixed(worst, 1) + "%).");
      break;
    }
    case ReportKind::sweep: {
      std::map<std::string, int> status;
      double best = 0;
      std::size_t best_row = 0;
      int over_hbm = 0;
      for (std::size_t r = 0; r < n; ++r) {
        const std::string& s = in.cell(r, {"status"});
        ++status[s];
        const double t = in.number(r, {"iteration_s", "predicted_iter_s"});
        if (!in.fits(r)) ++over_hbm;
        if (s == "ok" && in.fits(r) && std::isfinite(t) && (best == 0 || t < best)) {
          best = t;
          best_row = r;
        }
      }
      std::string line = std::to_string(n) + " points:";
      for (const auto& [s, count] : status) line += " " + s + " " + std::to_string(count) + ";";
      if (over_hbm > 0) {
        line += " " + std::to_string(over_hbm) +
                " do not fit in HBM (fits = false: left out of the fastest and the figures);";
      }
      out.push_back(line);
      if (best > 0) {
        out.push_back("Fastest point: " + in.cell(best_row, {"point"}) + " (" + in.cell(best_row, {"model"}) +
                      " on " + in.cell(best_row, {"nodes"}) + " x " + in.cell(best_row, {"instance"}) + ", " +
                      layout_of(in, best_row) + ", " + in.cell(best_row, {"dispatcher"}) +
                      "): " + format_fixed(best, 3) + " s per iteration.");
      }
      break;
    }
    case ReportKind::predict: {
      for (std::size_t r = 0; r < n; ++r) {
        out.push_back(in.cell(r, {"scenario"}) + ": " + in.cell(r, {"predicted_iter_s"}) +
                      " s per iteration, " + in.cell(r, {"predicted_tokens_s"}) + " tokens/s, " +
                      in.cell(r, {"predicted_tflops_gpu"}) + " model TFLOP/s per GPU.");
        if (const std::string b = band_and_novelty(in, r); !b.empty())
          out.push_back("Uncertainty: " + b + ".");
      }
      break;
    }
  }
  return out;
}

std::vector<ReportFigureSpec> report_figures(const std::vector<ReportInput>& inputs) {
  std::vector<ReportFigureSpec> out;
  auto add = [&out](std::string id, std::string caption, GnuplotJob svg, GnuplotJob png) {
    out.push_back({std::move(id), std::move(caption), std::move(svg), std::move(png)});
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<NodesFigure> figs = nodes_figures(inputs[i]);
    for (std::size_t k = 0; k < figs.size(); ++k) {
      std::string caption =
          "Iteration time vs nodes per dispatcher, " + figs[k].title +
          " (fastest layout of each node count; shaded, or bars at a single node count: uncertainty band).";
      for (const Crossover& c : figs[k].crossovers) {
        caption += " Crossover near " + format_fixed(c.x, 1) + " nodes: " + c.faster_after + " overtakes " +
                   c.faster_before + ".";
      }
      add("nodes-" + std::to_string(i + 1) + "-" + std::to_string(k + 1), caption,
          nodes_job(figs[k], FigureFormat::svg), nodes_job(figs[k], FigureFormat::png));
    }
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const BreakdownFigure f = breakdown_figure(inputs[i]);
    if (f.bars.empty()) continue;
    std::string caption =
        "Time breakdown per iteration (" + std::string(to_string(inputs[i].kind)) +
        ": maxima over ranks, so the stack can exceed the iteration time; the black bar "
        "across each stack is the predicted iteration" +
        (inputs[i].kind == ReportKind::validate ? ", the red dashed one the measured)." : ").");
    if (f.usable_rows > f.bars.size()) {
      caption.append(" The first ")
          .append(std::to_string(f.bars.size()))
          .append(" of ")
          .append(std::to_string(f.usable_rows))
          .append(" rows; the table below lists them all.");
    }
    add("breakdown-" + std::to_string(i + 1), caption, breakdown_job(f, FigureFormat::svg),
        breakdown_job(f, FigureFormat::png));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ScatterFigure f = scatter_figure(inputs[i]);
    if (f.measured.empty()) continue;
    add("scatter-" + std::to_string(i + 1),
        "Predicted vs measured iteration time: " + pct(f.within10) + " of runs within 10%, " +
            pct(f.within20) + " within 20%.",
        scatter_job(f, FigureFormat::svg), scatter_job(f, FigureFormat::png));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ParetoFigure f = pareto_figure(inputs[i]);
    if (f.days.empty()) continue;
    add("pareto-" + std::to_string(i + 1), pareto_caption(f), pareto_job(f, FigureFormat::svg),
        pareto_job(f, FigureFormat::png));
  }
  return out;
}

std::string render_html_report(const std::vector<ReportInput>& inputs, const ReportOptions& options) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(options.title) + "</title>\n";
  h += "<style>\n"
       "body { font-family: 'DejaVu Sans', Arial, sans-serif; max-width: 1100px; margin: 2em auto; color: "
       "#222; }\n"
       "h1, h2, h3 { font-weight: 600; }\n"
       "table { border-collapse: collapse; font-size: 0.75em; margin: 0.5em 0 1.5em; }\n"
       "th, td { border: 1px solid #ccc; padding: 2px 4px; text-align: right; }\n"
       "th { min-width: 3em; hyphens: none; }\n"
       ".wide { max-width: 100%; overflow-x: auto; }\n"
       "th { background: #f0f0f0; }\n"
       "td.text { text-align: left; white-space: nowrap; }\n"
       "td.long { min-width: 22em; max-width: 40em; white-space: normal; }\n"
       "figure { margin: 1em 0 2em; }\n"
       "figure img { width: 100%; max-width: 900px; border: 1px solid #eee; }\n"
       "figcaption { font-size: 0.9em; color: #444; }\n"
       ".summary li { margin: 0.2em 0; }\n"
       ".generated { color: #666; font-size: 0.85em; }\n"
       "</style>\n</head>\n<body>\n";
  h += "<h1>" + html_escape(options.title) + "</h1>\n";
  h += "<section id=\"summary\">\n<h2>Summary and recommendation</h2>\n";
  for (const ReportInput& in : inputs) {
    h += "<h3>" + html_escape(std::string(to_string(in.kind)) + ": " + in.path) +
         "</h3>\n<ul class=\"summary\">\n";
    for (const std::string& line : summary_lines(in))
      h += "<li>" + html_escape(shorten_long_decimals(line)) + "</li>\n";
    h += "<li>Profile: " +
         html_escape(in.profile.empty() ? std::string("not recorded in this input") : in.profile) +
         "</li>\n</ul>\n";
  }
  h += "</section>\n<section id=\"figures\">\n<h2>Figures</h2>\n";
  const std::vector<ReportFigureSpec> figures = report_figures(inputs);
  if (figures.empty()) h += "<p>The inputs give no figure.</p>\n";
  for (const ReportFigureSpec& f : figures) {
    const std::string svg = run_gnuplot(f.svg);
    h += "<figure id=\"" + f.id + "\">\n<img alt=\"" + html_escape(f.caption) +
         "\" src=\"data:image/svg+xml;base64," + base64_encode(svg) + "\">\n<figcaption>" +
         html_escape(f.caption) + "</figcaption>\n</figure>\n";
  }
  h += "</section>\n<section id=\"tables\">\n<h2>Tables</h2>\n";
  for (const ReportInput& in : inputs) {
    const std::vector<std::string> cols = table_columns(in);
    // Tables wider than the page scroll inside their own box; column names break only after an underscore
    // (predicted_ / iter_s), never inside a word.
    h += "<h3>" + html_escape(std::string(to_string(in.kind)) + ": " + in.path) +
         "</h3>\n<div class=\"wide\">\n<table>\n<tr>";
    for (const std::string& c : cols) h += "<th>" + header_with_breaks(c) + "</th>";
    h += "</tr>\n";
    for (std::size_t r = 0; r < in.rows.size() && r < kMaxTableRows; ++r) {
      h += "<tr>";
      for (const std::string& c : cols) {
        const std::string& v = in.cell(r, {c});
        const bool numeric = std::isfinite(in.number(r, {c}));
        // Long text (novelty, settling runs) gets a column wide enough to read in a few lines, rather than
        // a narrow one that makes every row tall.
        const char* cls = numeric         ? "<td>"
                          : v.size() > 30 ? "<td class=\"text long\">"
                                          : "<td class=\"text\">";
        h += std::string(cls) + html_escape(readable_cell(v)) + "</td>";
      }
      h += "</tr>\n";
    }
    h += "</table>\n</div>\n";
    if (in.rows.size() > kMaxTableRows) {
      h += "<p>First " + std::to_string(kMaxTableRows) + " of " + std::to_string(in.rows.size()) +
           " rows; the input file has them all.</p>\n";
    }
    h += "<p class=\"generated\">Numbers to 4 significant figures; the input file has every digit.</p>\n";
  }
  h += "</section>\n<section id=\"context\">\n<h2>Context</h2>\n<table>\n";
  for (const auto& [k, v] : context_rows(inputs, options)) {
    h += "<tr><th>" + html_escape(k) + "</th><td class=\"text\">" + html_escape(v) + "</td></tr>\n";
  }
  h += "</table>\n<table>\n<tr><th>input</th><th>kind</th><th>rows</th><th>sha256</th><th>written "
       "by</th></tr>\n";
  for (const ReportInput& in : inputs) {
    h += "<tr><td class=\"text\">" + html_escape(in.path) + "</td><td class=\"text\">" + to_string(in.kind) +
         "</td><td>" + std::to_string(in.rows.size()) + "</td><td class=\"text\"><code>" + in.sha256 +
         "</code></td><td class=\"text\">" + html_escape(input_origin(in)) + "</td></tr>\n";
  }
  h += "</table>\n" + date_line(options.generated_utc) + "\n</section>\n</body>\n</html>\n";
  return h;
}

void write_markdown_report(const std::vector<ReportInput>& inputs, const ReportOptions& options,
                           const std::string& dir) {
  // The folder itself is created (it is the output, as --out's file is), its parent must exist: a typo in a
  // path is reported as --out reports it, not turned into a new tree.
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (fs::exists(dir, ec)) throw InputError({dir, 0}, "is a file, expected a folder for report.md");
    check_output_path(dir);  // its parent folder exists
    fs::create_directory(dir, ec);
    if (ec) throw InputError({dir, 0}, concat({"cannot create the folder: ", ec.message()}));
  }
  // Every text from an input (campaign and scenario names, paths, titles) is escaped like the HTML
  // report's: a Markdown viewer renders raw HTML, so "<script>" from a campaign name would run (issue 55).
  // '|' would end a table cell, a newline the list item.
  auto md_escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '|')
        out += "\\|";
      else if (c == '<')
        out += "&lt;";
      else if (c == '>')
        out += "&gt;";
      else if (c == '&')
        out += "&amp;";
      else if (c == '\n' || c == '\r')
        out += ' ';
      else
        out += c;
    }
    return out;
  };
  std::string m = "# " + md_escape(options.title) + "\n\n## Summary and recommendation\n\n";
  for (const ReportInput& in : inputs) {
    m += "### " + std::string(to_string(in.kind)) + ": " + md_escape(in.path) + "\n\n";
    for (const std::string& line : summary_lines(in))
      m += "- " + md_escape(shorten_long_decimals(line)) + "\n";
    m += "- Profile: " +
         md_escape(in.profile.empty() ? std::string("not recorded in this input") : in.profile) + "\n\n";
  }
  m += "## Figures\n\n";
  for (const ReportFigureSpec& f : report_figures(inputs)) {
    write_file_atomically(dir + "/" + f.id + ".png", run_gnuplot(f.png));
    m += "![" + f.id + "](" + f.id + ".png)\n\n" + md_escape(f.caption) + "\n\n";
  }
  m += "## Tables\n\n";
  for (const ReportInput& in : inputs) {
    const std::vector<std::string> cols = table_columns(in);
    m += "### " + std::string(to_string(in.kind)) + ": " + md_escape(in.path) + "\n\n|";
    // Not " " + md_escape(...): GCC 12 -O3 -Wrestrict false positive (moetwin/common/concat.hpp).
    for (const std::string& c : cols) m.append(" ").append(md_escape(c)).append(" |");
    m += "\n|";
    for (std::size_t i = 0; i < cols.size(); ++i) m += "---|";
    m += "\n";
    for (std::size_t r = 0; r < in.rows.size() && r < kMaxTableRows; ++r) {
      m += "|";
      for (const std::string& c : cols)
        m.append(" ").append(md_escape(readable_cell(in.cell(r, {c})))).append(" |");
      m += "\n";
    }
    m += "\n";
  }
  m += "## Context\n\n";
  for (const auto& [k, v] : context_rows(inputs, options))
    m += "- " + md_escape(k) + ": " + md_escape(v) + "\n";
  for (const ReportInput& in : inputs) {
    m += "- input " + md_escape(in.path) + " (" + to_string(in.kind) + ", " + std::to_string(in.rows.size()) +
         " rows): sha256 " + in.sha256 + "\n";
  }
  m += "\nGenerated " + options.generated_utc + "\n";
  write_file_atomically(dir + "/report.md", m);
}

}  // namespace moetwin
